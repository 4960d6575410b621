//! How hard the final check leans on each pinned RED test (docs/integrity.md, "Adequacy by
//! mutation", "Repeat"): a shell calculator whose task adds `mul`, its test run against
//! mutants of the line the task wrote (a test that only greps for the case arm lets them
//! survive; an honest one kills them), each task's runs in worktrees of their own, and every
//! run repeated.

use pretty_assertions::assert_eq;

use crate::oracle::{
    CALC_CONFIG, MUL_PLAN, green, main_tip, mark_done_and_merge, outside, red, squash,
};
use crate::support::*;

pub(crate) const CALC: &str = "case \"$1\" in\n  add) echo $(( $2 + $3 ));;\nesac\n";

/// A case-style shell calculator on main (`sh calc.sh add 2 3`), with `[verify]` set to
/// `verify`, and the PR to add `mul` under way.
fn case_calc(verify: &str) -> TestRepo {
    case_calc_planned(verify, MUL_PLAN)
}

/// [`case_calc`] with the PR planned as `plan`.
pub(crate) fn case_calc_planned(verify: &str, plan: &str) -> TestRepo {
    let repo = TestRepo::empty();
    repo.write("calc.sh", CALC);
    repo.write("tests/test_add.sh", "[ \"$(sh calc.sh add 2 3)\" = 5 ]\n");
    repo.write(
        "run_tests.sh",
        "for t in tests/test_*.sh; do sh \"$t\" || { echo \"FAILED: $t\"; exit 1; }; done\n",
    );
    repo.write("docs/plan.md", "# Plan\n## PR 1: feat: Multiply\n");
    repo.write(
        ".orchestrate.toml",
        &format!("{CALC_CONFIG}\n[verify]\n{verify}\n"),
    );
    repo.commit_all("calculator");
    repo.submit_plan(plan).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo
}

/// RED with `test`, GREEN with `mul` as the new case arm, squashed.
fn task(repo: &TestRepo, test: &str, mul: &str) {
    repo.write("tests/test_mul.sh", test);
    red(repo, "sh tests/test_mul.sh");
    repo.write("calc.sh", &CALC.replace("esac", &format!("{mul}\nesac")));
    green(repo, "sh tests/test_mul.sh");
    squash(repo);
}

const GREP_TEST: &str = "grep -q \"mul)\" calc.sh\n";
const FAKE_MUL: &str = "  mul) echo 0;;";
const HONEST_TEST: &str = "[ \"$(sh calc.sh mul 4 3)\" = 12 ]\n";
const MUL_ARM: &str = "  mul) echo $(( $2 * $3 ));;";

pub(crate) fn final_note(repo: &TestRepo) -> serde_json::Value {
    let text = repo.git(&["notes", "--ref=orchestrator", "show", "HEAD"]);
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a note line is JSON"))
        .find(|n| n["kind"] == "final")
        .expect("a final record")
}

#[test]
fn a_test_that_only_greps_is_named_with_its_surviving_mutants_in_report() {
    let repo = case_calc("adequacy = \"report\"");
    task(&repo, GREP_TEST, FAKE_MUL);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "builtin", "mutants": 3, "killed": 1,
            "survived": ["calc.sh:3 `0` → ``", "calc.sh:3 `0` → `1`"],
            "files": [{"path": "calc.sh", "mutants": 3, "killed": 1}]}])
    );
}

#[test]
fn a_test_that_only_greps_is_refused_in_enforce_naming_the_task_share_and_survivors() {
    let repo = case_calc("adequacy = \"enforce\"\nmin_killed = 0.5");
    task(&repo, GREP_TEST, FAKE_MUL);
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.contains(
            "task 1's RED test (step 1.1, `sh tests/test_mul.sh`) killed 1 of 3 mutants of the \
             code the task wrote (made by the built-in mutator), below the 50% [verify] min_killed"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("- calc.sh:3 `0` → `1`\n"),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    assert_eq!(main_tip(&repo), main);
}

#[test]
fn an_honest_test_kills_the_mutants_and_is_accepted_in_enforce() {
    let repo = case_calc("adequacy = \"enforce\"");
    task(&repo, HONEST_TEST, MUL_ARM);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "builtin", "mutants": 4, "killed": 4,
            "files": [{"path": "calc.sh", "mutants": 4, "killed": 4}]}])
    );
}

/// A test that reads the code's text instead of running it fails on every mutant of that
/// text: a `grep` of the very line the task wrote, or the file's checksum, kills all three
/// mutants of `mul) echo 0;;`. The same program written otherwise (run from an encoded copy
/// of its text) fails that test too, where the code passes it: the kills are no measure, the
/// task is unmeasured, and `enforce` refuses the squash; `report` names it in the final note.
#[test]
fn a_test_that_reads_the_text_the_task_wrote_is_unmeasured_and_refused_in_enforce() {
    let why = "the test fails on the task's own code written otherwise (calc.sh run from an \
               encoded copy of its text, exit 1): it checks the code's text, not what the code \
               does; test what it does";
    let with_fake = CALC.replace("esac", &format!("{FAKE_MUL}\nesac"));
    let sum = std::process::Command::new("sh")
        .args(["-c", "cksum"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(with_fake.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    let sum = String::from_utf8(sum.stdout).unwrap();
    let checksum = format!("[ \"$(cksum < calc.sh)\" = '{}' ]\n", sum.trim_end());
    for test in ["grep -qF 'mul) echo 0;;' calc.sh\n", checksum.as_str()] {
        let repo = case_calc("adequacy = \"enforce\"\nmin_killed = 0.5");
        task(&repo, test, FAKE_MUL);
        let main = main_tip(&repo);
        let out = repo.run(&["submit-work", "-s", "squashed"]);
        out.expect(1);
        assert!(
            out.stdout.starts_with(&format!(
                "FAILURE: task 1's RED test (step 1.1, `sh tests/test_mul.sh`) was measured \
                 against no mutant of the code the task wrote ({why}): under [verify] adequacy = \
                 \"enforce\" a test that was not measured does not pass."
            )),
            "{test}{}",
            out.stdout
        );
        assert_eq!(repo.status(), "AWAITING_FINALIZATION");
        assert_eq!(main_tip(&repo), main);
    }
    let repo = case_calc("adequacy = \"report\"");
    task(&repo, "grep -qF 'mul) echo 0;;' calc.sh\n", FAKE_MUL);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "builtin", "mutants": 0,
            "killed": 0, "unmeasured": why}])
    );
}

/// Code a RED step writes is the task's code too: the fake arm written beside the test in the
/// RED step, with a GREEN step that only adds a comment, is mutated, and the grep-only test
/// is refused in enforce as when the GREEN step writes it.
#[test]
fn code_written_in_the_red_step_is_mutated_and_a_grep_only_test_is_refused() {
    let repo = case_calc("adequacy = \"enforce\"\nmin_killed = 0.5");
    repo.write(
        "tests/test_mul.sh",
        "grep -q \"mul)\" calc.sh && grep -q \"# done\" calc.sh\n",
    );
    repo.write(
        "calc.sh",
        &CALC.replace("esac", &format!("{FAKE_MUL}\nesac")),
    );
    red(&repo, "sh tests/test_mul.sh");
    let green_calc = format!(
        "{}# done\n",
        CALC.replace("esac", &format!("{FAKE_MUL}\nesac"))
    );
    repo.write("calc.sh", &green_calc);
    green(&repo, "sh tests/test_mul.sh");
    squash(&repo);
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.contains(
            "task 1's RED test (step 1.1, `sh tests/test_mul.sh`) killed 1 of 3 mutants of the \
             code the task wrote (made by the built-in mutator), below the 50% [verify] min_killed"
        ),
        "{}",
        out.stdout
    );
    assert_eq!(main_tip(&repo), main);
}

