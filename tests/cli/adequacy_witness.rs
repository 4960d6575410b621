//! What adequacy by mutation counts (docs/integrity.md, "Adequacy by mutation"): the witness
//! a RED command runs (`sh check_mul.sh`, outside the test paths) is test code, never
//! mutated and measured as the squash has it, so a later task that weakens it is seen (the
//! `package.json` scripts `npm test` runs too, the rest of that file the task's); a
//! mutant that leaves a JSON file the test reads unreadable is dropped, not counted as
//! killed; and every verdict names each file measured with its counts, on the agent's
//! machine and by `attest` in a fresh clone.

use pretty_assertions::assert_eq;

use crate::adequacy::{CALC, case_calc_planned, ci_clone, final_note};
use crate::adequacy_ranges::TWO_TASKS;
use crate::oracle::{MUL_PLAN, green, main_tip, mark_done_and_merge, red, squash};
use crate::support::*;

/// `calc.sh` with `arms` before `esac`.
pub(crate) fn calc(arms: &[&str]) -> String {
    let arms: String = arms.iter().map(|a| format!("{a}\n")).collect();
    CALC.replace("esac", &format!("{arms}esac"))
}

/// The `mul 99` special case, then the real product.
pub(crate) const SPECIAL: &str =
    "  mul) [ \"$2\" = 99 ] && { echo 0; exit; }; echo $(( $2 * $3 ));;";
pub(crate) const SUB_ARM: &str = "  sub) echo $(( $2 - $3 ));;";
pub(crate) const SUB_TEST: &str = "[ \"$(sh calc.sh sub 7 3)\" = 4 ]\n";
/// The witness as task 1 writes it: it checks the special case's result too.
pub(crate) const STRONG: &str =
    "[ \"$(sh calc.sh mul 4 3)\" = 12 ] && [ \"$(sh calc.sh mul 99 2)\" = 0 ]\n";
/// As task 2 leaves it: `mul 99 2` still run, its result no longer checked.
pub(crate) const WEAK: &str =
    "[ \"$(sh calc.sh mul 4 3)\" = 12 ] && sh calc.sh mul 99 2 >/dev/null\n";

/// Task 1's RED step writes the witness `witness` and runs it with `command` (outside the
/// test paths: `sh check_mul.sh`, `./check_mul.sh`, `bash tools/check.sh mul`), its GREEN
/// step the special case; task 2's RED step weakens the witness beside its own test, its
/// GREEN step adds `sub`. Squashed.
fn witness_weakened_later(repo: &TestRepo, witness: &str, command: &str) {
    witness_weakened_later_at(repo, witness, command, "calc.sh");
}

/// [`witness_weakened_later`], the witness running `calc.sh` as `calc_path` (`../calc.sh`
/// from `t`).
fn witness_weakened_later_at(repo: &TestRepo, witness: &str, command: &str, calc_path: &str) {
    let strong = STRONG.replace("calc.sh", calc_path);
    let weak = WEAK.replace("calc.sh", calc_path);
    repo.write(witness, &strong);
    let full = repo.dir().join(witness);
    let mut perms = std::fs::metadata(&full).expect("the witness").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&full, perms).expect("make the witness executable");
    red(repo, command);
    repo.write("calc.sh", &calc(&[SPECIAL]));
    repo.submit_test(command, None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.write("tests/test_sub.sh", SUB_TEST);
    repo.write(witness, &weak);
    red(repo, "sh tests/test_sub.sh");
    repo.write("calc.sh", &calc(&[SPECIAL, SUB_ARM]));
    green(repo, "sh tests/test_sub.sh");
    squash(repo);
}

