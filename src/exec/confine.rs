//! Confining what a verifier runs (docs/integrity.md, "What the verifier runs"): `attest`
//! runs the PR's gates and tests, code the agent wrote, on the machine that judges it. On a
//! git server that is the server's own user, which can write the repository, its hooks, the
//! program the hooks start and every directory above them. One process per set of paths
//! (a holder, started once in a verification) makes new user, mount and network namespaces
//! where the whole filesystem is read-only but the temporary directories and the scratch
//! worktrees, and where the paths the verification names stay read-only inside those too.
//! The commands are started there by one runner per holder (src/exec/runner.rs), this
//! program, the first process of a PID namespace and a `/proc` of its own, with every
//! capability dropped, so that nothing they start can unmount or remount anything, reach
//! the network, see the verifier's processes, or outlive its command (the runner ends it).
//! Where the runner cannot start, each command enters the namespaces (`nsenter`, `unshare`,
//! `setpriv`) on its own, in a PID namespace of its own, ended with it.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io::{BufRead as _, Read as _};
use std::os::fd::{AsFd as _, BorrowedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};

/// The shell that runs the confinement's script: POSIX puts it here.
const SH: &str = "/bin/sh";

/// Where the tools are looked for: the system's, never the caller's PATH.
const SYSTEM_DIRS: &[&str] = &["/usr/bin", "/bin", "/usr/sbin", "/sbin"];

/// `setpriv`'s arguments before the program: every capability dropped (the bounding,
/// inheritable and ambient sets; root of the user namespace then gains none on exec) and new
/// privileges on exec refused, so nothing started can mount, unmount or remount anything.
const DROP_EVERY_PRIVILEGE: &[&str] = &[
    "--bounding-set",
    "-all",
    "--inh-caps",
    "-all",
    "--ambient-caps",
    "-all",
    "--no-new-privs",
    "--",
];

/// What the holder runs as root of its new namespaces: `$1`, `$2` and `$3` the numbers of
/// writable paths, read-only ones and other filesystems of the host, then the writable
/// paths, the filesystems and the read-only paths. The writable ones are bound
/// first, each a mount of its own, so that making `/` read-only leaves them as they are and
/// the recursive binds of the read-only ones inside them carry along any writable one
/// deeper still. Exit 125 when a path cannot be bound: nothing runs. Then it says `ready`
/// and waits for its input to close (the verifier is done, or gone).
const HOLDER: &str = r#"rw=$1; ro=$2; host=$3; shift 3
while [ "$rw" -gt 0 ]; do
  mount --bind "$1" "$1" || { echo "git-orchestrate: cannot bind $1 for the commands" >&2; exit 125; }
  rw=$((rw - 1)); shift
done
mount -o remount,bind,ro / || { echo "git-orchestrate: cannot make / read-only for the commands" >&2; exit 125; }
# Other filesystems: read-only where they can be made so. The server hook's probe names any
# path it depends on that stays writable (docs/integrity.md).
while [ "$host" -gt 0 ]; do
  mount --rbind -o ro "$1" "$1" 2>/dev/null
  host=$((host - 1)); shift
done
while [ "$ro" -gt 0 ]; do
  mount --rbind -o ro "$1" "$1" || { echo "git-orchestrate: cannot make $1 read-only for the commands" >&2; exit 125; }
  ro=$((ro - 1)); shift
done
echo ready
read -r _ || true"#;

/// The holder's namespaces and mounts, for one set of paths.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Layout {
    read_only: Vec<PathBuf>,
    writable: Vec<PathBuf>,
}

/// How commands are confined: cheap to clone; the clones share the holders started for them.
#[derive(Clone, Debug)]
pub struct Confinement {
    unshare: PathBuf,
    setpriv: PathBuf,
    nsenter: PathBuf,
    /// This program, which the holder starts as its runner; `None`: each command on its own.
    runner: Option<PathBuf>,
    layout: Layout,
    holders: Arc<Mutex<HashMap<Layout, Arc<Holder>>>>,
}