/// Code in a file that is not text where the task ends (one byte that is no UTF-8 in a
/// comment of the script: it still runs) can have no mutant: under enforce the task is
/// unmeasured and refused, naming the file, not passed on no mutant.
#[test]
fn code_in_a_file_that_is_not_text_is_unmeasured_and_refused_in_enforce() {
    let repo = case_calc("adequacy = \"enforce\"\nmin_killed = 0.5");
    repo.write("tests/test_mul.sh", "grep -q \"mul)\" calc.sh\n");
    red(&repo, "sh tests/test_mul.sh");
    let mut fake = CALC
        .replace("esac", &format!("{FAKE_MUL}\nesac"))
        .into_bytes();
    fake.extend_from_slice(b"# \xff\n");
    std::fs::write(repo.dir().join("calc.sh"), fake).expect("write calc.sh");
    green(&repo, "sh tests/test_mul.sh");
    squash(&repo);
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.contains(
            "calc.sh, code the task wrote, is not text where the task ends (a byte that is no \
             UTF-8, or over the size cap): no mutant of it can be made; keep code in UTF-8 \
             text): under [verify] adequacy = \"enforce\" a test that was not measured does not \
             pass. Do what the parenthesis says, then squash again"
        ),
        "{}",
        out.stdout
    );
    assert_eq!(main_tip(&repo), main);
}

/// Two honest tasks whose RED command runs the whole suite: the first task is measured in the
/// second's RED tree with the second's failing test put back as it was (absent), so its test
/// passes unmutated there and kills its mutants; enforce accepts the squash.
#[test]
fn a_whole_suite_red_command_measures_each_of_two_tasks_in_enforce() {
    let repo = case_calc_planned(
        "adequacy = \"enforce\"",
        r#"{"masterPlanPath": "docs/plan.md", "prTitle": "feat: Multiply", "summary": "mul",
  "verificationPlan": "the tests pass",
  "tasks": [{"taskName": "mul", "status": "TODO", "tdd_steps": [
    {"type": "RED", "description": "test mul", "status": "TODO"},
    {"type": "GREEN", "description": "implement mul", "status": "TODO"}]},
   {"taskName": "sub", "status": "TODO", "tdd_steps": [
    {"type": "RED", "description": "test sub", "status": "TODO"},
    {"type": "GREEN", "description": "implement sub", "status": "TODO"}]}]}"#,
    );
    let suite = "sh run_tests.sh";
    repo.write("tests/test_mul.sh", HONEST_TEST);
    red(&repo, suite);
    let with_mul = CALC.replace("esac", &format!("{MUL_ARM}\nesac"));
    repo.write("calc.sh", &with_mul);
    repo.submit_test(suite, None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.write("tests/test_sub.sh", "[ \"$(sh calc.sh sub 7 3)\" = 4 ]\n");
    red(&repo, suite);
    repo.write(
        "calc.sh",
        &with_mul.replace("esac", "  sub) echo $(( $2 - $3 ));;\nesac"),
    );
    green(&repo, suite);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let adequacy = final_note(&repo)["adequacy"].clone();
    let measured: Vec<(u64, u64)> = adequacy
        .as_array()
        .expect("a list")
        .iter()
        .map(|t| {
            (
                t["mutants"].as_u64().unwrap(),
                t["killed"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(measured.len(), 2, "{adequacy}");
    assert!(
        measured
            .iter()
            .all(|(mutants, killed)| *mutants > 0 && killed == mutants),
        "{adequacy}"
    );
    assert!(
        adequacy
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t.get("unmeasured").is_none()),
        "{adequacy}"
    );
}

/// Under enforce, a task whose test ran against no mutant (the time budget ran out on the
/// test's own run) is refused, naming why: a measure that did not happen is no pass.
#[test]
fn a_test_measured_against_no_mutant_is_refused_in_enforce() {
    let repo = case_calc("adequacy = \"enforce\"\nmutation_timeout = \"3s\"");
    task(&repo, &format!("sleep 2\n{GREP_TEST}"), FAKE_MUL);
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.contains(
            "task 1's RED test (step 1.1, `sh tests/test_mul.sh`) was measured against no mutant \
             of the code the task wrote (none of its 3 mutants ran within [verify] \
             mutation_timeout; make the test faster or raise it): under [verify] adequacy = \
             \"enforce\" a test that was not measured does not pass. Do what the parenthesis \
             says, then squash again"
        ),
        "{}",
        out.stdout
    );
    assert_eq!(main_tip(&repo), main);
}

/// `max_mutants` caps the mutants run per task: the first in the mutator's order run, the
/// rest are counted as not run.
#[test]
fn the_mutant_budget_caps_what_runs_and_counts_the_rest() {
    let repo = case_calc("adequacy = \"report\"\nmax_mutants = 2");
    task(&repo, HONEST_TEST, MUL_ARM);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "builtin", "mutants": 2, "killed": 2, "not_run": 2,
            "files": [{"path": "calc.sh", "mutants": 2, "killed": 2, "not_run": 2}]}])
    );
}

#[test]
fn adequacy_off_runs_no_mutant() {
    let repo = case_calc("adequacy = \"off\"");
    task(&repo, GREP_TEST, FAKE_MUL);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert!(final_note(&repo).get("adequacy").is_none());
}

#[test]
fn a_min_killed_above_one_is_bad_input() {
    let repo = TestRepo::with_config("main_branch = \"main\"\n\n[verify]\nmin_killed = 1.5\n");
    let out = repo.run(&["get-task"]);
    out.expect(2);
    assert!(
        out.stderr.contains("must be a fraction from 0 to 1"),
        "{}",
        out.stderr
    );
}

/// Two tasks: multiply, then divide.
const TWO_TASKS: &str = r#"{"masterPlanPath": "docs/plan.md", "prTitle": "feat: Multiply", "summary": "mul",
  "verificationPlan": "the tests pass",
  "tasks": [{"taskName": "mul", "status": "TODO", "tdd_steps": [
    {"type": "RED", "description": "test mul", "status": "TODO"},
    {"type": "GREEN", "description": "implement mul", "status": "TODO"}]},
   {"taskName": "div", "status": "TODO", "tdd_steps": [
    {"type": "RED", "description": "test div", "status": "TODO"},
    {"type": "GREEN", "description": "implement div", "status": "TODO"}]}]}"#;

/// Task 1's test leaves an ignored `.mul_ok` behind; task 2's test passes only where it is.
/// In worktrees shared between tasks task 2 would pass on what task 1's run left; each task's
/// own worktree holds only what the commit holds, and task 2 fails there.
#[test]
fn what_one_tasks_test_leaves_ignored_is_not_seen_by_the_next() {
    leftover_is_not_seen_by_the_next(".mul_ok", "touch .mul_ok", "[ -e .mul_ok ]", |dir| {
        std::fs::write(dir.join(".mul_ok"), "").unwrap()
    });
}

/// As [`what_one_tasks_test_leaves_ignored_is_not_seen_by_the_next`], the leftover a file in
/// new directories (an ignored build directory, say): a reset removes the directories too.
#[test]
fn what_one_tasks_test_leaves_in_a_new_nested_directory_is_not_seen_by_the_next() {
    leftover_is_not_seen_by_the_next(
        ".out/",
        "mkdir -p .out/deep/er && touch .out/deep/er/mul_ok",
        "[ -e .out/deep/er/mul_ok ]",
        |dir| {
            std::fs::create_dir_all(dir.join(".out/deep/er")).unwrap();
            std::fs::write(dir.join(".out/deep/er/mul_ok"), "").unwrap();
        },
    );
}

/// As [`what_one_tasks_test_leaves_ignored_is_not_seen_by_the_next`], the leftover a symlink
/// (to a file the commit holds, so that following it finds something).
#[test]
fn a_symlink_one_tasks_test_leaves_is_not_seen_by_the_next() {
    leftover_is_not_seen_by_the_next(
        ".mul_ok",
        "ln -sf calc.sh .mul_ok",
        "[ -L .mul_ok ]",
        |dir| std::os::unix::fs::symlink("calc.sh", dir.join(".mul_ok")).unwrap(),
    );
}

/// Task 1's test leaves what `leave` makes (`ignore` is the `.gitignore` line that keeps it
/// out of the commits); task 2's test is `seen`, which passes only where it is, and where
/// `by_hand` made it in the working tree for its GREEN step. The final check must refuse.
fn leftover_is_not_seen_by_the_next(
    ignore: &str,
    leave: &str,
    seen: &str,
    by_hand: impl Fn(&std::path::Path),
) {
    let repo = leftover_calc(ignore, "[verify]\nadequacy = \"off\"\n");
    leftover_tasks(&repo, ignore, leave, seen, by_hand);
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout
            .contains("the final check of task 2's RED test (step 2.1, `sh tests/test_z_div.sh`")
            && out.stdout.contains("it fails on the squashed commit"),
        "{}",
        out.stdout
    );
    assert_eq!(main_tip(&repo), main);
}