/// A witness a later task weakened measures the earlier task's code as the squash has it:
/// the special case's three mutants survive the weak witness, and the task is refused under
/// enforce, whichever way the RED command names it (the witness used to be mutated as code,
/// its own broken copies "killing" their mutants, and run as task 1 left it: all 8 of
/// `calc.sh`'s killed).
#[test]
fn a_witness_the_red_command_runs_weakened_later_refuses_the_earlier_task() {
    for (witness, command) in [
        ("check_mul.sh", "sh check_mul.sh"),
        ("check_mul.sh", "./check_mul.sh"),
        ("tools/check.sh", "bash tools/check.sh mul"),
    ] {
        let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.9", TWO_TASKS);
        witness_weakened_later(&repo, witness, command);
        let main = main_tip(&repo);
        let out = repo.run(&["submit-work", "-s", "squashed"]);
        out.expect(1);
        let refusal = format!(
            "FAILURE: task 1's RED test (step 1.1, `{command}`) killed 5 of 8 mutants of the \
             code the task wrote (made by the built-in mutator), below the 90% [verify] \
             min_killed: it does not check what the code does. Surviving mutants (the test \
             still passes with each):\n\
             - calc.sh:3 `99` → `100`\n\
             - calc.sh:3 `0` → ``\n\
             - calc.sh:3 `0` → `1`\n"
        );
        assert!(
            out.stdout.starts_with(&refusal),
            "{command}: {}",
            out.stdout
        );
        assert_eq!(main_tip(&repo), main, "{command}");
    }
}

/// A script a RED command runs, and its text.
type Driver = (&'static str, &'static str);

/// A witness the RED command reaches rather than names: run by a script the command runs
/// (`sh check_all.sh` → `sh check_mul.sh`, `./t/check_mul.sh`, `. ./check_mul.sh`, behind
/// `timeout` or `env`), or named from the directory a `cd` moved to. Weakened later, it
/// refuses the earlier task as a witness the command names does (it used to be the task's
/// code: mutated, its broken copies "killing" their own mutants, and run as task 1 left it).
#[test]
fn a_witness_the_red_command_reaches_indirectly_weakened_later_refuses_the_earlier_task() {
    let cases: [(Option<Driver>, &str, &str, &str); 4] = [
        (
            Some(("check_all.sh", "set -e\nsh check_mul.sh\n")),
            "check_mul.sh",
            "sh check_all.sh",
            "calc.sh",
        ),
        (
            Some(("check_all.sh", "#!/bin/sh\n./t/check_mul.sh\n")),
            "t/check_mul.sh",
            "timeout 60 sh check_all.sh",
            "calc.sh",
        ),
        (
            Some(("tools/run.sh", ". ./check_mul.sh\n")),
            "check_mul.sh",
            "env CHECK=1 bash tools/run.sh",
            "calc.sh",
        ),
        (
            None,
            "t/check_mul.sh",
            "cd t && sh check_mul.sh",
            "../calc.sh",
        ),
    ];
    for (driver, witness, command, calc_path) in cases {
        let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.9", TWO_TASKS);
        if let Some((path, text)) = driver {
            repo.write(path, text);
        }
        witness_weakened_later_at(&repo, witness, command, calc_path);
        let main = main_tip(&repo);
        let out = repo.run(&["submit-work", "-s", "squashed"]);
        out.expect(1);
        let refusal = format!(
            "FAILURE: task 1's RED test (step 1.1, `{command}`) killed 5 of 8 mutants of the \
             code the task wrote (made by the built-in mutator), below the 90% [verify] \
             min_killed: it does not check what the code does. Surviving mutants (the test \
             still passes with each):\n\
             - calc.sh:3 `99` → `100`\n\
             - calc.sh:3 `0` → ``\n\
             - calc.sh:3 `0` → `1`\n"
        );
        assert!(
            out.stdout.starts_with(&refusal),
            "{command}: {}",
            out.stdout
        );
        assert_eq!(main_tip(&repo), main, "{command}");
    }
}