impl Confinement {
    /// Commands that can write only `writable` (existing paths only; the system's temporary
    /// directories, say), and not `read_only` even inside those. Fails, saying why, when
    /// this machine cannot confine a command: no `unshare`, `nsenter` or `setpriv`
    /// (util-linux), no user namespaces for this user, or a path that cannot be bound.
    pub fn new(read_only: &[PathBuf], writable: &[PathBuf]) -> Result<Confinement, String> {
        let confinement = Self::prepare(read_only, writable)?;
        confinement.probe()?;
        Ok(confinement)
    }

    /// [`Self::new`] without starting anything: the namespaces are made on the first
    /// command, or by [`Self::probe`].
    pub fn prepare(read_only: &[PathBuf], writable: &[PathBuf]) -> Result<Confinement, String> {
        let find = |name: &str| {
            SYSTEM_DIRS
                .iter()
                .map(|d| Path::new(d).join(name))
                .find(|p| p.is_file())
                .ok_or_else(|| format!("no `{name}` in {} (util-linux)", SYSTEM_DIRS.join(", ")))
        };
        Ok(Confinement {
            unshare: find("unshare")?,
            setpriv: find("setpriv")?,
            nsenter: find("nsenter")?,
            runner: std::env::current_exe()
                .ok()
                .and_then(|exe| exe.canonicalize().ok())
                // This program, not a test harness that links the library.
                .filter(|exe| {
                    exe.file_name()
                        .is_some_and(|n| n.as_encoded_bytes().starts_with(b"git-orchestrate"))
                }),
            layout: Layout {
                read_only: existing(read_only),
                writable: existing(writable),
            },
            holders: Arc::new(Mutex::new(HashMap::new())),
        })
    }

    /// Whether a command runs confined here: the holder, and one command through it, what
    /// every command will go through (its runner, where it has one); why not, if not.
    pub fn probe(&self) -> Result<(), String> {
        let probe = self.output(OsStr::new("true"), &[])?;
        if !probe.success {
            return Err(format!(
                "a confined command does not run here ({}): {}",
                probe.status,
                String::from_utf8_lossy(&probe.stderr).trim()
            ));
        }
        Ok(())
    }