/// A case-style calculator on main whose `.gitignore` is `ignore`, its configuration
/// [`CALC_CONFIG`] and `more`, with the two tasks of [`TWO_TASKS`] planned.
pub(crate) fn leftover_calc(ignore: &str, more: &str) -> TestRepo {
    let repo = TestRepo::empty();
    repo.write("calc.sh", CALC);
    repo.write(".gitignore", &format!("{ignore}\n"));
    repo.write(
        "run_tests.sh",
        "for t in tests/test_*.sh; do sh \"$t\" || { echo \"FAILED: $t\"; exit 1; }; done\n",
    );
    repo.write("docs/plan.md", "# Plan\n## PR 1: feat: Multiply\n");
    repo.write(".orchestrate.toml", &format!("{CALC_CONFIG}\n{more}"));
    repo.commit_all("calculator");
    repo.submit_plan(TWO_TASKS).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo
}

/// The two tasks of [`leftover_is_not_seen_by_the_next`] on [`leftover_calc`]'s repository,
/// squashed: task 1's honest test of `mul` then leaves what `leave` makes, task 2's test is
/// `seen`, and `div` is honest.
pub(crate) fn leftover_tasks(
    repo: &TestRepo,
    ignore: &str,
    leave: &str,
    seen: &str,
    by_hand: impl Fn(&std::path::Path),
) {
    repo.write(
        "tests/test_mul.sh",
        &format!("[ \"$(sh calc.sh mul 4 3)\" = 12 ] && {leave}\n"),
    );
    red(repo, "sh tests/test_mul.sh");
    repo.write(
        "calc.sh",
        &CALC.replace("esac", &format!("{MUL_ARM}\nesac")),
    );
    repo.submit_test("sh tests/test_mul.sh", None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    // Task 2: its test, sorted after task 1's so the gate runs it second, reads the marker.
    let marker = repo.path.join(ignore.trim_end_matches('/'));
    match std::fs::symlink_metadata(&marker) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&marker).unwrap(),
        _ => std::fs::remove_file(&marker).unwrap(),
    }
    repo.write("tests/test_z_div.sh", &format!("{seen}\n"));
    red(repo, "sh tests/test_z_div.sh");
    let with_div = CALC.replace(
        "esac",
        &format!("{MUL_ARM}\n  div) echo $(( $2 / $3 ));;\nesac"),
    );
    repo.write("calc.sh", &with_div);
    by_hand(&repo.path);
    green(repo, "sh tests/test_z_div.sh");
    squash(repo);
}

/// Task 1's test, run on the PR's base, leaves an ignored `.base_seen` there; task 2's test
/// is `[ ! -e .base_seen ]`, which checks nothing. In a base worktree kept between tasks it
/// would fail on the base for the leftover and pass on the squash; the worktree is reset to
/// the base's tree between tasks, so task 2's test passes on the base and is refused.
#[test]
fn what_one_tasks_test_leaves_on_the_base_is_not_seen_by_the_next() {
    base_leftover_is_not_seen_by_the_next(".base_seen");
}

/// As [`what_one_tasks_test_leaves_on_the_base_is_not_seen_by_the_next`], the marker left in
/// `tests/`, the directory both tasks' pinned tests are put into on the base: kept between
/// the tasks for the next pin, it is emptied of all else.
#[test]
fn what_one_tasks_test_leaves_beside_its_pin_on_the_base_is_not_seen_by_the_next() {
    base_leftover_is_not_seen_by_the_next("tests/.base_seen");
}

/// Task 1's RED test leaves `marker` on the base; task 2's test is `[ ! -e marker ]`.
fn base_leftover_is_not_seen_by_the_next(marker: &str) {
    let repo = TestRepo::empty();
    repo.write("calc.sh", CALC);
    repo.write(".gitignore", &format!("{marker}\n"));
    repo.write(
        "run_tests.sh",
        "for t in tests/test_*.sh; do sh \"$t\" || { echo \"FAILED: $t\"; exit 1; }; done\n",
    );
    repo.write("docs/plan.md", "# Plan\n## PR 1: feat: Multiply\n");
    repo.write(
        ".orchestrate.toml",
        &format!("{CALC_CONFIG}\n[verify]\nadequacy = \"off\"\n"),
    );
    repo.commit_all("calculator");
    repo.submit_plan(TWO_TASKS).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.write(
        "tests/test_mul.sh",
        &format!(
            "grep -q \"mul)\" calc.sh || touch {marker}\n[ \"$(sh calc.sh mul 4 3)\" = 12 ]\n"
        ),
    );
    red(&repo, "sh tests/test_mul.sh");
    repo.write(
        "calc.sh",
        &CALC.replace("esac", &format!("{MUL_ARM}\nesac")),
    );
    repo.submit_test("sh tests/test_mul.sh", None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    // Task 2: fails here only for the marker task 1's RED run left in the working tree.
    repo.write("tests/test_z_div.sh", &format!("[ ! -e {marker} ]\n"));
    red(&repo, "sh tests/test_z_div.sh");
    std::fs::remove_file(repo.path.join(marker)).unwrap();
    let with_div = CALC.replace(
        "esac",
        &format!("{MUL_ARM}\n  div) echo $(( $2 / $3 ));;\nesac"),
    );
    repo.write("calc.sh", &with_div);
    green(&repo, "sh tests/test_z_div.sh");
    squash(&repo);
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout
            .contains("the final check of task 2's RED test (step 2.1, `sh tests/test_z_div.sh`")
            && out.stdout.contains("it passes on the PR's base"),
        "{}",
        out.stdout
    );
    assert_eq!(main_tip(&repo), main);
}

/// A test whose verdict follows a counter outside the repository (pass, fail, pass …) once
/// armed: the final check's repeated runs disagree, and the squash is refused as flaky.
#[test]
fn a_test_that_flips_between_runs_is_refused_as_flaky() {
    let repo = case_calc("adequacy = \"off\"\nruns = 2");
    let counter = outside(&repo, "coin");
    let test = format!(
        "grep -q \"mul)\" calc.sh || exit 1\nf='{}'\n[ -e \"$f\" ] || exit 0\n\
         n=$(cat \"$f\")\necho $((n + 1)) > \"$f\"\n[ $((n % 2)) -eq 0 ]\n",
        counter.display()
    );
    task(&repo, &test, MUL_ARM);
    // Armed now: the clean check's gate runs it first (pass), then the RED proof twice.
    std::fs::write(&counter, "0").unwrap();
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    let _ = std::fs::remove_file(&counter);
    assert!(
        out.stdout.contains(
            "task 1's RED test (step 1.1, `sh tests/test_mul.sh`) is flaky: run on the squashed \
             commit again and again it gave fail, then pass"
        ),
        "{}",
        out.stdout
    );
    assert_eq!(main_tip(&repo), main);
}

/// A shell test that waits up to five seconds for `cond` to hold, then is `cond`: whatever
/// is to make it hold has time to, and the verdict is the condition's, not the clock's.
fn waiting_for(cond: &str) -> String {
    format!("i=0\nwhile [ $i -lt 50 ] && ! {cond}; do sleep 0.1; i=$((i + 1)); done\n{cond}\n")
}

/// Task 1's test passes on `mul` and, in a linked worktree (the checks' scratch ones, whose
/// `.git` is a file) run alone (not by the gate, which sets `GATE`), starts `orphan`, which
/// leaves the test's process group and makes `$READY` once it has left it (the test waits
/// for that, so the orphan is out of the group the test's end kills); task 2's test passes
/// in the gate or where `.here` was made by hand, else once `cond` holds, which nothing the
/// squashed commit holds makes true: only what task 1's orphan does after its test ended
/// can. A tracked `flag.txt` reads `no`. The final check must refuse (task 2's test fails on
/// the squashed commit, or, had the orphan written before it was ended, task 1's changed the
/// tree), as it did when each task had new worktrees; it accepts if the orphan outlives the
/// test and writes into the worktree reset for task 2. Returns the final check's output.
fn what_an_orphan_does_after_its_test(orphan: &str, cond: &str) -> Run {
    let repo = orphan_pr(orphan, cond, None, false);
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    assert_eq!(main_tip(&repo), main, "{}", out.stdout);
    out
}