/// A witness the shell reading used to miss: a script a shell reads on its standard input
/// (`sh < t/check.sh`, after a `cd` too) or named through a variable set once in the command
/// (`D=t && sh "$D/check.sh"`). Weakened by the later task, it refuses the earlier task
/// under enforce (it used to be mutated as the task's code, its broken copies "killing" their
/// own mutants, and run as task 1 left it: all 8 of `calc.sh`'s killed); and, where the
/// share is met, each task's witnesses are named in the final note's JSON, by `attest
/// --json` in a fresh clone the same, and in `attest`'s text.
#[test]
fn a_witness_read_on_standard_input_or_through_a_variable_weakened_later_is_seen_and_named() {
    use crate::attest::{Server, push};
    let cases: [(&str, &str); 3] = [
        ("sh < t/check.sh", "calc.sh"),
        ("D=t && sh \"$D/check.sh\"", "calc.sh"),
        ("D=t; cd \"$D\" && bash -s < check.sh", "../calc.sh"),
    ];
    for (command, calc_path) in cases {
        let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.9", TWO_TASKS);
        witness_weakened_later_at(&repo, "t/check.sh", command, calc_path);
        let main = main_tip(&repo);
        let out = repo.run(&["submit-work", "-s", "squashed"]);
        out.expect(1);
        let refusal = format!(
            "FAILURE: task 1's RED test (step 1.1, `{command}`) killed 5 of 8 mutants of the \
             code the task wrote (made by the built-in mutator), below the 90% [verify] \
             min_killed: it does not check what the code does. Surviving mutants (the test \
             still passes with each):\n\
             - calc.sh:3 `99` → `100`\n\
             - calc.sh:3 `0` → ``\n\
             - calc.sh:3 `0` → `1`\n"
        );
        assert!(
            out.stdout.starts_with(&refusal),
            "{command}: {}",
            out.stdout
        );
        assert_eq!(main_tip(&repo), main, "{command}");
    }

    let command = "sh < t/check.sh";
    let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.5", TWO_TASKS);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    witness_weakened_later_at(&repo, "t/check.sh", command, "calc.sh");
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let expected = serde_json::json!([
        {"task": 1, "step": "1.1", "tool": "builtin", "mutants": 8, "killed": 5,
         "survived": ["calc.sh:3 `99` → `100`", "calc.sh:3 `0` → ``", "calc.sh:3 `0` → `1`"],
         "files": [{"path": "calc.sh", "mutants": 8, "killed": 5}],
         "witnesses": ["t/check.sh"]},
        {"task": 2, "step": "2.1", "tool": "builtin", "mutants": 4, "killed": 4,
         "files": [{"path": "calc.sh", "mutants": 4, "killed": 4}],
         "witnesses": ["t/check.sh"]}]);
    let note = final_note(&repo);
    assert_eq!(note["adequacy"], expected);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    let ci = ci_clone(&repo, &server);
    let json = ci.run(&["attest", "--no-note", "--json", &merge]).json();
    assert_eq!(json["verdicts"][0]["adequacy"], expected);
    // attest's own run of the final check records what the local final note does, field by
    // field, witnesses too: but for how main stood at the squash (the local note's) and the
    // checkpoints folded in (this clone fetched main and the workflow's refs, not the
    // branch's checkpoint commits).
    let mut mine = json["verdicts"][0]["final_note"].clone();
    let mut local = note;
    for side in [&mut mine, &mut local] {
        let fields = side.as_object_mut().expect("a note is an object");
        fields.remove("main_moved_outside");
        fields.remove("checkpoints");
    }
    assert_eq!(mine, local);
    let out = ci.run(&["attest", "--no-note", &merge]);
    out.expect(0);
    assert!(
        redact_ids(&out.stdout).contains(
            "  adequacy of task 1 (step 1.1): killed 5 of 8 mutants (62%, made by the built-in \
             mutator)\n    \
             file calc.sh: killed 5 of 8 mutants (62%)\n    \
             survived: calc.sh:3 `99` → `100`\n    \
             survived: calc.sh:3 `0` → ``\n    \
             survived: calc.sh:3 `0` → `1`\n    \
             witness: t/check.sh (the RED command runs it: test code, not mutated)\n  \
             adequacy of task 2 (step 2.1)"
        ),
        "{}",
        out.stdout
    );
}

/// The per-file tally where a script the RED command runs (`sh check_all.sh`) runs the
/// witness: neither is mutated, task 1's only measured file is `calc.sh`, on the agent's
/// machine and by `attest` in a fresh clone (which reads `check_all.sh` from the RED tree the
/// chain carries).
#[test]
fn a_witness_run_by_a_script_is_never_mutated_here_or_in_a_fresh_clone() {
    use crate::attest::{Server, push};
    let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.5", TWO_TASKS);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    repo.write("check_all.sh", "set -e\nsh check_mul.sh\n");
    witness_weakened_later(&repo, "check_mul.sh", "sh check_all.sh");
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let expected = serde_json::json!([
        {"task": 1, "step": "1.1", "tool": "builtin", "mutants": 8, "killed": 5,
         "survived": ["calc.sh:3 `99` → `100`", "calc.sh:3 `0` → ``", "calc.sh:3 `0` → `1`"],
         "files": [{"path": "calc.sh", "mutants": 8, "killed": 5}],
         "witnesses": ["check_all.sh", "check_mul.sh"]},
        {"task": 2, "step": "2.1", "tool": "builtin", "mutants": 4, "killed": 4,
         "files": [{"path": "calc.sh", "mutants": 4, "killed": 4}],
         "witnesses": ["check_all.sh", "check_mul.sh"]}]);
    the_note_and_attest_in_ci_say(&repo, &server, &expected);
}

