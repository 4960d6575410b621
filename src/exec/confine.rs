//! Confining what a verifier runs (docs/integrity.md, "What the verifier runs"): `attest`
//! runs the PR's gates and tests, code the agent wrote, on the machine that judges it. On a
//! git server that is the server's own user, which can write the repository, its hooks and
//! the program the hooks start. Each command runs in a new user and mount namespace
//! (`unshare`) where those paths are bound read-only, then with every capability dropped
//! (`setpriv`), so that nothing it starts can unmount or remount them.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The shell that runs the confinement's script: POSIX puts it here.
const SH: &str = "/bin/sh";

/// Where the tools are looked for: the system's, never the caller's PATH.
const SYSTEM_DIRS: &[&str] = &["/usr/bin", "/bin", "/usr/sbin", "/sbin"];

/// The script run as root of the new namespaces, with `$1` read-only paths and `$2` paths
/// left writable inside them, then the command, run with no capability at all. Exit 125
/// when a path cannot be bound: the command does not run.
const SCRIPT: &str = r#"ro=$1; rw=$2; shift 2
# The writable ones first, each a mount of its own, which the recursive binds of the
# read-only ones below carry along as they are.
i=0; for p; do i=$((i + 1)); [ "$i" -le "$ro" ] && continue; [ "$i" -gt $((ro + rw)) ] && break
  mount --bind "$p" "$p" || { echo "git-orchestrate: cannot bind $p for the command" >&2; exit 125; }
done
while [ "$ro" -gt 0 ]; do
  mount --rbind -o ro "$1" "$1" || { echo "git-orchestrate: cannot make $1 read-only for the command" >&2; exit 125; }
  ro=$((ro - 1)); shift
done
shift "$rw"
exec "$SETPRIV" --bounding-set -all --inh-caps -all --ambient-caps -all --no-new-privs -- "$@""#;

/// How commands are confined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Confinement {
    unshare: PathBuf,
    setpriv: PathBuf,
    read_only: Vec<PathBuf>,
    writable: Vec<PathBuf>,
}

impl Confinement {
    /// Commands that cannot write `read_only` (existing paths only), except `writable`
    /// inside them. Fails, saying why, when this machine cannot confine a command: no
    /// `unshare` or `setpriv` (util-linux), or no user namespaces for this user.
    pub fn new(read_only: &[PathBuf], writable: &[PathBuf]) -> Result<Confinement, String> {
        let find = |name: &str| {
            SYSTEM_DIRS
                .iter()
                .map(|d| Path::new(d).join(name))
                .find(|p| p.is_file())
                .ok_or_else(|| format!("no `{name}` in {} (util-linux)", SYSTEM_DIRS.join(", ")))
        };
        let existing = |paths: &[PathBuf]| -> Vec<PathBuf> {
            outermost(paths.iter().filter_map(|p| p.canonicalize().ok()).collect())
        };
        let confinement = Confinement {
            unshare: find("unshare")?,
            setpriv: find("setpriv")?,
            read_only: existing(read_only),
            writable: existing(writable),
        };
        let probe = confinement
            .command(OsStr::new("true"), &[])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("cannot start {}: {e}", confinement.unshare.display()))?;
        if !probe.status.success() {
            return Err(format!(
                "a confined command does not run here ({}): {}",
                probe.status,
                String::from_utf8_lossy(&probe.stderr).trim()
            ));
        }
        Ok(confinement)
    }

    /// `program args…`, confined.
    pub fn command(&self, program: &OsStr, args: &[&OsStr]) -> Command {
        let mut cmd = Command::new(&self.unshare);
        // A PID namespace whose first process is the command's: when it ends, the kernel ends
        // every process it left (a `setsid` daemon included), so nothing of the PR outlives
        // its command to write what a later command's namespace makes read-only.
        cmd.args([
            "--user",
            "--map-root-user",
            "--mount",
            "--pid",
            "--fork",
            "--kill-child",
            "--",
            SH,
            "-c",
        ])
        .arg(SCRIPT)
        .arg("sh")
        .arg(self.read_only.len().to_string())
        .arg(self.writable.len().to_string())
        .args(&self.read_only)
        .args(&self.writable)
        .arg(program)
        .args(args)
        .env("SETPRIV", &self.setpriv);
        cmd
    }

    /// This confinement with `path` read-only too (one worktree's command, beside another's).
    pub fn also_read_only(&self, path: &Path) -> Confinement {
        let mut more = self.clone();
        if let Ok(real) = path.canonicalize() {
            more.read_only.push(real);
            more.read_only = outermost(std::mem::take(&mut more.read_only));
        }
        more
    }

    /// The paths the commands cannot write.
    pub fn read_only(&self) -> &[PathBuf] {
        &self.read_only
    }
}

/// `paths` without those inside another of them: binding the outer one read-only covers
/// them, and every bind is a `mount` process more for every command.
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

    #[test]
    fn paths_inside_another_are_left_to_it() {
        let p = |s: &str| PathBuf::from(s);
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
    fn a_confined_command_cannot_write_nor_unmount_what_is_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("kept");
        let open = dir.path().join("kept/open");
        std::fs::create_dir_all(&open).unwrap();
        // A machine that cannot confine makes the verifier run nothing (tests/cli/attest.rs);
        // CI's can, and this says so loudly when it cannot.
        let confinement =
            Confinement::new(std::slice::from_ref(&kept), std::slice::from_ref(&open))
                .unwrap_or_else(|why| panic!("this machine cannot confine commands: {why}"));
        let script = format!(
            "umount '{k}' 2>/dev/null; mount -o remount,rw '{k}' 2>/dev/null; \
             unshare --user --map-root-user --mount sh -c \"mount -o remount,bind,rw '{k}'\" 2>/dev/null; \
             echo x > '{k}/file' 2>/dev/null; echo y > '{o}/file'; true",
            k = kept.display(),
            o = open.display()
        );
        let args = shell_args(&script);
        let status = confinement
            .command(OsStr::new(SH), &[args[0].as_os_str(), args[1].as_os_str()])
            .status()
            .unwrap();
        assert!(status.success());
        assert!(
            !kept.join("file").exists(),
            "the read-only path was written"
        );
        // Nothing it started outlives it: a detached sleeper would write the file later.
        let late = open.join("late");
        let detach = format!(
            "setsid sh -c 'sleep 1; echo late > \"{}\"' >/dev/null 2>&1 &",
            late.display()
        );
        let args = shell_args(&detach);
        assert!(
            confinement
                .command(OsStr::new(SH), &[args[0].as_os_str(), args[1].as_os_str()])
                .status()
                .unwrap()
                .success()
        );
        std::thread::sleep(std::time::Duration::from_millis(1500));
        assert!(!late.exists(), "a process the command started outlived it");
        assert_eq!(std::fs::read_to_string(open.join("file")).unwrap(), "y\n");
    }
}