/// The PR of [`what_an_orphan_does_after_its_test`], squashed. With `armed`, task 1's test
/// starts its orphan only once that file exists, and until then task 2's test is an honest
/// test of `div`. With `in_gate`, task 1's test starts it when the gate runs it instead.
fn orphan_pr(orphan: &str, cond: &str, armed: Option<&std::path::Path>, in_gate: bool) -> TestRepo {
    let gate = if in_gate { "-n" } else { "-z" };
    let (when_armed, task_2) = match armed {
        None => (String::new(), waiting_for(cond)),
        Some(armed) => (
            format!(" && [ -e '{}' ]", armed.display()),
            format!(
                "if [ -e '{}' ]; then\n{}else [ \"$(sh calc.sh div 8 2)\" = 4 ]\nfi\n",
                armed.display(),
                waiting_for(cond)
            ),
        ),
    };
    let repo = TestRepo::empty();
    repo.write("calc.sh", CALC);
    repo.write("flag.txt", "no");
    repo.write(".gitignore", ".mul_ok\n.here\n");
    repo.write(
        "run_tests.sh",
        "export GATE=1\nfor t in tests/test_*.sh; do sh \"$t\" || { echo \"FAILED: $t\"; exit 1; }; done\n",
    );
    repo.write("docs/plan.md", "# Plan\n## PR 1: feat: Multiply\n");
    repo.write(
        ".orchestrate.toml",
        &format!("{CALC_CONFIG}\n[verify]\nadequacy = \"off\"\n"),
    );
    repo.commit_all("calculator");
    repo.submit_plan(TWO_TASKS).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.write(
        "tests/test_mul.sh",
        &format!(
            "[ \"$(sh calc.sh mul 4 3)\" = 12 ] || exit 1\n\
             [ -f .git ] && [ {gate} \"$GATE\" ]{when_armed} || exit 0\n\
             READY=$(mktemp -u)\nexport READY\n{orphan}\n{}rm -f \"$READY\"\n",
            waiting_for("[ -e \"$READY\" ]")
        ),
    );
    red(&repo, "sh tests/test_mul.sh");
    repo.write(
        "calc.sh",
        &CALC.replace("esac", &format!("{MUL_ARM}\nesac")),
    );
    repo.submit_test("sh tests/test_mul.sh", None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    // Task 2: sorted after task 1's, so the gate runs it second.
    repo.write(
        "tests/test_z_div.sh",
        &format!("[ -e .here ] || [ -n \"$GATE\" ] && exit 0\n{task_2}"),
    );
    red(&repo, "sh tests/test_z_div.sh");
    let with_div = CALC.replace(
        "esac",
        &format!("{MUL_ARM}\n  div) echo $(( $2 / $3 ));;\nesac"),
    );
    repo.write("calc.sh", &with_div);
    std::fs::write(repo.path.join(".here"), "").unwrap();
    green(&repo, "sh tests/test_z_div.sh");
    squash(&repo);
    repo
}

/// The final check refused `out`: task 2's test failed on the squashed commit, or task 1's
/// changed the tree (the orphan wrote before it was ended).
fn refused_for_the_orphan(out: &Run) {
    out.expect(1);
    assert!(
        (out.stdout
            .contains("the final check of task 2's RED test (step 2.1, `sh tests/test_z_div.sh`")
            && out.stdout.contains("it fails on the squashed commit"))
            || out.stdout.contains(
                "the RED test of step 1.1 (`sh tests/test_mul.sh`) changed files of the commit"
            ),
        "{}",
        out.stdout
    );
}

/// Task 1's test leaves `setsid sh -c 'sleep 1; : > .mul_ok' &`: out of its process group, it
/// is not ended with it, and would make `.mul_ok` in the worktree reset for task 2. Every
/// process a proof left is ended before the reset.
#[test]
fn what_a_tests_setsid_child_would_write_after_it_is_not_seen_by_the_next_task() {
    let out = what_an_orphan_does_after_its_test(
        "setsid sh -c ': > \"$READY\"; sleep 1; : > .mul_ok' >/dev/null 2>&1 &",
        "[ -e .mul_ok ]",
    );
    refused_for_the_orphan(&out);
}

/// The same through a double fork: the `setsid` child's parent is gone before the test ends.
#[test]
fn what_a_tests_double_forked_child_would_write_after_it_is_not_seen_by_the_next_task() {
    let out = what_an_orphan_does_after_its_test(
        "( setsid sh -c ': > \"$READY\"; sleep 1; : > .mul_ok' & ) >/dev/null 2>&1 &",
        "[ -e .mul_ok ]",
    );
    refused_for_the_orphan(&out);
}

/// The same through a file it holds open: the reset keeps a tracked file whose bytes it did
/// not change (the same inode), which the orphan would rewrite through its descriptor.
#[test]
fn a_tracked_file_a_tests_child_holds_open_is_not_rewritten_for_the_next_task() {
    let out = what_an_orphan_does_after_its_test(
        "setsid sh -c 'exec 3<>flag.txt; : > \"$READY\"; cd /; sleep 1; printf ok >&3' \
         >/dev/null 2>&1 &",
        "grep -q ok flag.txt",
    );
    refused_for_the_orphan(&out);
}

/// `attest` (unconfined here) reruns the final check on the merge: an orphan of task 1's test,
/// armed once the PR merged, does not make task 2's test pass in the reset worktree either.
#[test]
fn attest_ends_what_a_red_test_left_running_before_the_next_task() {
    let armed_dir = tempfile::tempdir().unwrap();
    let armed = armed_dir.path().join("armed");
    let repo = orphan_pr(
        "setsid sh -c ': > \"$READY\"; sleep 1; : > .mul_ok' >/dev/null 2>&1 &",
        "[ -e .mul_ok ]",
        Some(&armed),
        false,
    );
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    repo.run(&["attest", "--no-note", &merge]).expect(0);
    std::fs::write(&armed, "").unwrap();
    let out = repo.run(&["attest", "--no-note", &merge]);
    refused_for_the_orphan(&out);
}

/// A gate's `setsid` child that writes `.mul_ok` into every worktree beside its own holding
/// the squashed `calc.sh` (the squashed RED worktree, made after the gates ran) is ended when
/// the gates end: task 2's test does not pass on it.
#[test]
fn what_a_gates_setsid_child_would_write_into_the_red_worktrees_is_not_seen() {
    let repo = orphan_pr(
        "setsid sh -c 'r=$(cd .. && pwd); : > \"$READY\"; i=0; while [ $i -lt 100 ]; do \
         for d in \"$r\"/*/; do \
         grep -qs \"mul)\" \"$d/calc.sh\" && : > \"$d/.mul_ok\"; done; sleep 0.1; \
         i=$((i + 1)); done' >/dev/null 2>&1 &",
        "[ -e .mul_ok ]",
        None,
        true,
    );
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    assert_eq!(main_tip(&repo), main, "{}", out.stdout);
    refused_for_the_orphan(&out);
}

/// An honest test of `mul` that, where it fails in a linked worktree (the checks' scratch
/// ones, whose `.git` is a file), leaves `leave` behind, and passes at once where `seen`
/// holds: a mutant run that saw what an earlier one left would survive.
fn leaving(leave: &str, seen: &str) -> String {
    format!(
        "if [ -f .git ]; then\n{seen}\nfi\n\
         [ \"$(sh calc.sh mul 4 3)\" = 12 ] && exit 0\n\
         [ -f .git ] && {{\n{leave}\n}}\nexit 1\n"
    )
}

/// A killed mutant's run leaves an ignored `.seen`, which would make every later mutant's
/// run pass: the worktree is put back after each run, and every mutant is killed. The RED
/// proof's repeated runs are put back between too: unreset, the base's second run would pass
/// on what its first left, and the proof be refused as flaky.
#[test]
fn what_a_mutant_run_leaves_untracked_is_not_seen_by_the_next() {
    let repo = case_calc("adequacy = \"report\"\nruns = 2");
    // Under tests/, with what ignores it: a RED step's file elsewhere is code, and mutated.
    repo.write("tests/.gitignore", ".seen\n");
    let test = leaving(": > tests/.seen", "[ -e tests/.seen ] && exit 0");
    task(&repo, &test, MUL_ARM);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "builtin", "mutants": 4,
            "killed": 4,
            "files": [{"path": "calc.sh", "mutants": 4, "killed": 4}]}])
    );
}