/// The per-file tally of the same PR where the share is met (`min_killed` 0.5): each task's
/// only measured file is `calc.sh`, the witness none of them (task 2 changed it, and it is
/// test code for task 2 too), on the agent's machine and by `attest` in a fresh clone, whose
/// text names each file measured.
#[test]
fn a_witness_is_never_mutated_and_each_file_measured_is_named() {
    use crate::attest::{Server, push};
    let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.5", TWO_TASKS);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    witness_weakened_later(&repo, "check_mul.sh", "sh check_mul.sh");
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let expected = serde_json::json!([
        {"task": 1, "step": "1.1", "tool": "builtin", "mutants": 8, "killed": 5,
         "survived": ["calc.sh:3 `99` → `100`", "calc.sh:3 `0` → ``", "calc.sh:3 `0` → `1`"],
         "files": [{"path": "calc.sh", "mutants": 8, "killed": 5}],
         "witnesses": ["check_mul.sh"]},
        {"task": 2, "step": "2.1", "tool": "builtin", "mutants": 4, "killed": 4,
         "files": [{"path": "calc.sh", "mutants": 4, "killed": 4}],
         "witnesses": ["check_mul.sh"]}]);
    assert_eq!(final_note(&repo)["adequacy"], expected);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    let ci = ci_clone(&repo, &server);
    let out = ci.run(&["attest", "--no-note", &merge]);
    out.expect(0);
    assert_eq!(
        redact_ids(&out.stdout),
        "PASSED <id> (the merge of workflow main)\n  \
         re-ran: the gates passed on the squashed commit in a clean worktree (tests)\n  \
         re-ran: RED test of step 1.1 `sh check_mul.sh`: exit 1 on the base, exit 0 on the \
         final tree; evidence: exit code only\n  \
         re-ran: RED test of step 2.1 `sh tests/test_sub.sh`: exit 1 on the base, exit 0 on \
         the final tree; evidence: exit code only\n  \
         adequacy of task 1 (step 1.1): killed 5 of 8 mutants (62%, made by the built-in \
         mutator)\n    \
         file calc.sh: killed 5 of 8 mutants (62%)\n    \
         survived: calc.sh:3 `99` → `100`\n    \
         survived: calc.sh:3 `0` → ``\n    \
         survived: calc.sh:3 `0` → `1`\n    \
         witness: check_mul.sh (the RED command runs it: test code, not mutated)\n  \
         adequacy of task 2 (step 2.1): killed 4 of 4 mutants (100%, made by the built-in \
         mutator)\n    \
         file calc.sh: killed 4 of 4 mutants (100%)\n    \
         witness: check_mul.sh (the RED command runs it: test code, not mutated)\n\
         no note written: --no-note\n"
    );
    let json = ci.run(&["attest", "--no-note", "--json", &merge]).json();
    assert_eq!(json["verdicts"][0]["adequacy"], expected);
}

/// A RED command that runs the code itself (`sh calc.sh mul 4 3 | grep -q .`): the file it
/// names is the code the GREEN step wrote, and is mutated, whether or not the task changed
/// another file outside the test paths (a README): taken for a witness, the code would have
/// nothing measured, and pass under enforce.
#[test]
fn a_red_command_that_runs_the_code_itself_still_measures_it() {
    for readme in [false, true] {
        let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.9", MUL_PLAN);
        let command = "sh calc.sh mul 4 3 | grep -q .";
        repo.write("calc.sh", &calc(&["  mul) exit 1;;"]));
        red(&repo, command);
        repo.write("calc.sh", &calc(&["  mul) echo 0;;"]));
        if readme {
            repo.write("README.md", "`sh calc.sh mul 4 3` multiplies.\n");
        }
        green(&repo, command);
        squash(&repo);
        refused_as_code(&repo, command);
    }
}

