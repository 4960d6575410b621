//! The confinement's runner (src/exec/runner.rs), the real binary started in the holder's
//! namespaces: what a command it starts can and cannot do is what the per-command path
//! guarantees (src/exec/confine.rs's tests): no write to or remount of what is read-only,
//! nothing that outlives the command, no network, no process of the verifier's, no
//! capability; and the runner and a command's first process refuse to run by hand.

use std::path::{Path, PathBuf};
use std::time::Duration;

use git_orchestrate::exec::confine::Confinement;
use git_orchestrate::exec::{CommandEnv, ShellOptions, run_shell, run_shell_with};
use git_orchestrate::workflow::state::ExitRecord;

use crate::support::BIN;

/// Environments whose commands are confined by `confinement`: started by the runner, and
/// each on its own (where the runner cannot start), which must not differ. The binary's
/// directory is read-only to the commands, as a server's installed program is: built in a
/// clone under a temporary directory, it would be within their reach, and the runner is
/// refused there (`a_runner_within_the_commands_reach_is_not_started`).
fn confined(confinement: Confinement) -> [CommandEnv; 2] {
    let bin = Path::new(BIN).parent().expect("the binary's directory");
    [true, false].map(|runner| {
        let confinement = confinement
            .also_read_only(bin)
            .with_runner(runner.then(|| PathBuf::from(BIN)));
        assert_eq!(
            confinement.has_runner(),
            Ok(runner),
            "the runner starts on this machine"
        );
        CommandEnv::for_repository(&[])
            .expect("a tool directory")
            .confined(confinement)
    })
}

fn run(env: &CommandEnv, script: &str) -> String {
    let out = run_shell(script, Path::new("/"), Duration::from_secs(60), env).expect("runs");
    assert_eq!(
        out.exit,
        ExitRecord::Code(0),
        "{script}: {}",
        String::from_utf8_lossy(&out.output)
    );
    String::from_utf8_lossy(&out.output).into_owned()
}

#[test]
fn a_command_the_runner_starts_cannot_write_remount_or_move_what_is_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().canonicalize().unwrap().join("kept");
    let open = kept.join("open");
    std::fs::create_dir_all(&open).unwrap();
    for env in confined(
        Confinement::new(
            std::slice::from_ref(&kept),
            &[std::env::temp_dir(), open.clone()],
        )
        .expect("this machine confines commands"),
    ) {
        let script = format!(
            "umount '{k}' 2>/dev/null; mount -o remount,rw '{k}' 2>/dev/null; \
         unshare --user --map-root-user --mount sh -c \"mount -o remount,bind,rw '{k}'\" 2>/dev/null; \
         {{ echo x > '{k}/file'; }} 2>/dev/null; mv '{k}' '{k}.moved' 2>/dev/null; echo y > '{o}/file'; true",
            k = kept.display(),
            o = open.display()
        );
        run(&env, &script);
        assert!(
            !kept.join("file").exists(),
            "the read-only path was written"
        );
        assert!(kept.exists(), "the read-only path was moved away");
        assert_eq!(std::fs::read_to_string(open.join("file")).unwrap(), "y\n");
        std::fs::remove_file(open.join("file")).unwrap();
        // The probes say so too, through the runner where there is one (its `true`, and what
        // a command can write).
        let confinement = env.confinement().expect("confined");
        assert_eq!(confinement.probe(), Ok(()));
        assert_eq!(
            confinement.writable_among(&[kept.clone(), PathBuf::from("/"), open.clone()]),
            Ok(vec![open.clone()])
        );
    }
}

#[test]
fn nothing_a_command_the_runner_starts_starts_outlives_it() {
    let dir = tempfile::tempdir().unwrap();
    for env in confined(Confinement::new(&[], &[std::env::temp_dir()]).expect("confines")) {
        let late = dir.path().canonicalize().unwrap().join("late");
        run(
            &env,
            &format!(
                "setsid sh -c 'sleep 1; echo late > \"{}\"' >/dev/null 2>&1 &",
                late.display()
            ),
        );
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!late.exists(), "a process the command started outlived it");
        // A timeout kills it and what it started, and says so.
        let out = run_shell("sleep 30", Path::new("/"), Duration::from_millis(300), &env).unwrap();
        assert_eq!(out.exit, ExitRecord::TimedOut { after_ms: 300 });
    }
}

#[test]
fn a_command_the_runner_starts_has_no_network_no_capability_and_a_proc_of_its_own() {
    let envs = confined(Confinement::new(&[], &[]).expect("confines"));
    for (env, runner) in envs.into_iter().zip([true, false]) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let script = format!(
            "if command -v bash >/dev/null; then bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' 2>/dev/null && echo net; fi; \
         [ -e /proc/{me} ] && echo proc; \
         others=; for p in /proc/[0-9]*; do [ \"$p\" = /proc/$$ ] || others=\"$others ${{p#/proc/}}\"; done; \
         echo \"others:$others\"; \
         grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status | tr -s '\\t ' ' '",
            me = std::process::id()
        );
        let out = run(&env, &script);
        // `/proc` shows the command's PID namespace: the shell alone (`echo` is its own), and,
        // started by the runner, the runner, that namespace's first process; on its own, the
        // shell is the first.
        assert_eq!(
            out,
            format!(
                "others:{}\nCapInh: 0000000000000000\nCapPrm: 0000000000000000\n\
         CapEff: 0000000000000000\nCapBnd: 0000000000000000\nCapAmb: 0000000000000000\n\
         NoNewPrivs: 1\n",
                if runner { " 1" } else { "" }
            )
        );
    }
}