/// A failing run that leaves a directory it made read-only and unreadable (`d/e`, then
/// `chmod 0 d`): the worktrees are still put back between the RED proof's repeated runs and
/// the mutants' runs, and the honest test is accepted, not an I/O error.
#[test]
fn a_read_only_directory_a_failing_run_leaves_is_put_back_too() {
    let repo = case_calc("adequacy = \"report\"\nruns = 2");
    repo.write("tests/.gitignore", "d/\n");
    let test = leaving(
        "mkdir -p tests/d/e && : > tests/d/e/f && chmod 0 tests/d",
        ":",
    );
    task(&repo, &test, MUL_ARM);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "builtin", "mutants": 4,
            "killed": 4,
            "files": [{"path": "calc.sh", "mutants": 4, "killed": 4}]}])
    );
}

/// A killed mutant's run leaves `setsid sh -c 'sleep 0.5; : > .late' &`: out of its process
/// group, it outlives the run and would make `.late` while the next mutant's run waits for
/// it (that run would then pass). Every process a run left is ended before the next.
#[test]
fn what_a_mutant_runs_setsid_child_would_write_after_it_is_not_seen_by_the_next() {
    let repo = case_calc("adequacy = \"report\"\nruns = 1");
    repo.write("tests/.gitignore", ".late\n");
    let orphan = format!(
        "READY=$(mktemp -u)\nexport READY\n\
         setsid sh -c ': > \"$READY\"; sleep 0.5; : > tests/.late' >/dev/null 2>&1 &\n{}rm -f \"$READY\"",
        waiting_for("[ -e \"$READY\" ]")
    );
    // Up to 1.5 s: three times what the orphan sleeps.
    let late = "i=0\nwhile [ $i -lt 15 ] && [ ! -e tests/.late ]; do sleep 0.1; i=$((i + 1)); \
                done\n[ -e tests/.late ] && exit 0";
    task(&repo, &leaving(&orphan, late), MUL_ARM);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "builtin", "mutants": 4,
            "killed": 4,
            "files": [{"path": "calc.sh", "mutants": 4, "killed": 4}]}])
    );
}

/// A Python `Money` on main, with `[verify]` set to `verify` and the PR to add `add` under
/// way; the tests are Python scripts, run by the gate one after another.
fn money(verify: &str) -> TestRepo {
    money_with(verify, &[])
}

/// [`money`], with `files` on main too.
fn money_with(verify: &str, files: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::empty();
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.write(
        "money.py",
        "class Money:\n    def __init__(self, cents):\n        self.cents = cents\n",
    );
    repo.write(
        "tests/test_cents.py",
        &format!("{PY_IMPORT}assert Money(2).cents == 2\n"),
    );
    repo.write(
        "run_tests.sh",
        "for t in tests/test_*.py; do python3 \"$t\" || { echo \"FAILED: $t\"; exit 1; }; done\n",
    );
    repo.write("docs/plan.md", "# Plan\n## PR 1: feat: Multiply\n");
    repo.write(
        ".orchestrate.toml",
        &format!("{CALC_CONFIG}\n[verify]\n{verify}\n"),
    );
    repo.commit_all("money");
    repo.submit_plan(MUL_PLAN).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo
}

/// How a test script finds `money.py` from `tests/`.
const PY_IMPORT: &str = "import os, sys\n\
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))\n\
    from money import Money\n";

/// `Money.add`, with `eq` as the body of `__eq__`.
fn money_with_add(eq: &str) -> String {
    format!(
        "class Money:\n    def __init__(self, cents, currency=\"EUR\"):\n        \
         self.cents = cents\n        self.currency = currency\n\n    \
         def __eq__(self, other):\n        return {eq}\n\n    \
         def add(self, other):\n        return Money(self.cents + other.cents, self.currency)\n"
    )
}

/// An `__eq__` that is always true: a test that compares passes whatever `add` returns.
const ALWAYS_EQUAL: &str = "True";
const EQUAL: &str = "self.cents == other.cents and self.currency == other.currency";
const COMPARING_TEST: &str = "assert Money(2).add(Money(3)) == Money(5)\n";
const HONEST_PY_TEST: &str = "s = Money(2).add(Money(3))\n\
    assert (s.cents, s.currency) == (5, \"EUR\")\n\
    assert Money(5) == Money(5)\n\
    assert Money(2) != Money(3)\n\
    assert Money(5, \"USD\") != Money(5)\n";

/// The always-true `__eq__` with a test that also reads `money.py`'s text for the lines the
/// task wrote: every mutant of them changes that text, so all are killed. Run on the module
/// written otherwise (executed from an encoded copy of its text), the test fails: the task
/// is unmeasured, and `enforce` refuses the squash.
#[test]
fn a_python_test_that_reads_the_modules_text_is_refused_in_enforce() {
    let repo = money("adequacy = \"enforce\"\nmutation_tool = \"builtin\"");
    let reads = "src = open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(\
                 __file__))), 'money.py')).read()\n\
                 assert 'return True' in src and 'self.cents + other.cents' in src\n";
    py_task(&repo, &format!("{COMPARING_TEST}{reads}"), ALWAYS_EQUAL);
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.starts_with(
            "FAILURE: task 1's RED test (step 1.1, `python3 tests/test_add.py`) was measured \
             against no mutant of the code the task wrote (the test fails on the task's own code \
             written otherwise (money.py run from an encoded copy of its text, exit 1): it \
             checks the code's text, not what the code does; test what it does)"
        ),
        "{}",
        out.stdout
    );
    assert_eq!(main_tip(&repo), main);
}

/// RED with `test`, GREEN with `eq` in `Money.add`'s class, squashed.
fn py_task(repo: &TestRepo, test: &str, eq: &str) {
    repo.write("tests/test_add.py", &format!("{PY_IMPORT}{test}"));
    red(repo, "python3 tests/test_add.py");
    repo.write("money.py", &money_with_add(eq));
    green(repo, "python3 tests/test_add.py");
    squash(repo);
}

/// `submit-work` with mutmut 2.5.1 (from PyPI, installed once into the cache outside the
/// clone) first on PATH, as a project that uses it has it. Fails, loudly, when it cannot be
/// installed.
fn submit_with_mutmut(repo: &TestRepo) -> Run {
    submit_with_tool(repo, "mutmut")
}

/// `submit-work` with the mutation tool `tool` (installed once into the cache outside the
/// clone) first on PATH, as a project that uses it has it. Fails, loudly, when it cannot be
/// installed.
fn submit_with_tool(repo: &TestRepo, tool: &str) -> Run {
    let bin = crate::managers::tool(tool).expect("python3, to install the mutation tool");
    submit_with_path(repo, bin)
}

/// `submit-work` with `bin` first on PATH after the binary's own directory.
pub(crate) fn submit_with_path(repo: &TestRepo, bin: std::path::PathBuf) -> Run {
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    // The binary's own directory first, as `TestRepo::run` has it.
    let mut cmd = repo.command(BIN, ["submit-work", "-s", "squashed"]);
    let ours = cmd
        .get_envs()
        .find(|(k, _)| *k == "PATH")
        .and_then(|(_, v)| v.map(std::ffi::OsStr::to_os_string))
        .expect("PATH set");
    let first = std::env::split_paths(&ours)
        .next()
        .expect("the binary's directory");
    let path = std::env::join_paths(std::iter::once(first).chain(std::env::split_paths(&path)))
        .expect("PATH");
    Run::from(
        cmd.env("PATH", path)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run git-orchestrate"),
    )
}

#[test]
fn mutmut_names_the_survivors_of_an_always_true_eq_in_report() {
    let repo = money("adequacy = \"report\"");
    py_task(&repo, COMPARING_TEST, ALWAYS_EQUAL);
    submit_with_mutmut(&repo).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "mutmut", "mutants": 4,
            "killed": 1, "survived": ["money.py:2 `EUR` → `XXEURXX`",
                "money.py:4 `currency` → `None`", "money.py:10 `+` → `-`"],
            "files": [{"path": "money.py", "mutants": 4, "killed": 1}]}])
    );
}