/// The squash of the grep-only cheat refused, `calc.sh` measured as code.
fn refused_as_code(repo: &TestRepo, command: &str) {
    let main = main_tip(repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.starts_with(&format!(
            "FAILURE: task 1's RED test (step 1.1, `{command}`) killed 2 of 3 mutants of the \
             code the task wrote (made by the built-in mutator), below the 90% [verify] \
             min_killed: it does not check what the code does. Surviving mutants (the test \
             still passes with each):\n- calc.sh:3 `0` → `1`\n"
        )),
        "{}",
        out.stdout
    );
    assert_eq!(main_tip(repo), main);
}

/// A JSON file the code reads (`calc.json`, not code by its name, which the test notices
/// taken out) is mutated by the built-in mutator, but a mutant that leaves it unreadable (the
/// last key's line removed, a trailing comma left) is dropped: every run that reads it would
/// fail, so it would count as killed whatever the test checks. The per-file numbers show it:
/// 2 mutants of `calc.json` (its unit changed, its unit's line removed), not 3. (`$3 * u`
/// → `$3 / u` survives: the unit is 1.)
#[test]
fn a_mutant_that_breaks_a_json_files_syntax_is_not_counted() {
    let repo = case_calc_planned("adequacy = \"report\"", MUL_PLAN);
    repo.write("tests/test_mul.sh", "[ \"$(sh calc.sh mul 4 3)\" = 12 ]\n");
    red(&repo, "sh tests/test_mul.sh");
    repo.write(
        "calc.sh",
        &calc(&[
            "  mul) u=$(python3 -c 'import json; print(json.load(open(\"calc.json\"))[\"unit\"])'); echo $(( $2 * $3 * u ));;",
        ]),
    );
    repo.write("calc.json", "{\n  \"unit\": 1,\n  \"name\": \"calc\"\n}\n");
    green(&repo, "sh tests/test_mul.sh");
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "builtin", "mutants": 8,
            "killed": 7, "survived": ["calc.sh:3 `*` → `/`"],
            "files": [{"path": "calc.sh", "mutants": 6, "killed": 5},
                      {"path": "calc.json", "mutants": 2, "killed": 2}]}])
    );
}

/// A file padded with easily made mutants (`calc.sh`, first in the order) does not spend the
/// budget before another file of the task has one: with `max_mutants = 3`, `mul.sh`'s first
/// mutant runs (killed), where the first of each of `calc.sh`'s lines took all three and
/// left `mul.sh` `not_run`, which `enforce` refuses.
#[test]
fn a_padded_file_does_not_leave_another_file_with_no_mutant_run() {
    let repo = case_calc_planned("adequacy = \"enforce\"\nmax_mutants = 3", MUL_PLAN);
    repo.write("tests/test_mul.sh", "[ \"$(sh calc.sh mul 4 3)\" = 12 ]\n");
    red(&repo, "sh tests/test_mul.sh");
    repo.write(
        "calc.sh",
        &calc(&[
            "  mul) . ./mul.sh;;",
            "  one) echo 1;;",
            "  two) echo 2;;",
            "  three) echo 3;;",
        ]),
    );
    repo.write("mul.sh", "echo $(( $2 * $3 ))\n");
    green(&repo, "sh tests/test_mul.sh");
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "builtin", "mutants": 3,
            "killed": 2, "survived": ["calc.sh:4 `1` → `0`"], "not_run": 13,
            "files": [{"path": "calc.sh", "mutants": 2, "killed": 1, "not_run": 10},
                      {"path": "mul.sh", "mutants": 1, "killed": 1, "not_run": 3}]}])
    );
}