#[test]
fn the_runner_gives_a_command_its_input_environment_directory_and_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let here = dir.path().canonicalize().unwrap();
    for env in confined(Confinement::new(&[], &[std::env::temp_dir()]).expect("confines")) {
        let vars = [("GIT_ORCHESTRATE_TEST_VAR".to_string(), "a b".to_string())];
        let out = run_shell_with(
            "cat; printf '%s|%s|' \"$GIT_ORCHESTRATE_TEST_VAR\" \"$(pwd)\"; echo err >&2; exit 3",
            &here,
            Duration::from_secs(60),
            &env,
            ShellOptions {
                stdin: Some(b"in\n"),
                split_stderr: true,
                vars: &vars,
            },
        )
        .unwrap();
        assert_eq!(out.exit, ExitRecord::Code(3));
        assert_eq!(
            String::from_utf8_lossy(&out.output),
            format!("in\na b|{}|", here.display())
        );
        assert_eq!(String::from_utf8_lossy(&out.stderr), "err\n");
    }
}

#[test]
fn the_runner_refuses_to_run_by_hand() {
    let out = std::process::Command::new(BIN)
        .args(["__confined-runner", "true"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("is started only by the confinement"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    // It is not in the help.
    let help = std::process::Command::new(BIN)
        .arg("--help")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&help.stdout).contains("__confined"));
}

/// The runner is our own binary: where the commands could write it (here, built under a
/// writable temporary directory that nothing binds read-only), it is not started, and each
/// command runs on its own instead.
#[test]
fn a_runner_within_the_commands_reach_is_not_started() {
    let bin = Path::new(BIN).canonicalize().unwrap();
    let confinement = Confinement::new(
        &[],
        std::slice::from_ref(&bin.parent().unwrap().to_path_buf()),
    )
    .expect("this machine confines commands")
    .with_runner(Some(bin));
    assert_eq!(confinement.has_runner(), Ok(false));
}

/// What one command leaves never meets the next: a daemon that left its session, ignores the
/// polite signals and keeps writing, and a loop that keeps forking, are gone (reaped, not
/// merely stopped) before the command's status is answered, so the next command's `/proc`
/// shows none of them and the file stops growing.
#[test]
fn what_a_command_leaves_is_gone_before_the_next_one_starts() {
    let dir = tempfile::tempdir().unwrap();
    let here = dir.path().canonicalize().unwrap();
    let envs = confined(Confinement::new(&[], &[std::env::temp_dir()]).expect("confines"));
    for (env, runner) in envs.into_iter().zip([true, false]) {
        let log = here.join(format!("log-{runner}"));
        run(
            &env,
            &format!(
                "setsid sh -c 'trap \"\" TERM HUP INT; (while :; do echo x >> \"{log}\"; sleep 0.05; done) & \
                 while :; do sleep 5 & sleep 0.01; done' >/dev/null 2>&1 & \
                 while [ ! -s '{log}' ]; do sleep 0.01; done",
                log = log.display()
            ),
        );
        let others = run(
            &env,
            "others=; for p in /proc/[0-9]*; do [ \"$p\" = /proc/$$ ] || others=\"$others ${p#/proc/}\"; done; \
             echo \"others:$others\"",
        );
        assert_eq!(others, if runner { "others: 1\n" } else { "others:\n" });
        let written = std::fs::metadata(&log).unwrap().len();
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(
            std::fs::metadata(&log).unwrap().len(),
            written,
            "a process the command left still writes"
        );
    }
}

/// The runner is the first process of the commands' PID namespace, as the same user: what a
/// command can try against it (signal it, trace it, read its memory, descriptors or
/// environment, write into its `/proc/1`) does nothing, and the next command runs as ever.
#[test]
fn a_command_cannot_signal_trace_or_read_the_runner() {
    let [env, _] = confined(Confinement::new(&[], &[std::env::temp_dir()]).expect("confines"));
    let script = "for s in HUP INT QUIT USR1 USR2 PIPE ALRM TERM CHLD CONT STOP TSTP KILL; do kill -s $s 1; done; \
        grep -q '^__confined-runner' /proc/1/cmdline 2>/dev/null || echo 'not the runner'; \
        cat /proc/1/environ >/dev/null 2>&1 && echo environ; \
        readlink /proc/1/fd/0 >/dev/null 2>&1 && echo fd; \
        readlink /proc/1/cwd >/dev/null 2>&1 && echo cwd; \
        readlink /proc/1/exe >/dev/null 2>&1 && echo exe; \
        dd if=/proc/1/mem of=/dev/null bs=1 count=1 skip=4194304 2>/dev/null && echo mem; \
        { echo x > /proc/1/mem; } 2>/dev/null && echo 'mem written'; \
        { echo x > /proc/1/comm; } 2>/dev/null && echo 'comm written'; \
        if command -v strace >/dev/null; then \
          timeout 5 strace -o /dev/null -p 1 >/dev/null 2>&1; rc=$?; [ $rc = 1 ] || echo \"traced $rc\"; \
        fi; \
        if command -v gdb >/dev/null; then \
          gdb -batch -p 1 -ex 'info proc' 2>&1 | grep -q '^process 1' && echo 'gdb attached'; \
        fi; \
        echo done";
    assert_eq!(run(&env, script), "done\n");
    // Still there, and still confining.
    assert_eq!(run(&env, "echo again"), "again\n");
    let confinement = env.confinement().expect("confined");
    assert_eq!(confinement.probe(), Ok(()));
}