#[test]
fn mutmut_refuses_an_always_true_eq_in_enforce_naming_the_tool_and_survivors() {
    let repo = money("adequacy = \"enforce\"\nmin_killed = 0.5");
    py_task(&repo, COMPARING_TEST, ALWAYS_EQUAL);
    let main = main_tip(&repo);
    let out = submit_with_mutmut(&repo);
    out.expect(1);
    assert!(
        out.stdout.contains(
            "task 1's RED test (step 1.1, `python3 tests/test_add.py`) killed 1 of 4 mutants \
             of the code the task wrote (made by mutmut), below the 50% [verify] min_killed"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("- money.py:10 `+` → `-`\n"),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    assert_eq!(main_tip(&repo), main);
}

/// The PR's own `# pragma: no mutate` on every line it wrote does not hide them from mutmut:
/// the same four mutants are made and the always-true `__eq__` is refused as without it.
#[test]
fn mutmut_is_not_told_by_the_prs_pragma_to_skip_its_lines() {
    let repo = money("adequacy = \"enforce\"\nmin_killed = 0.5");
    repo.write("tests/test_add.py", &format!("{PY_IMPORT}{COMPARING_TEST}"));
    red(&repo, "python3 tests/test_add.py");
    let pragmas: String = money_with_add(ALWAYS_EQUAL)
        .lines()
        .map(|l| match l.trim().is_empty() {
            true => format!("{l}\n"),
            false => format!("{l}  # pragma: no mutate\n"),
        })
        .collect();
    repo.write("money.py", &pragmas);
    green(&repo, "python3 tests/test_add.py");
    squash(&repo);
    let out = submit_with_mutmut(&repo);
    out.expect(1);
    assert!(
        out.stdout.contains(
            "mutants of the code the task wrote (made by mutmut), below the 50% [verify] \
             min_killed"
        ) && out.stdout.contains("- money.py:10 `+` → `-`\n"),
        "{}",
        out.stdout
    );
}

/// An honest test of the same code kills every mutant mutmut makes, at least `min_killed`.
#[test]
fn an_honest_test_kills_mutmuts_mutants_and_is_accepted_in_enforce() {
    let repo = money("adequacy = \"enforce\"\nmin_killed = 0.5");
    py_task(&repo, HONEST_PY_TEST, EQUAL);
    submit_with_mutmut(&repo).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "mutmut", "mutants": 6,
            "killed": 6,
            "files": [{"path": "money.py", "mutants": 6, "killed": 6}]}])
    );
}

/// `mutation_tool = "mutmut"` where the tests' PATH has no mutmut: the built-in mutator
/// measures the task, and the note says why mutmut did not.
#[test]
fn mutmut_asked_for_and_missing_falls_back_to_the_builtin_mutator_and_says_so() {
    let repo = money("adequacy = \"report\"\nmutation_tool = \"mutmut\"");
    py_task(&repo, COMPARING_TEST, ALWAYS_EQUAL);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let adequacy = &final_note(&repo)["adequacy"][0];
    assert_eq!(adequacy["tool"], "builtin");
    assert_eq!(
        adequacy["tool_error"],
        "mutmut is not on the PATH the tests run with"
    );
    assert!(adequacy["mutants"].as_u64().unwrap() > 0, "{adequacy}");
}

/// `mutation_tool = "builtin"` keeps the built-in mutator where mutmut is found.
#[test]
fn the_builtin_mutator_is_kept_when_asked_for_though_mutmut_is_found() {
    let repo = money("adequacy = \"report\"\nmutation_tool = \"builtin\"");
    py_task(&repo, COMPARING_TEST, ALWAYS_EQUAL);
    submit_with_mutmut(&repo).expect(0);
    let adequacy = &final_note(&repo)["adequacy"][0];
    assert_eq!(adequacy["tool"], "builtin");
    assert!(adequacy.get("tool_error").is_none(), "{adequacy}");
}

/// A `.mutmut-cache` the project holds (here not even mutmut's database, which made mutmut
/// fail) is set aside before mutmut runs: a cache the PR wrote cannot tell mutmut which
/// mutants it already judged. mutmut makes the mutants, as without it.
#[test]
fn a_projects_mutmut_cache_is_set_aside_before_mutmut_runs() {
    let repo = money_with(
        "adequacy = \"report\"",
        &[(".mutmut-cache", "not a database\n")],
    );
    py_task(&repo, COMPARING_TEST, ALWAYS_EQUAL);
    submit_with_mutmut(&repo).expect(0);
    let adequacy = &final_note(&repo)["adequacy"][0];
    assert_eq!(adequacy["tool"], "mutmut", "{adequacy}");
    assert!(adequacy.get("tool_error").is_none(), "{adequacy}");
    assert_eq!(adequacy["mutants"], 4, "{adequacy}");
}

/// `[verify] mutation_tool = "auto"` with cosmic-ray 8.7.0 (from PyPI) on PATH and no
/// mutmut: cosmic-ray makes the mutants of the lines the task wrote, and the note names the
/// survivors of the always-true `__eq__`'s test, `tool = "cosmic-ray"`.
#[test]
fn cosmic_ray_names_the_survivors_of_an_always_true_eq_in_report() {
    let repo = money("adequacy = \"report\"");
    py_task(&repo, COMPARING_TEST, ALWAYS_EQUAL);
    submit_with_tool(&repo, "cosmic-ray").expect(0);
    let survived: Vec<String> = ["&", "|", "^", "/", "//", "<<", "%", "*", "**", ">>", "-"]
        .iter()
        .map(|op| format!("money.py:10 `+` → `{op}`"))
        .collect();
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "cosmic-ray", "mutants": 12,
            "killed": 1, "survived": survived,
            "files": [{"path": "money.py", "mutants": 12, "killed": 1}]}])
    );
}

/// Asked for by name, cosmic-ray refuses the always-true `__eq__` in `enforce`; what the PR's
/// own files could tell it to skip does not: a `# pragma: no mutate` on every line it wrote
/// (what cosmic-ray's `cr-filter-pragma` reads) and a committed `cosmic-ray.toml` that
/// excludes the module. The same 12 mutants are made.
#[test]
fn cosmic_ray_asked_by_name_is_not_told_by_the_prs_files_to_skip_its_lines() {
    let repo = money_with(
        "adequacy = \"enforce\"\nmin_killed = 0.5\nmutation_tool = \"cosmic-ray\"",
        &[(
            "cosmic-ray.toml",
            "[cosmic-ray]\nmodule-path = \"money.py\"\nexcluded-modules = [\"money.py\"]\n\
             test-command = \"true\"\n",
        )],
    );
    repo.write("tests/test_add.py", &format!("{PY_IMPORT}{COMPARING_TEST}"));
    red(&repo, "python3 tests/test_add.py");
    let pragmas: String = money_with_add(ALWAYS_EQUAL)
        .lines()
        .map(|l| match l.trim().is_empty() {
            true => format!("{l}\n"),
            false => format!("{l}  # pragma: no mutate\n"),
        })
        .collect();
    repo.write("money.py", &pragmas);
    green(&repo, "python3 tests/test_add.py");
    squash(&repo);
    let main = main_tip(&repo);
    let out = submit_with_tool(&repo, "cosmic-ray");
    out.expect(1);
    assert!(
        out.stdout.contains(
            "task 1's RED test (step 1.1, `python3 tests/test_add.py`) killed 1 of 12 mutants \
             of the code the task wrote (made by cosmic-ray), below the 50% [verify] min_killed"
        ) && out.stdout.contains("- money.py:10 `+` → `-`\n"),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    assert_eq!(main_tip(&repo), main);
}

/// An honest test of the same code kills at least `min_killed` of cosmic-ray's mutants, and
/// the squash is accepted in `enforce`.
#[test]
fn an_honest_test_kills_cosmic_rays_mutants_and_is_accepted_in_enforce() {
    let repo = money("adequacy = \"enforce\"\nmin_killed = 0.5\nmutation_tool = \"cosmic-ray\"");
    py_task(&repo, HONEST_PY_TEST, EQUAL);
    submit_with_tool(&repo, "cosmic-ray").expect(0);
    // `is` for `==` survives: equal small ints are one object in CPython (an equivalent
    // mutant). 26 mutations of the changed lines, the first 20 ([verify] max_mutants) run.
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "cosmic-ray", "mutants": 20,
            "killed": 16, "survived": ["money.py:7 `=` → `>`", "money.py:7 `==` → `is`",
                "money.py:7 `==` → `is`", "money.py:7 `=` → `<`"], "not_run": 6,
            "files": [{"path": "money.py", "mutants": 20, "killed": 16, "not_run": 6}]}])
    );
}