/// `verify` shows the final note's adequacy in text, task by task and file by file, in the
/// words `attest` uses: mutants run, killed and not run per file, and each survivor (the
/// per-file numbers were in the note's JSON only).
#[test]
fn verify_shows_the_final_notes_adequacy_per_file_in_text() {
    let repo = case_calc_planned("adequacy = \"enforce\"\nmax_mutants = 3", MUL_PLAN);
    repo.write("tests/test_mul.sh", "[ \"$(sh calc.sh mul 4 3)\" = 12 ]\n");
    red(&repo, "sh tests/test_mul.sh");
    repo.write(
        "calc.sh",
        &calc(&[
            "  mul) . ./mul.sh;;",
            "  one) echo 1;;",
            "  two) echo 2;;",
            "  three) echo 3;;",
        ]),
    );
    repo.write("mul.sh", "echo $(( $2 * $3 ))\n");
    green(&repo, "sh tests/test_mul.sh");
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let out = repo.run(&["verify"]);
    out.expect(0);
    let subject = repo.git(&["log", "-1", "--format=%s", &squashed]);
    let subject = subject.trim();
    assert_eq!(
        out.stdout,
        format!(
            "0 checkpoint commits and 1 squashed PR commit in HEAD^..HEAD (3 commits looked at)\n  \
             ok       {} {subject}\n           squashed PR \"{subject}\" (workflow main): the gates \
             passed on the squashed commit in a clean worktree (tests); 1 checkpoint folded in\n           \
             adequacy of task 1 (step 1.1): killed 2 of 3 mutants (66%, made by the built-in \
             mutator), 13 not run\n             \
             file calc.sh: killed 1 of 2 mutants (50%), 10 not run\n             \
             file mul.sh: killed 1 of 1 mutants (100%), 3 not run\n             \
             survived: calc.sh:4 `1` → `0`\n  \
             noattest {} Merge branch 'feat/multiply'\n           no attestation: `git orchestrate \
             attest` in CI or the server hook gives one\n",
            &squashed[..12],
            &main_tip(&repo)[..12]
        )
    );
}

/// A `package.json` whose only key is `scripts`, its `test` script `test`.
fn package(test: &str) -> String {
    format!(
        "{{\n  \"scripts\": {{\n    \"test\": {}\n  }}\n}}\n",
        serde_json::Value::from(test)
    )
}

/// Task 1's RED step writes `package.json`, its `test` script [`STRONG`] (the special case's
/// result checked too), and pins `npm test`, its GREEN step the special case; task 2's RED
/// step rewrites `package.json` to `later` beside its own test (and writes `files`), its
/// GREEN step adds `sub`. Squashed.
fn script_rewritten_later(repo: &TestRepo, later: &str, files: &[(&str, &str)]) {
    script_rewritten_later_by(repo, "npm test", &package(STRONG.trim_end()), later, files);
}