    /// `program args…` run confined in `/`, its output taken: through the holder's runner
    /// when it has one (no `nsenter`, `unshare` and `setpriv` for a probe: docs/integrity.md,
    /// "What the verifier runs"), else on its own. Its environment is the system's `PATH`
    /// alone: a probe needs nothing of the verifier's.
    fn output(&self, program: &OsStr, args: &[&OsStr]) -> Result<Output, String> {
        let holder = self.holder()?;
        let Some(runner) = holder.runner.as_ref() else {
            let out = self
                .command(program, args, Path::new("/"))
                .map_err(|e| e.to_string())?
                .env_clear()
                .env("PATH", SYSTEM_DIRS.join(":"))
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .output()
                .map_err(|e| format!("cannot start {}: {e}", self.nsenter.display()))?;
            return Ok(Output {
                success: out.status.success(),
                status: out.status.to_string(),
                stdout: out.stdout,
                stderr: out.stderr,
            });
        };
        let io = |e: std::io::Error| format!("cannot run a confined command: {e}");
        let null = std::fs::File::open("/dev/null").map_err(io)?;
        let (mut out_r, out_w) = std::io::pipe().map_err(io)?;
        let (mut err_r, err_w) = std::io::pipe().map_err(io)?;
        let request = super::runner::Request {
            program,
            args: args.to_vec(),
            dir: Path::new("/"),
            env: vec![(
                OsString::from("PATH"),
                OsString::from(SYSTEM_DIRS.join(":")),
            )],
        };
        let mut running = runner
            .runner
            .spawn(&request, null.as_fd(), out_w.as_fd(), err_w.as_fd())
            .map_err(io)?;
        // Ours closed: the pipes end when the command (and its namespace) does.
        drop((out_w, err_w));
        let errors = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = err_r.read_to_end(&mut bytes);
            bytes
        });
        let mut stdout = Vec::new();
        let read = out_r.read_to_end(&mut stdout);
        let stderr = errors.join().unwrap_or_default();
        read.map_err(io)?;
        let ended = running.wait().map_err(io)?;
        Ok(Output {
            success: ended == super::runner::Ended::Code(0),
            status: match ended {
                super::runner::Ended::Code(code) => format!("exit status: {code}"),
                super::runner::Ended::Signal(signal) => format!("signal: {signal}"),
            },
            stdout,
            stderr,
        })
    }

    /// `program args…` in `dir`, confined: it enters the holder's namespaces (started on the
    /// first command of these paths), then a PID namespace and `/proc` of its own, whose
    /// first process is the command's: when it ends, the kernel ends every process it left
    /// (a `setsid` daemon included), so nothing of the PR outlives its command. Entering a
    /// mount namespace leaves a process at its root, so `dir` is entered inside it, as the
    /// namespace has it (a directory opened outside would lead out of its mounts).
    pub fn command(
        &self,
        program: &OsStr,
        args: &[&OsStr],
        dir: &Path,
    ) -> std::io::Result<Command> {
        let holder = self.holder().map_err(std::io::Error::other)?;
        let mut cmd = Command::new(&self.nsenter);
        cmd.arg(format!("--target={}", holder.pid))
            // As it is: the namespace maps this user to its root, and a user not root here
            // may not set groups there (`setgroups` is denied in it).
            .args(["--user", "--mount", "--net", "--preserve-credentials", "--"])
            .arg(&self.unshare)
            .args(["--pid", "--fork", "--kill-child", "--mount-proc"])
            .arg({
                let mut wd = OsString::from("--wd=");
                wd.push(dir.as_os_str());
                wd
            })
            .arg("--")
            .arg(&self.setpriv)
            .args(DROP_EVERY_PRIVILEGE)
            .arg(program)
            .args(args);
        Ok(cmd)
    }

    /// The holder of this confinement's paths, started when there is none yet.
    ///
    /// Holders are told apart by the mounts they make ([`plan`]), not by the paths as asked:
    /// a path inside another writable one, or under `/` when read-only, changes no mount,
    /// and the verification's commands (its paths and the scratch directory added) then
    /// share the probe's holder and runner, where each made its own (the bench's `attest`
    /// mode: a holder and a runner cost some ten processes).
    fn holder(&self) -> Result<Arc<Holder>, String> {
        let mut holders = self.holders.lock().unwrap_or_else(PoisonError::into_inner);
        let (writable, read_only) = plan(&self.layout.read_only, &self.layout.writable);
        let mounts = Layout {
            read_only,
            writable,
        };
        if let Some(holder) = holders.get(&mounts) {
            return Ok(holder.clone());
        }
        let mut holder = Holder::start(&self.unshare, &self.layout)?;
        if let Some(program) = self
            .runner
            .as_deref()
            .filter(|p| out_of_reach(p, &self.layout))
        {
            holder.runner = RunnerProcess::start(self, holder.pid, program);
        }
        let holder = Arc::new(holder);
        holders.insert(mounts, holder.clone());
        Ok(holder)
    }

    /// `request` started by the holder's runner with the three descriptors as its stdio;
    /// `None` when this confinement has no runner (each command then goes through
    /// [`Self::command`]).
    pub fn spawn(
        &self,
        request: &super::runner::Request<'_>,
        stdin: BorrowedFd<'_>,
        stdout: BorrowedFd<'_>,
        stderr: BorrowedFd<'_>,
    ) -> Option<std::io::Result<super::runner::Running>> {
        let holder = match self.holder() {
            Ok(holder) => holder,
            Err(why) => return Some(Err(std::io::Error::other(why))),
        };
        let runner = holder.runner.as_ref()?;
        Some(runner.runner.spawn(request, stdin, stdout, stderr))
    }

    /// Whether the commands are started by a runner (true) or each on its own.
    pub fn has_runner(&self) -> Result<bool, String> {
        Ok(self.holder()?.runner.is_some())
    }

    /// This confinement with `program` as the runner to start (a build of this program), or
    /// none: with holders of its own, since those started already have their runner or not.
    pub fn with_runner(mut self, program: Option<PathBuf>) -> Confinement {
        self.runner = program;
        self.holders = Arc::new(Mutex::new(HashMap::new()));
        self
    }

    /// This confinement with `path` read-only too (one worktree's command, beside another's).
    pub fn also_read_only(&self, path: &Path) -> Confinement {
        let mut more = self.clone();
        more.layout.read_only = with_existing(&more.layout.read_only, path);
        more
    }

    /// This confinement with `path` writable too (where the scratch worktrees are made).
    pub fn also_writable(&self, path: &Path) -> Confinement {
        let mut more = self.clone();
        more.layout.writable = with_existing(&more.layout.writable, path);
        more
    }

    /// The paths the commands cannot write, as asked.
    pub fn read_only(&self) -> &[PathBuf] {
        &self.layout.read_only
    }

    /// The paths through which a confined command could change one of `dependencies`: the
    /// dependency itself when it can write it, or a directory above it that it can write,
    /// where the entry on the way down is no mount point and so could be renamed and
    /// replaced. What a server hook depends on must have none.
    pub fn reachable(&self, dependencies: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
        let mut asked: Vec<PathBuf> = dependencies
            .iter()
            .flat_map(|d| d.ancestors().map(Path::to_path_buf))
            .collect();
        asked.sort();
        asked.dedup();
        let writable = self.writable_among(&asked)?;
        let mounts = self.mount_points()?;
        let mut found: Vec<PathBuf> = Vec::new();
        for dependency in dependencies {
            if writable.contains(dependency) {
                found.push(dependency.clone());
                continue;
            }
            let above = dependency.ancestors().zip(dependency.ancestors().skip(1));
            if let Some((_, dir)) = above.into_iter().find(|(entry, dir)| {
                writable.iter().any(|w| w == dir) && !mounts.iter().any(|m| m == entry)
            }) {
                found.push(dir.to_path_buf());
            }
        }
        found.sort();
        found.dedup();
        Ok(found)
    }

    /// The mount points the confined commands see (the holder's).
    fn mount_points(&self) -> Result<Vec<PathBuf>, String> {
        let holder = self.holder()?;
        let file = format!("/proc/{}/mountinfo", holder.pid);
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("cannot read {file}: {e}"))?;
        Ok(text
            .lines()
            .filter_map(|line| line.split(' ').nth(4))
            .map(|field| PathBuf::from(unescape_mount_point(field)))
            .collect())
    }

    /// Those of `paths` a confined command can write (`test -w`, which counts a read-only
    /// mount).
    pub fn writable_among(&self, paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
        let script = "for p; do [ -w \"$p\" ] && printf '%s\\n' \"$p\"; done; true";
        let mut args: Vec<OsString> = shell_args(script).into();
        args.push(OsString::from("sh"));
        let asked: Vec<&PathBuf> = paths
            .iter()
            .filter(|p| !p.as_os_str().as_encoded_bytes().contains(&b'\n'))
            .collect();
        args.extend(asked.iter().map(|p| p.as_os_str().to_os_string()));
        let args: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
        let out = self.output(OsStr::new(SH), &args)?;
        if !out.success {
            return Err(format!(
                "the probe of what a confined command can write failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        Ok(asked
            .into_iter()
            .filter(|p| text.lines().any(|l| Path::new(l) == p.as_path()))
            .cloned()
            .collect())
    }
}

/// What a probe printed, and how it ended.
struct Output {
    success: bool,
    status: String,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// The process whose namespaces the commands enter; ended when the last confinement
/// sharing it is dropped.
#[derive(Debug)]
struct Holder {
    pid: u32,
    child: Mutex<Child>,
    /// Its input: closed, the holder ends even if this process was killed.
    _stdin: Option<ChildStdin>,
    /// The runner in its namespaces, when it started.
    runner: Option<RunnerProcess>,
}

/// The runner started in a holder's namespaces, and its process.
#[derive(Debug)]
struct RunnerProcess {
    runner: super::runner::Runner,
    child: Child,
}

impl RunnerProcess {
    /// This program as the runner in the namespaces of the holder `pid`, once it says it is
    /// ready; `None` when it is not (the commands then enter the namespaces each on its own).
    /// It is the first process of a PID namespace of its own, with its `/proc` (in a mount
    /// namespace of its own, the holder's mounts copied), and has no capability: what each
    /// command got on its own, made once for all of them.
    fn start(confinement: &Confinement, pid: u32, program: &Path) -> Option<RunnerProcess> {
        use std::os::unix::process::CommandExt as _;
        let (runner, theirs) = super::runner::Runner::pair().ok()?;
        let mut cmd = Command::new(&confinement.nsenter);
        cmd.arg(format!("--target={pid}"))
            .args(["--user", "--mount", "--net", "--preserve-credentials", "--"])
            .arg(&confinement.unshare)
            .args(["--pid", "--fork", "--kill-child", "--mount-proc", "--"])
            .arg(&confinement.setpriv)
            .args(DROP_EVERY_PRIVILEGE)
            .arg(program)
            .arg(super::runner::MODE)
            .env_clear()
            .env("PATH", SYSTEM_DIRS.join(":"))
            .stdin(Stdio::from(theirs))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Apart from every command's group, which a timeout kills.
            .process_group(0);
        let spawned = cmd.spawn();
        // Its end of the control socket is the runner's alone: if it ends, we read EOF.
        drop(cmd);
        let mut child = spawned.ok()?;
        if !runner.ready() {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        Some(RunnerProcess { runner, child })
    }
}

impl Drop for RunnerProcess {
    fn drop(&mut self) {
        // Its control socket closes after this; the runner ends on its own, and the commands
        // still running with it. Killed too, in case it does not.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether a command confined by `layout` can neither write `program` nor rename it away: it
/// lies under a read-only entry of the mounts (`/` itself when no writable path holds it).
fn out_of_reach(program: &Path, layout: &Layout) -> bool {
    let (writable, read_only) = plan(&layout.read_only, &layout.writable);
    let deepest = |paths: &[PathBuf]| {
        paths
            .iter()
            .filter(|p| program.starts_with(p))
            .map(|p| p.components().count())
            .max()
    };
    match (deepest(&writable), deepest(&read_only)) {
        (None, _) => true,
        (Some(w), Some(r)) => r > w,
        (Some(_), None) => false,
    }
}

impl Holder {
    fn start(unshare: &Path, layout: &Layout) -> Result<Holder, String> {
        let (writable, read_only) = plan(&layout.read_only, &layout.writable);
        let host = host_mounts(&writable);
        let mut child = Command::new(unshare)
            .args([
                "--user",
                "--map-root-user",
                "--mount",
                "--net",
                "--fork",
                "--kill-child",
                "--",
                SH,
                "-c",
                HOLDER,
                "sh",
            ])
            .arg(writable.len().to_string())
            .arg(read_only.len().to_string())
            .arg(host.len().to_string())
            .args(&writable)
            .args(&host)
            .args(&read_only)
            // `mount` is the system's: a directory on the caller's PATH may be one a
            // command could write, and its `mount` would make the next holder.
            .env_clear()
            .env("PATH", SYSTEM_DIRS.join(":"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", unshare.display()))?;
        let mut ready = String::new();
        if let Some(out) = child.stdout.take() {
            let _ = std::io::BufReader::new(out).read_line(&mut ready);
        }
        if ready.trim_end() != "ready" {
            let mut why = String::new();
            if let Some(mut err) = child.stderr.take() {
                let _ = err.read_to_string(&mut why);
            }
            let status = child.wait().map_err(|e| e.to_string())?;
            return Err(format!(
                "a confined command does not run here ({status}): {}",
                why.trim()
            ));
        }
        Ok(Holder {
            pid: child.id(),
            _stdin: child.stdin.take(),
            child: Mutex::new(child),
            runner: None,
        })
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        self.runner = None;
        let child = self.child.get_mut().unwrap_or_else(PoisonError::into_inner);
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// `paths` that exist, resolved, without repeats.
fn existing(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut real: Vec<PathBuf> = paths.iter().filter_map(|p| p.canonicalize().ok()).collect();
    real.sort();
    real.dedup();
    real
}

/// [`existing`] of `paths` (its own output) and `path`: only `path` is resolved again. A
/// verification adds two paths per task and run, and resolving every path again was a
/// `readlink` per component of each.
fn with_existing(paths: &[PathBuf], path: &Path) -> Vec<PathBuf> {
    // Gone since, a path is left out, as resolving it again would leave it out.
    let mut real: Vec<PathBuf> = paths.iter().filter(|p| p.exists()).cloned().collect();
    if let Ok(path) = path.canonicalize()
        && let Err(at) = real.binary_search(&path)
    {
        real.insert(at, path);
    }
    real
}

/// The mounts the holder makes, on a read-only `/`: the writable paths, then the read-only
/// ones, each shallowest first, and each only where it changes what the paths around it
/// say (the deepest one around a path decides). A read-only path inside a writable one is
/// bound from the writable one's child on its way: a directory on the path to it that could
/// be renamed could be replaced, with everything below it, while a mount point cannot be
/// renamed. A path asked both ways is read-only.
fn plan(read_only: &[PathBuf], writable: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let writable: Vec<&PathBuf> = writable.iter().filter(|w| !read_only.contains(w)).collect();
    let lifted: Vec<PathBuf> = read_only
        .iter()
        .map(|p| {
            let around = writable
                .iter()
                .filter(|w| p.starts_with(w) && p != **w)
                .max_by_key(|w| w.components().count());
            around
                .and_then(|w| Some(w.join(p.strip_prefix(w).ok()?.components().next()?)))
                .unwrap_or_else(|| p.clone())
        })
        .collect();
    // (path, writable), a lifted path that is also asked writable being read-only.
    let mut entries: Vec<(&Path, bool)> = lifted.iter().map(|p| (p.as_path(), false)).collect();
    entries.extend(
        writable
            .iter()
            .filter(|w| !lifted.contains(w))
            .map(|w| (w.as_path(), true)),
    );
    entries.sort();
    entries.dedup();
    let around = |path: &Path| {
        entries
            .iter()
            .filter(|(q, _)| path.starts_with(q) && path != *q)
            .max_by_key(|(q, _)| q.components().count())
            .is_some_and(|(_, open)| *open)
    };
    let mut kept: Vec<(&Path, bool)> = entries
        .iter()
        .filter(|(p, open)| around(p) != *open)
        .copied()
        .collect();
    kept.sort_by_key(|(p, _)| p.components().count());
    let paths = |open: bool| -> Vec<PathBuf> {
        kept.iter()
            .filter(|(_, o)| *o == open)
            .map(|(p, _)| p.to_path_buf())
            .collect()
    };
    (paths(true), paths(false))
}

/// The host's other filesystems to make read-only: every mount point but `/`, the kernel's
/// (`/proc`, `/sys`, `/dev`) and those at or inside a writable path; shallowest first.
fn host_mounts(writable: &[PathBuf]) -> Vec<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let kernel = [Path::new("/proc"), Path::new("/sys"), Path::new("/dev")];
    let mut points: Vec<PathBuf> = text
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|field| PathBuf::from(unescape_mount_point(field)))
        .filter(|p| {
            p.is_absolute()
                && p != Path::new("/")
                && !kernel.iter().any(|k| p.starts_with(k))
                && !writable.iter().any(|w| p.starts_with(w))
        })
        .collect();
    points = outermost(points);
    points.sort_by_key(|p| p.components().count());
    points
}

/// A mount point as `/proc/self/mountinfo` writes it: space, tab, newline and backslash as
/// three octal digits after a backslash.
fn unescape_mount_point(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)))
            .and_then(|d| {
                let value = d.iter().fold(0u32, |n, c| n * 8 + u32::from(c - b'0'));
                u8::try_from(value).ok()
            });
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `paths` without those inside another of them: binding the outer one covers them.
fn outermost(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.sort();
    paths.dedup();
    let mut kept: Vec<PathBuf> = Vec::new();
    for path in paths {
        if !kept.iter().any(|outer| path.starts_with(outer)) {
            kept.push(path);
        }
    }
    kept
}

/// The arguments of a shell run of `script`: `sh -c SCRIPT`.
pub fn shell_args(script: &str) -> [OsString; 2] {
    [OsString::from("-c"), OsString::from(script)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    #[test]
    fn a_path_added_is_resolved_as_all_of_them_were() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonicalize().unwrap();
        for d in ["a", "b", "c"] {
            std::fs::create_dir(root.join(d)).unwrap();
        }
        std::os::unix::fs::symlink(root.join("c"), root.join("to-c")).unwrap();
        let asked = [root.join("b"), root.join("a"), root.join("gone-later")];
        std::fs::create_dir(root.join("gone-later")).unwrap();
        let layout = existing(&asked);
        std::fs::remove_dir(root.join("gone-later")).unwrap();
        for added in ["to-c", "c", "a", "missing", "b/../c"] {
            let whole = existing(&[&asked[..], &[root.join(added)]].concat());
            assert_eq!(with_existing(&layout, &root.join(added)), whole, "{added}");
        }
    }

    #[test]
    fn paths_inside_another_are_left_to_it() {
        assert_eq!(
            outermost(vec![
                p("/srv/r.git/objects"),
                p("/srv/r.git"),
                p("/srv/r.gitx"),
                p("/a"),
                p("/a")
            ]),
            vec![p("/a"), p("/srv/r.git"), p("/srv/r.gitx")]
        );
    }

    #[test]
    fn the_mounts_change_only_what_the_paths_around_them_say() {
        // A server: the repository under /srv (read-only with /), the temporary directory
        // writable, the verifier's own repository in it read-only from the temporary
        // directory's child down, and the scratch worktrees writable inside that.
        let (writable, read_only) = plan(
            &[
                p("/srv/git/r.git"),
                p("/tmp/attest-1/repo/.git"),
                p("/tmp/cache/tools-1"),
                p("/tmp/cache/scratch-1/wt-2"),
            ],
            &[
                p("/tmp"),
                p("/tmp/cache/scratch-1"),
                p("/tmp/attest-1/repo/.git"),
            ],
        );
        assert_eq!(writable, vec![p("/tmp"), p("/tmp/cache/scratch-1")]);
        assert_eq!(
            read_only,
            vec![
                p("/tmp/attest-1"),
                p("/tmp/cache"),
                p("/tmp/cache/scratch-1/wt-2")
            ]
        );
        // Writable inside writable is one mount; read-only directly in / is /'s.
        let (writable, read_only) = plan(&[p("/home/git")], &[p("/tmp"), p("/tmp/x")]);
        assert_eq!((writable, read_only), (vec![p("/tmp")], vec![]));
    }

    #[test]
    fn mount_points_are_read_as_the_kernel_escapes_them() {
        assert_eq!(unescape_mount_point("/a\\040b\\011c\\134d"), "/a b\tc\\d");
        assert_eq!(unescape_mount_point("/a\\9\\777"), "/a\\9\\777");
    }

    #[test]
    fn a_confined_command_cannot_write_nor_unmount_what_is_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("kept");
        let open = dir.path().join("kept/open");
        std::fs::create_dir_all(&open).unwrap();
        // A machine that cannot confine makes the verifier run nothing (tests/cli/attest.rs);
        // CI's can, and this says so loudly when it cannot.
        let confinement = Confinement::new(
            std::slice::from_ref(&kept),
            &[std::env::temp_dir(), open.clone()],
        )
        .unwrap_or_else(|why| panic!("this machine cannot confine commands: {why}"));
        let script = format!(
            "umount '{k}' 2>/dev/null; mount -o remount,rw '{k}' 2>/dev/null; \
             unshare --user --map-root-user --mount sh -c \"mount -o remount,bind,rw '{k}'\" 2>/dev/null; \
             {{ echo x > '{k}/file'; }} 2>/dev/null; mv '{k}' '{k}.moved' 2>/dev/null; echo y > '{o}/file'; true",
            k = kept.display(),
            o = open.display()
        );
        let args = shell_args(&script);
        let status = confinement
            .command(
                OsStr::new(SH),
                &[args[0].as_os_str(), args[1].as_os_str()],
                Path::new("/"),
            )
            .unwrap()
            .status()
            .unwrap();
        assert!(status.success());
        assert!(
            !kept.join("file").exists(),
            "the read-only path was written"
        );
        assert!(kept.exists(), "the read-only path was moved away");
        // Nothing it started outlives it: a detached sleeper would write the file later.
        let late = open.join("late");
        let detach = format!(
            "setsid sh -c 'sleep 1; echo late > \"{}\"' >/dev/null 2>&1 &",
            late.display()
        );
        let args = shell_args(&detach);
        assert!(
            confinement
                .command(
                    OsStr::new(SH),
                    &[args[0].as_os_str(), args[1].as_os_str()],
                    Path::new("/"),
                )
                .unwrap()
                .status()
                .unwrap()
                .success()
        );
        std::thread::sleep(std::time::Duration::from_millis(1500));
        assert!(!late.exists(), "a process the command started outlived it");
        assert_eq!(std::fs::read_to_string(open.join("file")).unwrap(), "y\n");
        // What the probe says matches: the read-only path and / are not writable, the open
        // one is; a file in a read-only directory inside a writable one is out of reach (the
        // directory is a mount point), one in a plain directory of a writable one is not.
        let other = tempfile::tempdir().unwrap();
        let loose = other.path().canonicalize().unwrap().join("loose");
        std::fs::create_dir(&loose).unwrap();
        let real = kept.canonicalize().unwrap();
        assert_eq!(
            confinement
                .reachable(&[real.join("program"), loose.join("program")])
                .unwrap(),
            vec![loose.clone()]
        );
        assert_eq!(
            confinement
                .writable_among(&[
                    kept.canonicalize().unwrap(),
                    p("/"),
                    open.canonicalize().unwrap()
                ])
                .unwrap(),
            vec![open.canonicalize().unwrap()]
        );
    }

    #[test]
    fn a_confined_command_sees_no_network_and_no_process_of_the_verifiers() {
        let confinement = Confinement::new(&[], &[])
            .unwrap_or_else(|why| panic!("this machine cannot confine commands: {why}"));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let script = format!(
            "if command -v bash >/dev/null; then bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' 2>/dev/null && echo net; fi; \
             [ -e /proc/{me} ] && echo proc; true",
            me = std::process::id()
        );
        let args = shell_args(&script);
        let out = confinement
            .command(
                OsStr::new(SH),
                &[args[0].as_os_str(), args[1].as_os_str()],
                Path::new("/"),
            )
            .unwrap()
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    }
}