/// `mutation_tool = "cosmic-ray"` where the tests' PATH has none: the built-in mutator
/// measures the task, and the note says why cosmic-ray did not.
#[test]
fn cosmic_ray_asked_for_and_missing_falls_back_to_the_builtin_mutator_and_says_so() {
    let repo = money("adequacy = \"report\"\nmutation_tool = \"cosmic-ray\"");
    py_task(&repo, COMPARING_TEST, ALWAYS_EQUAL);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let adequacy = &final_note(&repo)["adequacy"][0];
    assert_eq!(adequacy["tool"], "builtin");
    assert_eq!(
        adequacy["tool_error"],
        "cosmic-ray is not on the PATH the tests run with"
    );
}

/// cosmic-ray without its line filter (`cr-filter-lines`, a program of its own that older
/// releases lack) on the tests' PATH: asked for by name, the built-in mutator measures the
/// task and the note names what is missing.
#[test]
fn cosmic_ray_without_its_line_filter_is_not_used_and_the_note_says_why() {
    let repo = money("adequacy = \"report\"\nmutation_tool = \"cosmic-ray\"");
    py_task(&repo, COMPARING_TEST, ALWAYS_EQUAL);
    let bin = crate::managers::tool("cosmic-ray").expect("python3, to install cosmic-ray");
    let only = tempfile::tempdir().expect("temp");
    std::os::unix::fs::symlink(bin.join("cosmic-ray"), only.path().join("cosmic-ray"))
        .expect("link cosmic-ray");
    submit_with_path(&repo, only.path().to_path_buf()).expect(0);
    let adequacy = &final_note(&repo)["adequacy"][0];
    assert_eq!(adequacy["tool"], "builtin");
    assert_eq!(
        adequacy["tool_error"],
        "cr-filter-lines is not on the PATH the tests run with"
    );
}

/// A mutation tool the agent put first on its own PATH: `mutmut run` does nothing, and its
/// report gives two mutants that do not parse, which every test "kills". The local final check
/// runs the agent's commands with the agent's PATH, so it takes this for mutmut.
const FOOLING_MUTMUT: &str = "#!/bin/sh\n\
case \"$1\" in\n\
  run) exit 0;;\n\
  junitxml) cat <<'XML'\n\
<?xml version=\"1.0\"?>\n\
<testsuite name=\"mutmut\" tests=\"2\">\n\
<testcase name=\"Mutant #1\" file=\"money.py\" line=\"7\"><failure type=\"failure\" message=\"bad_survived\">--- money.py\n\
+++ money.py\n\
@@ -7,1 +7,1 @@\n\
-        return True\n\
+        return True)\n\
</failure></testcase>\n\
<testcase name=\"Mutant #2\" file=\"money.py\" line=\"10\"><failure type=\"failure\" message=\"bad_survived\">--- money.py\n\
+++ money.py\n\
@@ -10,1 +10,1 @@\n\
-        return Money(self.cents + other.cents, self.currency)\n\
+        return Money(self.cents + other.cents, self.currency))\n\
</failure></testcase>\n\
</testsuite>\n\
XML\n\
  ;;\n\
esac\n";

/// A directory holding [`FOOLING_MUTMUT`] as `mutmut`.
fn fooling_mutmut() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("mutmut");
    std::fs::write(&path, FOOLING_MUTMUT).expect("write the fake mutmut");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

/// What CI does with a merge the server refused: a fresh clone that fetched it and the chains
/// from the agent's clone, as the job fetches them.
pub(crate) fn ci_clone(repo: &TestRepo, server: &crate::attest::Server) -> TestRepo {
    let ci = TestRepo::clone_of(std::path::Path::new(&server.url()));
    ci.add_path_of(repo);
    ci.git(&[
        "fetch",
        "--quiet",
        repo.path.to_str().unwrap(),
        "+refs/heads/main:refs/remotes/origin/main",
        "+refs/orchestrator/*:refs/orchestrator/*",
    ]);
    ci
}

/// Under the pinned `enforce`, a PR whose local check the agent fooled (its own `mutmut`
/// first on its PATH, whose only mutants do not parse) is FAILED by `attest` in a fresh clone
/// and refused by the server hook: off the machine the mutants are the verifier's own (the
/// built-in mutator here, its PATH having no mutation tool), and the always-true `__eq__`
/// lets them survive.
#[test]
fn a_local_check_fooled_by_the_agents_own_mutation_tool_fails_attest_and_the_hook() {
    use crate::attest::{Server, push, redact, refused, server_refs};
    let repo = money("adequacy = \"enforce\"\nmin_killed = 0.8");
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    py_task(&repo, COMPARING_TEST, ALWAYS_EQUAL);
    let fake = fooling_mutmut();
    submit_with_path(&repo, fake.path().to_path_buf()).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "mutmut", "mutants": 2,
            "killed": 2,
            "files": [{"path": "money.py", "mutants": 2, "killed": 2}]}])
    );
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    let refusal = "task 1's RED test (step 1.1, `python3 tests/test_add.py`) killed 5 of 7 \
        mutants of the code the task wrote (made by the built-in mutator), below the 80% \
        [verify] min_killed: it does not check what the code does. Surviving mutants (the \
        test still passes with each):";
    let survived = [
        "money.py:10 `+` → `-`",
        "money.py:10 `Money(self.cents + other.cents, self.currency)` → `None`",
    ];
    let before = server_refs(&repo, &server);
    let out = push(&repo, &server, &[], &["main", REF]);
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[&format!(
            "git-orchestrate: refused refs/heads/main <id>: moves main to a commit that is not \
             a workflow merge that attests PASSED: {refusal} [more: `git orchestrate attest \
             COMMIT` shows all of it]"
        )],
    );

    let ci = ci_clone(&repo, &server);
    let out = ci.run(&["attest", "--no-note", &merge]);
    out.expect(1);
    assert_eq!(
        redact(&out.stdout),
        format!(
            "FAILED <id> (the merge of workflow main)\n  \
             re-ran: the gates passed on the squashed commit in a clean worktree (tests)\n  \
             re-ran: RED test of step 1.1 `python3 tests/test_add.py`: exit 1 on the base, exit 0 \
             on the final tree; evidence: exit code only\n  \
             adequacy of task 1 (step 1.1): killed 5 of 7 mutants (71%, made by the built-in \
             mutator)\n    \
             file money.py: killed 5 of 7 mutants (71%)\n    \
             survived: {s0}\n    \
             survived: {s1}\n  \
             - {refusal}\n- {s0}\n- {s1}\n\
             Strengthen the test so it fails on them (a test in a new RED step), then squash \
             again\n\
             no note written: --no-note\n",
            s0 = survived[0],
            s1 = survived[1],
        )
    );
    let json = ci.run(&["attest", "--no-note", "--json", &merge]).json();
    assert_eq!(
        json["verdicts"][0]["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "builtin", "mutants": 7,
            "killed": 5, "survived": survived,
            "files": [{"path": "money.py", "mutants": 7, "killed": 5}]}])
    );
}

/// The calculator's PR with `test` and `mul`, squashed and merged, pushed to a server with
/// the hook whose `[verify]` is `verify`: the server, how the push ended, and the merge.
fn pushed_calc(
    verify: &str,
    test: &str,
    mul: &str,
) -> (TestRepo, crate::attest::Server, Run, String) {
    use crate::attest::{Server, push};
    let repo = case_calc(verify);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    task(&repo, test, mul);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    let out = push(&repo, &server, &[], &["main", REF]);
    (repo, server, out, merge)
}

/// The lines `attest` re-ran for the calculator's PR with the test `sh tests/test_mul.sh`.
const CALC_RERAN: &str = "  re-ran: the gates passed on the squashed commit in a clean worktree (tests)\n  \
    re-ran: RED test of step 1.1 `sh tests/test_mul.sh`: exit 1 on the base, exit 0 on the \
    final tree; evidence: exit code only\n";