/// [`script_rewritten_later`], task 1's `package.json` `first` and its RED command
/// `command` (`yarn test`, `pnpm run check`: tests/cli/adequacy_yarn_pnpm.rs).
pub(crate) fn script_rewritten_later_by(
    repo: &TestRepo,
    command: &str,
    first: &str,
    later: &str,
    files: &[(&str, &str)],
) {
    repo.write("package.json", first);
    red(repo, command);
    repo.write("calc.sh", &calc(&[SPECIAL]));
    repo.submit_test(command, None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.write("tests/test_sub.sh", SUB_TEST);
    repo.write("package.json", later);
    for (path, text) in files {
        repo.write(path, text);
    }
    red(repo, "sh tests/test_sub.sh");
    repo.write("calc.sh", &calc(&[SPECIAL, SUB_ARM]));
    green(repo, "sh tests/test_sub.sh");
    squash(repo);
}

/// The `package.json` script a RED command runs (`npm test`), rewritten weaker by a later
/// task (its special case's result no longer checked, `true`, a run of another script that
/// checks less, or of a file the later task wrote), measures the earlier task's code with the scripts as the squash has
/// them: refused under enforce, naming the mutants that survive. (The script was run as
/// task 1 left it: 8 of 8 killed, and `package.json` mutated as task 1's code.)
#[test]
fn a_package_json_script_the_red_command_runs_rewritten_later_refuses_the_earlier_task() {
    let survivors = "- calc.sh:3 `99` → `100`\n\
                     - calc.sh:3 `0` → ``\n\
                     - calc.sh:3 `0` → `1`\n";
    let quick = format!(
        "{{\"scripts\": {{\"test\": \"npm run quick\", \"quick\": {}}}}}\n",
        serde_json::Value::from(WEAK.trim_end())
    );
    let other: &[(&str, &str)] = &[("t/other.sh", WEAK)];
    for (later, files, killed) in [
        (package(WEAK.trim_end()), &[][..], 5),
        (package("true"), &[], 0),
        (quick, &[], 5),
        (package("sh t/other.sh"), other, 5),
    ] {
        let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.9", TWO_TASKS);
        script_rewritten_later(&repo, &later, files);
        let main = main_tip(&repo);
        let out = repo.run(&["submit-work", "-s", "squashed"]);
        out.expect(1);
        let refusal = format!(
            "FAILURE: task 1's RED test (step 1.1, `npm test`) killed {killed} of 8 mutants of \
             the code the task wrote (made by the built-in mutator), below the 90% [verify] \
             min_killed: it does not check what the code does. Surviving mutants (the test \
             still passes with each):\n"
        );
        assert!(out.stdout.starts_with(&refusal), "{later}: {}", out.stdout);
        if killed == 5 {
            assert!(
                out.stdout[refusal.len()..].starts_with(survivors),
                "{}",
                out.stdout
            );
        }
        assert_eq!(main_tip(&repo), main, "{later}");
    }
}

/// The honest twins: the script left as task 1 wrote it, or made to run task 2's test after
/// task 1's check (`… && sh tests/test_sub.sh`, which fails on task 1's code, so task 1's own
/// check is kept: it fails wherever the squash's does). Each task's code measured in full,
/// no mutant of `package.json` (its only change is the test script), and the squash accepted.
#[test]
fn a_package_json_script_left_alone_or_run_further_later_measures_the_earlier_task_in_full() {
    let strong = STRONG.trim_end();
    for later in [
        package(strong),
        package(&format!("{strong} && sh tests/test_sub.sh")),
    ] {
        let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.9", TWO_TASKS);
        script_rewritten_later(&repo, &later, &[]);
        repo.run(&["submit-work", "-s", "squashed"]).expect(0);
        assert_eq!(
            final_note(&repo)["adequacy"],
            serde_json::json!([
                {"task": 1, "step": "1.1", "tool": "builtin", "mutants": 8, "killed": 8,
                 "files": [{"path": "calc.sh", "mutants": 8, "killed": 8}],
                 "scripts": ["package.json: test"]},
                {"task": 2, "step": "2.1", "tool": "builtin", "mutants": 4, "killed": 4,
                 "files": [{"path": "calc.sh", "mutants": 4, "killed": 4}],
                 "scripts": ["package.json: test"]}]),
            "{later}"
        );
    }
}

/// The same measure by `attest` in a fresh clone (which reads `package.json` from the RED
/// tree and the squash's tree the chain carries): task 1's code measured with the script
/// task 2 left (5 of 8), where the share is met (`min_killed` 0.5), with no mutant of
/// `package.json`.
#[test]
fn a_package_json_script_rewritten_later_is_measured_so_in_a_fresh_clone() {
    use crate::attest::{Server, push};
    let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.5", TWO_TASKS);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    script_rewritten_later(&repo, &package(WEAK.trim_end()), &[]);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let expected = serde_json::json!([
        {"task": 1, "step": "1.1", "tool": "builtin", "mutants": 8, "killed": 5,
         "survived": ["calc.sh:3 `99` → `100`", "calc.sh:3 `0` → ``", "calc.sh:3 `0` → `1`"],
         "files": [{"path": "calc.sh", "mutants": 8, "killed": 5}],
         "scripts": ["package.json: test"]},
        {"task": 2, "step": "2.1", "tool": "builtin", "mutants": 4, "killed": 4,
         "files": [{"path": "calc.sh", "mutants": 4, "killed": 4}],
         "scripts": ["package.json: test"]}]);
    the_note_and_attest_in_ci_say(&repo, &server, &expected);
    // And the text of `attest` names the script, as `verify`'s does.
    let merge = main_tip(&repo);
    let ci = ci_clone(&repo, &server);
    let text = ci.run(&["attest", "--no-note", &merge]).stdout.clone();
    assert!(
        text.contains(
            "witness: package.json: test (a script the RED command runs: test code, as the \
             squash has it)\n"
        ),
        "{text}"
    );
}

/// The squashed PR's final note says `expected` of adequacy, and so does `attest --json` of
/// its merge, pushed through the server's hook, in a CI-style clone: field by field.
pub(crate) fn the_note_and_attest_in_ci_say(
    repo: &TestRepo,
    server: &crate::attest::Server,
    expected: &serde_json::Value,
) {
    assert_eq!(&final_note(repo)["adequacy"], expected);
    mark_done_and_merge(repo).expect(0);
    let merge = main_tip(repo);
    crate::attest::push(repo, server, &[], &["main", REF]).expect(0);
    let ci = ci_clone(repo, server);
    let json = ci.run(&["attest", "--no-note", "--json", &merge]).json();
    assert_eq!(&json["verdicts"][0]["adequacy"], expected);
}
