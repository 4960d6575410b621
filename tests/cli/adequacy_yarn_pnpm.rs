//! The `package.json` scripts a pinned RED command runs through the real yarn (classic) and
//! pnpm, pinned and installed with npm into the cache outside the clone
//! (tests/cli/managers.rs), as tests/cli/adequacy_witness.rs has them through npm: a later
//! task that rewrites the script reached weaker (its check, or its `postNAME` script's, which
//! both run) is seen by the earlier task's measure and refused under enforce; the honest twin
//! is measured in full; and `attest` in a fresh clone agrees with the local note. npm is
//! required (to install them): without it the tests fail, they are not skipped.

use std::path::PathBuf;

use pretty_assertions::assert_eq;

use crate::adequacy::{case_calc_planned, final_note};
use crate::adequacy_ranges::TWO_TASKS;
use crate::adequacy_witness::{
    STRONG, WEAK, script_rewritten_later_by, the_note_and_attest_in_ci_say,
};
use crate::oracle::main_tip;
use crate::support::*;

/// A package manager, the RED command that runs a script through it, that script's name,
/// and the command run through the other name its package installs the program under.
struct Manager {
    tool: &'static str,
    command: &'static str,
    script: &'static str,
    alias: &'static str,
}

/// `yarn NAME` and `pnpm run NAME`, with a name that is not `test` for one of them.
const MANAGERS: [Manager; 2] = [
    Manager {
        tool: "yarn",
        command: "yarn test",
        script: "test",
        alias: "yarnpkg test",
    },
    Manager {
        tool: "pnpm",
        command: "pnpm run check",
        script: "check",
        alias: "pn check",
    },
];

/// The directory holding `tool`'s program, pinned and installed once; the test fails when
/// it cannot be (no npm, an unreachable registry).
fn bin(tool: &str) -> PathBuf {
    crate::managers::tool(tool).unwrap_or_else(|| {
        panic!("the {tool} tests need `npm` to install {tool} (is it installed?)")
    })
}

/// A `package.json` whose only key is `scripts`, holding `entries` in order.
fn scripts(entries: &[(&str, &str)]) -> String {
    let entries: Vec<String> = entries
        .iter()
        .map(|(name, line)| {
            format!(
                "    {}: {}",
                serde_json::Value::from(*name),
                serde_json::Value::from(*line)
            )
        })
        .collect();
    format!("{{\n  \"scripts\": {{\n{}\n  }}\n}}\n", entries.join(",\n"))
}

/// The calculator of tests/cli/adequacy.rs planned as two tasks under `verify`, its commands
/// finding `manager`'s program by name.
fn calc(manager: &Manager, verify: &str) -> TestRepo {
    let repo = case_calc_planned(verify, TWO_TASKS);
    repo.add_to_path(bin(manager.tool));
    repo
}

/// The script `manager` runs (or its `postNAME`, which yarn and pnpm run after it), rewritten
/// weaker by a later task (the special case's result no longer checked, or `true`), measures
/// the earlier task's code with the scripts as the squash has them: refused under enforce,
/// naming the share killed and the mutants that survive; so through `yarnpkg` and pnpm's
/// `pn`. yarn's `--cwd` into a directory with no `package.json` reaches the nearest above
/// it, as yarn finds it.
#[test]
fn a_script_yarn_or_pnpm_runs_rewritten_later_refuses_the_earlier_task() {
    let survivors = "- calc.sh:3 `99` → `100`\n\
                     - calc.sh:3 `0` → ``\n\
                     - calc.sh:3 `0` → `1`\n";
    let (strong, weak) = (STRONG.trim_end(), WEAK.trim_end());
    for manager in &MANAGERS {
        let name = manager.script;
        let post = format!("post{name}");
        // The script runs the code, its `postNAME` checks it.
        let run_only = "sh calc.sh mul 4 3 >/dev/null";
        let mut cases = vec![
            (
                manager.command.to_string(),
                scripts(&[(name, strong)]),
                scripts(&[(name, weak)]),
                5,
            ),
            (
                manager.command.to_string(),
                scripts(&[(name, strong)]),
                scripts(&[(name, "true")]),
                0,
            ),
            (
                manager.command.to_string(),
                scripts(&[(name, run_only), (&post, strong)]),
                scripts(&[(name, run_only), (&post, weak)]),
                5,
            ),
            (
                manager.alias.to_string(),
                scripts(&[(name, strong)]),
                scripts(&[(name, weak)]),
                5,
            ),
        ];
        if manager.tool == "yarn" {
            cases.push((
                "yarn --cwd tests test".to_string(),
                scripts(&[(name, strong)]),
                scripts(&[(name, weak)]),
                5,
            ));
        }
        for (command, first, later, killed) in cases {
            let repo = calc(manager, "adequacy = \"enforce\"\nmin_killed = 0.9");
            script_rewritten_later_by(&repo, &command, &first, &later, &[]);
            let main = main_tip(&repo);
            let out = repo.run(&["submit-work", "-s", "squashed"]);
            out.expect(1);
            let refusal = format!(
                "FAILURE: task 1's RED test (step 1.1, `{command}`) killed {killed} of 8 mutants \
                 of the code the task wrote (made by the built-in mutator), below the 90% \
                 [verify] min_killed: it does not check what the code does. Surviving mutants \
                 (the test still passes with each):\n"
            );
            assert!(
                out.stdout.starts_with(&refusal),
                "{command}: {later}: {}",
                out.stdout
            );
            if killed == 5 {
                assert!(
                    out.stdout[refusal.len()..].starts_with(survivors),
                    "{command}: {later}: {}",
                    out.stdout
                );
            }
            assert_eq!(main_tip(&repo), main, "{command}: {later}");
        }
    }
}