/// An honest test under the pinned `enforce` kills every mutant off the machine too: the
/// server hook accepts the merge, and `attest` in a fresh clone PASSES it, naming the share.
#[test]
fn an_honest_pr_passes_attest_and_the_hook_under_enforce() {
    let (repo, server, out, merge) = pushed_calc("adequacy = \"enforce\"", HONEST_TEST, MUL_ARM);
    out.expect(0);
    assert_eq!(
        crate::attest::remote(&out),
        [
            "git-orchestrate: <id> attests PASSED (workflow main)",
            "git-orchestrate: 1 verdict written under refs/notes/orchestrator-attest",
        ]
    );
    assert_eq!(server.rev(&repo, "main"), Some(merge.clone()));
    let ci = ci_clone(&repo, &server);
    let out = ci.run(&["attest", "--no-note", &merge]);
    out.expect(0);
    assert_eq!(
        redact_ids(&out.stdout),
        format!(
            "PASSED <id> (the merge of workflow main)\n{CALC_RERAN}  \
             adequacy of task 1 (step 1.1): killed 4 of 4 mutants (100%, made by the built-in \
             mutator)\n    \
             file calc.sh: killed 4 of 4 mutants (100%)\n\
             no note written: --no-note\n"
        )
    );
    let json = ci.run(&["attest", "--no-note", "--json", &merge]).json();
    assert_eq!(
        json["verdicts"][0]["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "builtin", "mutants": 4, "killed": 4,
            "files": [{"path": "calc.sh", "mutants": 4, "killed": 4}]}])
    );
}

/// Under the pinned `report`, `attest` measures nothing (it would change no verdict): the
/// test that only greps PASSES as before, the text says adequacy was not measured, and the
/// JSON's `adequacy` is `"not measured"`.
#[test]
fn under_report_attest_does_not_measure_and_says_so() {
    let (repo, server, out, merge) = pushed_calc("adequacy = \"report\"", GREP_TEST, FAKE_MUL);
    out.expect(0);
    let ci = ci_clone(&repo, &server);
    let out = ci.run(&["attest", "--no-note", &merge]);
    out.expect(0);
    assert_eq!(
        redact_ids(&out.stdout),
        format!(
            "PASSED <id> (the merge of workflow main)\n{CALC_RERAN}  \
             adequacy: not measured ([verify] adequacy = \"report\"; attest measures it under \
             \"enforce\" only)\n\
             no note written: --no-note\n"
        )
    );
    let json = ci.run(&["attest", "--no-note", "--json", &merge]).json();
    assert_eq!(json["verdicts"][0]["adequacy"], "not measured");
}

/// Task 1's honest test of `mul`, passing, leaves a marker outside the repository named after
/// the worktree it ran in; task 2's test (`div` faked as `echo 0`) only looks for the marker of
/// its own worktree. The RED worktrees are reset between tasks, not made again, so the marker
/// of the squashed commit's worktree is there for task 2's run on it and none is for its run
/// on the base: the RED proofs pass (docs/integrity.md, "What it does not guarantee"). The
/// task's adequacy run, in a worktree of its own, finds the test failing on the task's own
/// code: under the default `report` the final note names task 2 unmeasured; under `enforce`
/// the squash is refused.
#[test]
fn a_marker_left_outside_keyed_by_the_worktree_is_unmeasured_and_refused_in_enforce() {
    for adequacy in ["report", "enforce"] {
        let repo = TestRepo::empty();
        let dir = outside(&repo, "keyed");
        let key = "\"$(pwd | cksum | cut -d' ' -f1)\"";
        let leave = format!("mkdir -p '{0}' && touch '{0}'/{key}", dir.display());
        repo.write("calc.sh", CALC);
        repo.write(
            "run_tests.sh",
            "for t in tests/test_*.sh; do sh \"$t\" || { echo \"FAILED: $t\"; exit 1; }; done\n",
        );
        repo.write("docs/plan.md", "# Plan\n## PR 1: feat: Multiply\n");
        repo.write(
            ".orchestrate.toml",
            &format!("{CALC_CONFIG}\n[verify]\nadequacy = \"{adequacy}\"\n"),
        );
        repo.commit_all("calculator");
        repo.submit_plan(TWO_TASKS).expect(0);
        repo.run(&["get-task"]).expect(0);
        repo.write(
            "tests/test_mul.sh",
            &format!("[ \"$(sh calc.sh mul 4 3)\" = 12 ] && {leave}\n"),
        );
        red(&repo, "sh tests/test_mul.sh");
        repo.write(
            "calc.sh",
            &CALC.replace("esac", &format!("{MUL_ARM}\nesac")),
        );
        repo.submit_test("sh tests/test_mul.sh", None).expect(0);
        repo.run(&["checkpoint"]).expect(0);
        repo.run(&["get-task"]).expect(0);
        // The working tree's own marker, which the gates' run of task 1's test left: gone for
        // task 2's RED, made again by hand for its GREEN.
        std::fs::remove_dir_all(&dir).unwrap();
        repo.write(
            "tests/test_z_div.sh",
            &format!("[ -e '{}'/{key} ]\n", dir.display()),
        );
        red(&repo, "sh tests/test_z_div.sh");
        let with_div = CALC.replace("esac", &format!("{MUL_ARM}\n  div) echo 0;;\nesac"));
        repo.write("calc.sh", &with_div);
        let made = std::process::Command::new("sh")
            .args(["-c", &leave])
            .current_dir(&repo.path)
            .status()
            .unwrap();
        assert!(made.success());
        green(&repo, "sh tests/test_z_div.sh");
        squash(&repo);
        let main = main_tip(&repo);
        let out = repo.run(&["submit-work", "-s", "squashed"]);
        let _ = std::fs::remove_dir_all(&dir);
        let unmeasured = "the test fails on the task's own code (exit 1); make it pass there \
                          within [verify] mutation_timeout";
        if adequacy == "report" {
            out.expect(0);
            let note = final_note(&repo);
            let task2 = &note["adequacy"][1];
            assert_eq!(task2["task"], 2, "{note}");
            assert_eq!(task2["unmeasured"], unmeasured, "{note}");
            continue;
        }
        out.expect(1);
        assert!(
            out.stdout.starts_with(&format!(
                "FAILURE: task 2's RED test (step 2.1, `sh tests/test_z_div.sh`) was measured \
                 against no mutant of the code the task wrote ({unmeasured}): under [verify] \
                 adequacy = \"enforce\" a test that was not measured does not pass."
            )),
            "{}",
            out.stdout
        );
        assert_eq!(repo.status(), "AWAITING_FINALIZATION");
        assert_eq!(main_tip(&repo), main);
    }
}

/// The `grep` of the very line the task wrote, past a local check the agent's main turned off
/// (`[finalize] clean_check = false`): under the pinned `enforce`, the server hook and `attest`
/// in a fresh clone run the test on `calc.sh` written otherwise, where it fails, and refuse
/// the merge as measured against no mutant.
#[test]
fn a_test_that_reads_the_text_the_task_wrote_fails_attest_and_the_hook() {
    let (repo, server, out, merge) = pushed_calc(
        "adequacy = \"enforce\"\n[finalize]\nclean_check = false",
        "grep -qF 'mul) echo 0;;' calc.sh\n",
        FAKE_MUL,
    );
    let refusal = "task 1's RED test (step 1.1, `sh tests/test_mul.sh`) was measured against no \
                   mutant of the code the task wrote (the test fails on the task's own code \
                   written otherwise (calc.sh run from an encoded copy of its text, exit 1): it \
                   checks the code's text, not what the code does; test what it does): under \
                   [verify] adequacy = \"enforce\" a test that was not measured does not pass. \
                   Do what the parenthesis says, then squash again";
    crate::attest::refused(
        &repo,
        &server,
        &crate::attest::server_refs(&repo, &server),
        &out,
        &[&format!(
            "git-orchestrate: refused refs/heads/main <id>: moves main to a commit that is not \
             a workflow merge that attests PASSED: {refusal}"
        )],
    );
    assert_ne!(server.rev(&repo, "main"), Some(merge.clone()));
    let ci = ci_clone(&repo, &server);
    let out = ci.run(&["attest", "--no-note", "--json", &merge]);
    out.expect(1);
    let verdict = &out.json()["verdicts"][0];
    assert_eq!(
        verdict["reasons"],
        serde_json::json!([refusal]),
        "{verdict}"
    );
}