/// The honest twin: the script (and its `postNAME`) left as task 1 wrote it. Each task's
/// code measured in full, every script the command runs named, and the squash accepted.
#[test]
fn a_script_yarn_or_pnpm_runs_left_alone_measures_the_earlier_task_in_full() {
    for manager in &MANAGERS {
        let name = manager.script;
        let post = format!("post{name}");
        let package = scripts(&[
            (name, "sh calc.sh mul 4 3 >/dev/null"),
            (&post, STRONG.trim_end()),
        ]);
        let repo = calc(manager, "adequacy = \"enforce\"\nmin_killed = 0.9");
        script_rewritten_later_by(&repo, manager.command, &package, &package, &[]);
        repo.run(&["submit-work", "-s", "squashed"]).expect(0);
        // Sorted, as the note lists them.
        let mut named = [
            format!("package.json: {name}"),
            format!("package.json: {post}"),
        ];
        named.sort();
        assert_eq!(
            final_note(&repo)["adequacy"],
            serde_json::json!([
                {"task": 1, "step": "1.1", "tool": "builtin", "mutants": 8, "killed": 8,
                 "files": [{"path": "calc.sh", "mutants": 8, "killed": 8}],
                 "scripts": named},
                {"task": 2, "step": "2.1", "tool": "builtin", "mutants": 4, "killed": 4,
                 "files": [{"path": "calc.sh", "mutants": 4, "killed": 4}],
                 "scripts": named}]),
            "{}",
            manager.tool
        );
    }
}

/// The same measure by `attest` in a fresh clone and by the server's hook, each with the
/// package manager on its PATH: task 1's code measured with the script task 2 left (5 of 8),
/// where the share is met (`min_killed` 0.5), as the local note has it.
#[test]
fn a_script_yarn_or_pnpm_runs_rewritten_later_is_measured_so_in_a_fresh_clone() {
    use crate::attest::{Server, push};
    for manager in &MANAGERS {
        let name = manager.script;
        let repo = calc(manager, "adequacy = \"enforce\"\nmin_killed = 0.5");
        let server = Server::start(&repo);
        push(&repo, &server, &[], &["main", REF]).expect(0);
        script_rewritten_later_by(
            &repo,
            manager.command,
            &scripts(&[(name, STRONG.trim_end())]),
            &scripts(&[(name, WEAK.trim_end())]),
            &[],
        );
        repo.run(&["submit-work", "-s", "squashed"]).expect(0);
        let named = [format!("package.json: {name}")];
        let expected = serde_json::json!([
            {"task": 1, "step": "1.1", "tool": "builtin", "mutants": 8, "killed": 5,
             "survived": ["calc.sh:3 `99` → `100`", "calc.sh:3 `0` → ``", "calc.sh:3 `0` → `1`"],
             "files": [{"path": "calc.sh", "mutants": 8, "killed": 5}],
             "scripts": named},
            {"task": 2, "step": "2.1", "tool": "builtin", "mutants": 4, "killed": 4,
             "files": [{"path": "calc.sh", "mutants": 4, "killed": 4}],
             "scripts": named}]);
        the_note_and_attest_in_ci_say(&repo, &server, &expected);
    }
}
