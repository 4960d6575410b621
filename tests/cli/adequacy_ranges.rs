//! Which code each task is measured on (docs/integrity.md, "Adequacy by mutation"): the code a
//! task wrote runs from the tree it began at (before its RED step, as the chain's RED pin
//! records it) to the tree the next task began at, so that code a later task's RED step
//! writes beside its test is that task's, measured by its own test, on the agent's machine
//! and by `attest` in a fresh clone; a chain that does not record where a task began is
//! still measured, between RED trees as before.

use pretty_assertions::assert_eq;

use crate::adequacy::{CALC, case_calc_planned, ci_clone, final_note};
use crate::oracle::{green, main_tip, mark_done_and_merge, red, squash};
use crate::support::*;

/// Two tasks, each a RED step and a GREEN step: `mul`, then `sub`.
pub(crate) const TWO_TASKS: &str = r#"{"masterPlanPath": "docs/plan.md", "prTitle": "feat: Multiply", "summary": "mul",
  "verificationPlan": "the tests pass",
  "tasks": [{"taskName": "mul", "status": "TODO", "tdd_steps": [
    {"type": "RED", "description": "test mul", "status": "TODO"},
    {"type": "GREEN", "description": "implement mul", "status": "TODO"}]},
   {"taskName": "sub", "status": "TODO", "tdd_steps": [
    {"type": "RED", "description": "test sub", "status": "TODO"},
    {"type": "GREEN", "description": "implement sub", "status": "TODO"}]}]}"#;

const MUL_ARM: &str = "  mul) echo $(( $2 * $3 ));;";
const MUL_TEST: &str = "[ \"$(sh calc.sh mul 4 3)\" = 12 ]\n";
const SUB_ARM: &str = "  sub) echo $(( $2 - $3 ));;";
const SUB_TEST: &str = "[ \"$(sh calc.sh sub 7 3)\" = 4 ]\n";
/// The fake arm task 2's RED step writes beside its test, which only greps for it.
const FAKE_SUB: &str = "  sub) echo 0;;";

/// `calc.sh` with `arms` before `esac`, and `tail` after it.
fn calc(arms: &[&str], tail: &str) -> String {
    let arms: String = arms.iter().map(|a| format!("{a}\n")).collect();
    format!("{}{tail}", CALC.replace("esac", &format!("{arms}esac")))
}

/// Task 1 done honestly (`mul`, its test and its arm) with each RED command `command`
/// (`sh tests/test_mul.sh`, or the whole suite), up to task 2's RED step.
fn honest_first_task(repo: &TestRepo, command: &str) {
    repo.write("tests/test_mul.sh", MUL_TEST);
    red(repo, command);
    repo.write("calc.sh", &calc(&[MUL_ARM], ""));
    repo.submit_test(command, None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
}

/// Task 2 as a cheat does it: its RED step writes the fake `sub` arm beside a test that only
/// greps for it (and for a `# done` mark, so that it fails then); the GREEN step only adds
/// the mark. Squashed. Where `FOOL_LOCAL` is set, the test checks instead of the grep that
/// `sub 7 3` prints what the fake arm prints (0), which kills every mutant of it: a test that checks
/// everything where the agent runs it, and almost nothing elsewhere. (One that compared
/// `calc.sh` with its final text would kill them too, but reads the code's text, which the
/// measure sees: docs/integrity.md, "Adequacy by mutation".)
fn cheating_second_task(repo: &TestRepo) {
    let test = "if [ -n \"$FOOL_LOCAL\" ]; then [ \"$(sh calc.sh sub 7 3)\" = 0 ]; else \
                grep -q \"sub)\" calc.sh; fi && grep -q \"# done\" calc.sh\n";
    repo.write("tests/test_sub.sh", test);
    repo.write("calc.sh", &calc(&[MUL_ARM, FAKE_SUB], ""));
    red(repo, "sh tests/test_sub.sh");
    repo.write("calc.sh", &calc(&[MUL_ARM, FAKE_SUB], "# done\n"));
    green(repo, "sh tests/test_sub.sh");
    squash(repo);
}

/// The refusal of task 2's grep-only test, made by the built-in mutator: 1 of its fake arm's
/// 3 mutants killed (the arm deleted).
const TASK_2_REFUSAL: &str = "task 2's RED test (step 2.1, `sh tests/test_sub.sh`) killed 1 of \
    3 mutants of the code the task wrote (made by the built-in mutator), below the 50% [verify] \
    min_killed: it does not check what the code does. Surviving mutants (the test still passes \
    with each):";
const TASK_2_SURVIVORS: [&str; 2] = ["calc.sh:4 `0` → ``", "calc.sh:4 `0` → `1`"];

/// Code task 2's RED step wrote is task 2's: its grep-only test is measured on the fake arm and
/// refused under enforce, where it used to be charged to task 1, whose honest test's kills
/// hid its survivors (4 of 7), while task 2 was measured on a comment alone.
#[test]
fn code_a_later_tasks_red_step_wrote_is_measured_by_that_tasks_test_and_refused() {
    let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.5", TWO_TASKS);
    honest_first_task(&repo, "sh tests/test_mul.sh");
    cheating_second_task(&repo);
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.contains(&format!(
            "{TASK_2_REFUSAL}\n- {}\n- {}\n",
            TASK_2_SURVIVORS[0], TASK_2_SURVIVORS[1]
        )),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    assert_eq!(main_tip(&repo), main);
}

/// The fake arm committed as a checkpoint of the agent's own before task 2's RED step, which
/// its pin then counts from: task 2 still began where task 1's last step's checkpoint left
/// off, so the arm is task 2's code, and its grep-only test is refused.
#[test]
fn code_checkpointed_between_steps_is_the_next_tasks_code() {
    let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.5", TWO_TASKS);
    honest_first_task(&repo, "sh tests/test_mul.sh");
    repo.write("calc.sh", &calc(&[MUL_ARM, FAKE_SUB], ""));
    repo.run(&["checkpoint"]).expect(0);
    repo.write(
        "tests/test_sub.sh",
        "grep -q \"sub)\" calc.sh && grep -q \"# done\" calc.sh\n",
    );
    red(&repo, "sh tests/test_sub.sh");
    repo.write("calc.sh", &calc(&[MUL_ARM, FAKE_SUB], "# done\n"));
    green(&repo, "sh tests/test_sub.sh");
    squash(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.contains(&format!(
            "{TASK_2_REFUSAL}\n- {}\n- {}\n",
            TASK_2_SURVIVORS[0], TASK_2_SURVIVORS[1]
        )),
        "{}",
        out.stdout
    );
}

/// `submit-work -s squashed` with `FOOL_LOCAL` set (to `text`).
fn submit_fooling(repo: &TestRepo, text: &str) -> Run {
    Run::from(
        repo.command(BIN, ["submit-work", "-s", "squashed"])
            .env("FOOL_LOCAL", text.trim_end())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run git-orchestrate"),
    )
}

/// The same cheat, its local check fooled (task 2's test holds `calc.sh` to its final text
/// where the agent's environment says so, killing every mutant there): merged locally, it is
/// refused by the server hook and FAILED by `attest` in a fresh clone, which read where task 2
/// began from the chain and measure its test on the code its RED step wrote.
#[test]
fn a_later_tasks_red_step_code_fails_attest_in_a_fresh_clone_and_the_hook() {
    use crate::attest::{Server, push, redact, refused, server_refs};
    let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.5", TWO_TASKS);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    honest_first_task(&repo, "sh tests/test_mul.sh");
    cheating_second_task(&repo);
    submit_fooling(&repo, &calc(&[MUL_ARM, FAKE_SUB], "# done\n")).expect(0);
    let note = final_note(&repo)["adequacy"].clone();
    assert_eq!(
        note,
        serde_json::json!([
            {"task": 1, "step": "1.1", "tool": "builtin", "mutants": 4, "killed": 4,
            "files": [{"path": "calc.sh", "mutants": 4, "killed": 4}]},
            {"task": 2, "step": "2.1", "tool": "builtin", "mutants": 3, "killed": 3,
            "files": [{"path": "calc.sh", "mutants": 3, "killed": 3}]}])
    );
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    let before = server_refs(&repo, &server);
    let out = push(&repo, &server, &[], &["main", REF]);
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[&format!(
            "git-orchestrate: refused refs/heads/main <id>: moves main to a commit that is not \
             a workflow merge that attests PASSED: {TASK_2_REFUSAL} [more: `git orchestrate \
             attest COMMIT` shows all of it]"
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
             re-ran: RED test of step 1.1 `sh tests/test_mul.sh`: exit 1 on the base, exit 0 \
             on the final tree; evidence: exit code only\n  \
             re-ran: RED test of step 2.1 `sh tests/test_sub.sh`: exit 1 on the base, exit 0 \
             on the final tree; evidence: exit code only\n  \
             adequacy of task 1 (step 1.1): killed 4 of 4 mutants (100%, made by the built-in \
             mutator)\n    \
             file calc.sh: killed 4 of 4 mutants (100%)\n  \
             adequacy of task 2 (step 2.1): killed 1 of 3 mutants (33%, made by the built-in \
             mutator)\n    \
             file calc.sh: killed 1 of 3 mutants (33%)\n    \
             survived: {s0}\n    \
             survived: {s1}\n  \
             - {TASK_2_REFUSAL}\n- {s0}\n- {s1}\n\
             Strengthen the test so it fails on them (a test in a new RED step), then squash \
             again\n\
             no note written: --no-note\n",
            s0 = TASK_2_SURVIVORS[0],
            s1 = TASK_2_SURVIVORS[1],
        )
    );
}

/// An honest two-task PR whose RED command runs the whole suite passes the server hook and
/// `attest` in a fresh clone under enforce, each task measured on its own code.
#[test]
fn an_honest_two_task_pr_passes_attest_in_a_fresh_clone_and_the_hook() {
    use crate::attest::{Server, push};
    let repo = case_calc_planned("adequacy = \"enforce\"", TWO_TASKS);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    honest_two_tasks(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    assert_eq!(server.rev(&repo, "main"), Some(merge.clone()));
    let ci = ci_clone(&repo, &server);
    let json = ci.run(&["attest", "--no-note", "--json", &merge]).json();
    assert_eq!(json["verdicts"][0]["passed"], true, "{json}");
    assert_eq!(
        json["verdicts"][0]["adequacy"],
        honest_adequacy_of_the_suite()
    );
}

/// What the honest two tasks kill: every mutant of each task's arm.
fn honest_adequacy() -> serde_json::Value {
    serde_json::json!([
        {"task": 1, "step": "1.1", "tool": "builtin", "mutants": 4, "killed": 4,
            "files": [{"path": "calc.sh", "mutants": 4, "killed": 4}]},
        {"task": 2, "step": "2.1", "tool": "builtin", "mutants": 4, "killed": 4,
            "files": [{"path": "calc.sh", "mutants": 4, "killed": 4}]}])
}

/// [`honest_adequacy`] where every RED command is the whole suite (`sh run_tests.sh`): the
/// suite's driver is each task's witness, named.
fn honest_adequacy_of_the_suite() -> serde_json::Value {
    let mut tasks = honest_adequacy();
    for task in tasks.as_array_mut().expect("tasks") {
        task["witnesses"] = serde_json::json!(["run_tests.sh"]);
    }
    tasks
}

/// Both tasks done honestly, every RED command the whole suite, squashed.
fn honest_two_tasks(repo: &TestRepo) {
    let suite = "sh run_tests.sh";
    honest_first_task(repo, suite);
    repo.write("tests/test_sub.sh", SUB_TEST);
    red(repo, suite);
    repo.write("calc.sh", &calc(&[MUL_ARM, SUB_ARM], ""));
    green(repo, suite);
    squash(repo);
}

/// A chain made before the RED pin recorded where its task began (the pins' `start` taken out
/// of every event, the chain written again): under `report` it still finalizes, each task
/// measured between RED trees, the next task's failing test put back as it was; under
/// `enforce` it is refused, naming why (taking `start` out would otherwise bring back the
/// ranges a later RED step's code hides in).
#[test]
fn a_chain_without_where_each_task_began_finalizes_under_report_only() {
    let repo = case_calc_planned("adequacy = \"report\"", TWO_TASKS);
    honest_two_tasks(&repo);
    let starts = drop_red_starts(&repo);
    assert_eq!(starts, 2, "both RED pins recorded where their task began");
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        honest_adequacy_of_the_suite()
    );

    let repo = case_calc_planned("adequacy = \"enforce\"", TWO_TASKS);
    honest_two_tasks(&repo);
    assert_eq!(drop_red_starts(&repo), 2);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(out.stdout.contains(UNBOUNDED), "{}", out.stdout);
}

/// Writes the chain again with every RED pin's `start` taken out of its event (see
/// [`drop_from_events`]): how many were taken out.
fn drop_red_starts(repo: &TestRepo) -> usize {
    // The pin's `start` follows its `"tree":"<id>"`; a step's proof names a `start` too.
    drop_from_events(repo, ",\"start\":\"", Some("\"tree\":\""))
}

/// Writes the chain again with `field` (a JSON key, from the comma before it to the quote
/// opening its value, a 40-digit id) taken out of every event, only where it follows `after`
/// and an id when that is given, and moves the chain there as git-orchestrate would have
/// (its reflog and tip marker too): how many were taken out.
fn drop_from_events(repo: &TestRepo, field: &str, after: Option<&str>) -> usize {
    let old_tip = repo.tip().expect("a chain");
    let mut map: Vec<(String, String)> = Vec::new();
    let mut dropped = 0;
    for id in repo.git(&["rev-list", "--reverse", REF]).lines() {
        let mut text = repo.git(&["cat-file", "commit", id]);
        for (old, new) in &map {
            text = text.replace(&format!("parent {old}"), &format!("parent {new}"));
        }
        let mut from = 0;
        while let Some(found) = text[from..].find(field) {
            let at = from + found;
            let follows = match after {
                Some(after) => {
                    let back = after.len() + 41;
                    at >= back && text[at - back..].starts_with(after)
                }
                None => true,
            };
            if follows {
                text.replace_range(at..at + field.len() + 41, "");
                dropped += 1;
            }
            from = at + 1;
        }
        let new = crate::attest::write_commit(repo, &text);
        map.push((id.to_string(), new));
    }
    let new_tip = map.last().expect("a commit").1.clone();
    repo.git(&["update-ref", REF, &new_tip, &old_tip]);
    let git = repo.path.join(".git");
    let reflog = git.join("logs").join(REF);
    let text = std::fs::read_to_string(&reflog).expect("the chain's reflog");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.pop();
    let mut rewritten: String = lines.iter().map(|l| format!("{l}\n")).collect();
    for (old, new) in &map {
        rewritten = rewritten.replace(old, new);
    }
    std::fs::write(&reflog, rewritten).expect("write the reflog");
    let marker = git.join("orchestrator/tips/main");
    let text = std::fs::read_to_string(&marker).expect("the tip marker");
    std::fs::write(&marker, text.replace(&old_tip, &new_tip)).expect("write the tip marker");
    dropped
}

/// Task 1 done honestly, but after its GREEN run passed, and before its checkpoint, the
/// agent writes `window` into `calc.sh` beside the `mul` arm: code task 1's test never looked
/// at, in the tree task 1's checkpoint records.
fn first_task_then_window(repo: &TestRepo, window: &str) {
    repo.write("tests/test_mul.sh", MUL_TEST);
    red(repo, "sh tests/test_mul.sh");
    repo.write("calc.sh", &calc(&[MUL_ARM], ""));
    repo.submit_test("sh tests/test_mul.sh", None).expect(0);
    repo.write("calc.sh", &calc(&[MUL_ARM, window], ""));
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
}

/// Task 2 after the window: its RED step writes only its test (`test`, which needs a `# done`
/// mark too, so that it fails then), its GREEN step adds the mark. Squashed.
fn second_task_after_window(repo: &TestRepo, window: &str, test: &str) {
    repo.write("tests/test_sub.sh", test);
    red(repo, "sh tests/test_sub.sh");
    repo.write("calc.sh", &calc(&[MUL_ARM, window], "# done\n"));
    green(repo, "sh tests/test_sub.sh");
    squash(repo);
}

/// Task 2's grep-only test, which checks what the fake arm prints instead where
/// `FOOL_LOCAL` is set (see [`cheating_second_task`]).
const GREP_SUB_TEST: &str = "if [ -n \"$FOOL_LOCAL\" ]; then [ \"$(sh calc.sh sub 7 3)\" = 0 ]; \
    else grep -q \"sub)\" calc.sh; fi && grep -q \"# done\" calc.sh\n";

/// Code written after the step before a task ran its test, before that step's checkpoint, is
/// the next task's: task 2 begins at the tree task 1's GREEN test looked at, so the fake `sub`
/// arm written in that window is measured by task 2's grep-only test and refused under
/// enforce, where it used to be charged to task 1, whose honest kills hid its survivors (4 of
/// 7), while task 2 was measured on a comment alone.
#[test]
fn code_written_between_a_steps_test_and_its_checkpoint_is_the_next_tasks_and_refused() {
    let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.5", TWO_TASKS);
    first_task_then_window(&repo, FAKE_SUB);
    second_task_after_window(&repo, FAKE_SUB, GREP_SUB_TEST);
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.contains(&format!(
            "{TASK_2_REFUSAL}\n- {}\n- {}\n",
            TASK_2_SURVIVORS[0], TASK_2_SURVIVORS[1]
        )),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    assert_eq!(main_tip(&repo), main);
}

/// The same window cheat, its local check fooled (`FOOL_LOCAL`): merged locally, it is
/// refused by the server hook and FAILED by `attest` in a fresh clone, which read the tree
/// task 1's GREEN test looked at from the chain (carried in `pinned-trees/`).
#[test]
fn code_written_between_a_steps_test_and_its_checkpoint_fails_attest_and_the_hook() {
    use crate::attest::{Server, push, redact, refused, server_refs};
    let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.5", TWO_TASKS);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    first_task_then_window(&repo, FAKE_SUB);
    second_task_after_window(&repo, FAKE_SUB, GREP_SUB_TEST);
    submit_fooling(&repo, &calc(&[MUL_ARM, FAKE_SUB], "# done\n")).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([
            {"task": 1, "step": "1.1", "tool": "builtin", "mutants": 4, "killed": 4,
            "files": [{"path": "calc.sh", "mutants": 4, "killed": 4}]},
            {"task": 2, "step": "2.1", "tool": "builtin", "mutants": 3, "killed": 3,
            "files": [{"path": "calc.sh", "mutants": 3, "killed": 3}]}])
    );
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    let before = server_refs(&repo, &server);
    let out = push(&repo, &server, &[], &["main", REF]);
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[&format!(
            "git-orchestrate: refused refs/heads/main <id>: moves main to a commit that is not \
             a workflow merge that attests PASSED: {TASK_2_REFUSAL} [more: `git orchestrate \
             attest COMMIT` shows all of it]"
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
             re-ran: RED test of step 1.1 `sh tests/test_mul.sh`: exit 1 on the base, exit 0 \
             on the final tree; evidence: exit code only\n  \
             re-ran: RED test of step 2.1 `sh tests/test_sub.sh`: exit 1 on the base, exit 0 \
             on the final tree; evidence: exit code only\n  \
             adequacy of task 1 (step 1.1): killed 4 of 4 mutants (100%, made by the built-in \
             mutator)\n    \
             file calc.sh: killed 4 of 4 mutants (100%)\n  \
             adequacy of task 2 (step 2.1): killed 1 of 3 mutants (33%, made by the built-in \
             mutator)\n    \
             file calc.sh: killed 1 of 3 mutants (33%)\n    \
             survived: {s0}\n    \
             survived: {s1}\n  \
             - {TASK_2_REFUSAL}\n- {s0}\n- {s1}\n\
             Strengthen the test so it fails on them (a test in a new RED step), then squash \
             again\n\
             no note written: --no-note\n",
            s0 = TASK_2_SURVIVORS[0],
            s1 = TASK_2_SURVIVORS[1],
        )
    );
}

/// The honest twin: the real `sub` arm written in the same window, and task 2's test checking
/// what it does. Each task is measured on its own code (task 1 on the `mul` arm only, task 2
/// on the `sub` arm its test kills every mutant of): it passes locally, the server hook and
/// `attest` in a fresh clone under enforce.
#[test]
fn honest_code_written_between_a_steps_test_and_its_checkpoint_passes_as_the_next_tasks() {
    use crate::attest::{Server, push};
    let repo = case_calc_planned("adequacy = \"enforce\"", TWO_TASKS);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    first_task_then_window(&repo, SUB_ARM);
    let test = format!("{} && grep -q \"# done\" calc.sh\n", SUB_TEST.trim_end());
    second_task_after_window(&repo, SUB_ARM, &test);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(final_note(&repo)["adequacy"], honest_adequacy());
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    assert_eq!(server.rev(&repo, "main"), Some(merge.clone()));
    let ci = ci_clone(&repo, &server);
    let json = ci.run(&["attest", "--no-note", "--json", &merge]).json();
    assert_eq!(json["verdicts"][0]["passed"], true, "{json}");
    assert_eq!(json["verdicts"][0]["adequacy"], honest_adequacy());
}

/// A chain made before a passing run recorded the tree its test looked at (`tested_tree`
/// taken out of every event, the chain written again): where task 2 began is not recorded,
/// so under `report` it is measured between RED trees and finalizes, and under `enforce` it
/// is refused, as a chain without the RED pins' `start` is.
#[test]
fn a_chain_without_the_tree_a_steps_test_looked_at_finalizes_under_report_only() {
    let repo = case_calc_planned("adequacy = \"report\"", TWO_TASKS);
    honest_two_tasks(&repo);
    assert!(drop_from_events(&repo, ",\"tested_tree\":\"", None) >= 2);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        honest_adequacy_of_the_suite()
    );

    let repo = case_calc_planned("adequacy = \"enforce\"", TWO_TASKS);
    honest_two_tasks(&repo);
    assert!(drop_from_events(&repo, ",\"tested_tree\":\"", None) >= 2);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(out.stdout.contains(UNBOUNDED), "{}", out.stdout);
}

/// Two code files in one task: the `mul` arm, whose every mutant the test kills, and
/// `neg.sh`, which the test never runs. Over all the task's code the share killed meets
/// `min_killed`; `neg.sh` alone does not, and under enforce the squash is refused naming it.
#[test]
fn each_code_file_of_a_task_must_meet_min_killed_on_its_own() {
    let repo = case_calc_planned(
        "adequacy = \"enforce\"\nmin_killed = 0.5",
        crate::oracle::MUL_PLAN,
    );
    repo.write("tests/test_mul.sh", MUL_TEST);
    red(&repo, "sh tests/test_mul.sh");
    repo.write("calc.sh", &calc(&[MUL_ARM], ""));
    repo.write("neg.sh", NEG);
    green(&repo, "sh tests/test_mul.sh");
    squash(&repo);
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(out.stdout.contains(NEG_REFUSAL), "{}", out.stdout);
    assert_eq!(main_tip(&repo), main);
}

/// An implementation the RED step writes in a file of its own (not a test path) beside a
/// test that hardly runs it: the file is pinned with the test, and mutated all the same, so
/// the weak test is refused under enforce.
#[test]
fn a_code_file_a_red_step_creates_is_mutated() {
    let repo = case_calc_planned(
        "adequacy = \"enforce\"\nmin_killed = 0.5",
        crate::oracle::MUL_PLAN,
    );
    repo.write("mul.sh", "echo $(( $1 * $2 ))\n");
    repo.write(
        "tests/test_mul.sh",
        "sh mul.sh 4 3 >/dev/null && grep -q \"# done\" calc.sh\n",
    );
    red(&repo, "sh tests/test_mul.sh");
    repo.write("calc.sh", &calc(&[], "# done\n"));
    green(&repo, "sh tests/test_mul.sh");
    squash(&repo);
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(out.stdout.contains(MUL_SH_REFUSAL), "{}", out.stdout);
    assert_eq!(main_tip(&repo), main);
}

/// Why a task whose bounds the chain does not record is refused under enforce.
const UNBOUNDED: &str = "the chain does not record where the task began or where the next \
    began (a step recorded by an earlier release): under enforce each task is measured on the \
    code it wrote, from there; do the RED step again";

/// The code file beside the `mul` arm that task 1's test never runs: 3 mutants, where the
/// arm's 4 are all killed (4 of 7 over the task's code, 57%).
const NEG: &str = "echo $(( -$1 ))\n";

/// The refusal naming `neg.sh`, with its survivors and no other file's.
const NEG_REFUSAL: &str = "FAILURE: task 1's RED test (step 1.1, `sh tests/test_mul.sh`) killed \
    0 of 3 mutants of neg.sh, code the task wrote (made by the built-in mutator), below the 50% \
    [verify] min_killed, which each file of a task's code must meet on its own: it does not \
    check what the code does. Surviving mutants (the test still passes with each):\n\
    - neg.sh:1 `$(( -$1 ))` → `0`\n\
    - neg.sh:1 `$(( -$1 ))` → ``\n\
    - neg.sh:1 line removed\n\
    Strengthen the test so it fails on them (a test in a new RED step), then squash again\n";

/// The refusal of the test beside the implementation its RED step wrote in `mul.sh`.
const MUL_SH_REFUSAL: &str = "FAILURE: task 1's RED test (step 1.1, `sh tests/test_mul.sh`) \
    killed 0 of 4 mutants of the code the task wrote (made by the built-in mutator), below the \
    50% [verify] min_killed: it does not check what the code does. Surviving mutants (the test \
    still passes with each):\n\
    - mul.sh:1 `*` → `/`\n\
    - mul.sh:1 `$(( $1 * $2 ))` → `0`\n\
    - mul.sh:1 `$(( $1 * $2 ))` → ``\n\
    - mul.sh:1 line removed\n\
    Strengthen the test so it fails on them (a test in a new RED step), then squash again\n";

/// The built-in mutator's budget is spread over the changed lines, the first mutant of every
/// line before the second of any: the `mul` arm's four easily killed mutants no longer fill a
/// budget of four and leave the `neg` arm its test never runs unmeasured (`not_run`, which
/// passed), so the survivors there refuse the squash.
#[test]
fn padding_a_line_with_easily_killed_mutants_does_not_starve_the_next_line() {
    let repo = case_calc_planned(
        "adequacy = \"enforce\"\nmin_killed = 0.6\nmax_mutants = 4",
        crate::oracle::MUL_PLAN,
    );
    repo.write("tests/test_mul.sh", MUL_TEST);
    red(&repo, "sh tests/test_mul.sh");
    repo.write("calc.sh", &calc(&[MUL_ARM, "  neg) echo $(( -$2 ));;"], ""));
    green(&repo, "sh tests/test_mul.sh");
    squash(&repo);
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.starts_with(
            "FAILURE: task 1's RED test (step 1.1, `sh tests/test_mul.sh`) killed 2 of 4 \
             mutants of the code the task wrote (made by the built-in mutator), below the 60% \
             [verify] min_killed: it does not check what the code does. Surviving mutants (the \
             test still passes with each):\n- calc.sh:4 `$(( -$2 ))` → `0`\n\
             - calc.sh:4 `$(( -$2 ))` → ``\n"
        ),
        "{}",
        out.stdout
    );
    assert_eq!(main_tip(&repo), main);
}

/// A test a GREEN step wrote and a later task deleted does not measure the earlier task's
/// code: the PR ends with nothing that checks the special case whose mutants it killed (all
/// 8, where it used to run; 5 without it), so under enforce the task is refused.
#[test]
fn a_test_a_later_task_deletes_does_not_measure_an_earlier_tasks_code() {
    let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.9", TWO_TASKS);
    let suite = "sh run_tests.sh";
    let special = "  mul) [ \"$2\" = 99 ] && { echo 0; exit; }; echo $(( $2 * $3 ));;";
    repo.write("tests/test_mul.sh", MUL_TEST);
    red(&repo, suite);
    repo.write("calc.sh", &calc(&[special], ""));
    repo.write("tests/test_z.sh", "[ \"$(sh calc.sh mul 99 2)\" = 0 ]\n");
    repo.submit_test(suite, None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.write("tests/test_sub.sh", SUB_TEST);
    std::fs::remove_file(repo.dir().join("tests/test_z.sh")).expect("remove the witness");
    red(&repo, suite);
    repo.write("calc.sh", &calc(&[special, SUB_ARM], ""));
    green(&repo, suite);
    squash(&repo);
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout
            .contains("task 1's RED test (step 1.1, `sh run_tests.sh`) killed 5 of 8 mutants"),
        "{}",
        out.stdout
    );
    assert_eq!(main_tip(&repo), main);
}

/// Task 1 with the `mul 99` special case and a GREEN-written witness that kills its mutants
/// (`tests/test_z.sh`), then task 2, whose RED step rewrites the witness as `witness_after`
/// (it no longer checks the result), every RED command the whole suite; squashed.
fn witness_weakened_later(repo: &TestRepo, witness_after: &str) {
    let suite = "sh run_tests.sh";
    let special = "  mul) [ \"$2\" = 99 ] && { echo 0; exit; }; echo $(( $2 * $3 ));;";
    repo.write("tests/test_mul.sh", MUL_TEST);
    red(repo, suite);
    repo.write("calc.sh", &calc(&[special], ""));
    repo.write("tests/test_z.sh", "[ \"$(sh calc.sh mul 99 2)\" = 0 ]\n");
    repo.submit_test(suite, None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.write("tests/test_sub.sh", SUB_TEST);
    repo.write("tests/test_z.sh", witness_after);
    red(repo, suite);
    repo.write("calc.sh", &calc(&[special, SUB_ARM], ""));
    green(repo, suite);
    squash(repo);
}

/// A test a GREEN step wrote and a later task weakened (its assertion taken out) measures the
/// earlier task's code as the PR ends with it: the special case's mutants it killed when
/// strong (all 8) survive the weak one (5 of 8), so under enforce the task is refused.
#[test]
fn a_test_a_later_task_weakens_does_not_measure_an_earlier_tasks_code() {
    let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.9", TWO_TASKS);
    witness_weakened_later(&repo, "sh calc.sh mul 99 2 >/dev/null\n");
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.starts_with(
            "FAILURE: task 1's RED test (step 1.1, `sh run_tests.sh`) killed 5 of 8 mutants of \
             the code the task wrote (made by the built-in mutator), below the 90% [verify] \
             min_killed: it does not check what the code does. Surviving mutants (the test \
             still passes with each):\n\
             - calc.sh:3 `99` → `100`\n\
             - calc.sh:3 `0` → ``\n\
             - calc.sh:3 `0` → `1`\n"
        ),
        "{}",
        out.stdout
    );
    assert_eq!(main_tip(&repo), main);
}

/// The weakened witness measured the same on the agent's machine and by `attest` in a fresh
/// clone: the special case's three mutants survive in both (passed under a `min_killed` the
/// 5 of 8 meet), and the note names the witness as a file the task changed that its test
/// does not notice.
#[test]
fn a_weakened_witness_is_measured_alike_by_the_squash_and_attest_in_a_fresh_clone() {
    use crate::attest::{Server, push};
    let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.5", TWO_TASKS);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    // Still run, but it no longer checks what `mul 99 2` prints.
    witness_weakened_later(&repo, "sh calc.sh mul 99 2 >/dev/null\n");
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let expected = serde_json::json!([
        {"task": 1, "step": "1.1", "tool": "builtin", "mutants": 8, "killed": 5,
         "survived": ["calc.sh:3 `99` → `100`", "calc.sh:3 `0` → ``", "calc.sh:3 `0` → `1`"],
         "not_measured": [{"path": "tests/test_z.sh", "why": "the tests do not notice it"}],
            "files": [{"path": "calc.sh", "mutants": 8, "killed": 5}],
            "witnesses": ["run_tests.sh"]},
        {"task": 2, "step": "2.1", "tool": "builtin", "mutants": 4, "killed": 4,
            "files": [{"path": "calc.sh", "mutants": 4, "killed": 4}],
            "witnesses": ["run_tests.sh"]}]);
    assert_eq!(final_note(&repo)["adequacy"], expected);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    let ci = ci_clone(&repo, &server);
    let json = ci.run(&["attest", "--no-note", "--json", &merge]).json();
    assert_eq!(json["verdicts"][0]["passed"], true, "{json}");
    assert_eq!(json["verdicts"][0]["adequacy"], expected, "{json}");
}

/// The witness weakened by a line put on top of it (`exit 0`, or `[ -n "$CI" ] || exit 0`),
/// while task 2's own test, added to another file task 1's command runs
/// (`tests/test_add.sh`), fails on task 1's code: task 1 is measured with the lines task 2
/// added that still pass on task 1's code put back (the `exit 0`, not task 2's test), and
/// refused: 5 of 8, where the lines kept were task 1's less those taken out (all 8 killed).
#[test]
fn a_witness_weakened_by_an_added_line_beside_a_later_test_does_not_measure_an_earlier_task() {
    for guard in ["exit 0", "[ -n \"$CI_ONLY\" ] || exit 0"] {
        let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.9", TWO_TASKS);
        let suite = "sh run_tests.sh";
        let special = "  mul) [ \"$2\" = 99 ] && { echo 0; exit; }; echo $(( $2 * $3 ));;";
        let check = "[ \"$(sh calc.sh mul 99 2)\" = 0 ]\n";
        repo.write("tests/test_mul.sh", MUL_TEST);
        red(&repo, suite);
        repo.write("calc.sh", &calc(&[special], ""));
        repo.write("tests/test_z.sh", check);
        repo.submit_test(suite, None).expect(0);
        repo.run(&["checkpoint"]).expect(0);
        repo.run(&["get-task"]).expect(0);
        repo.write(
            "tests/test_add.sh",
            &format!("[ \"$(sh calc.sh add 2 3)\" = 5 ]\n{SUB_TEST}"),
        );
        repo.write("tests/test_z.sh", &format!("{guard}\n{check}"));
        red(&repo, suite);
        repo.write("calc.sh", &calc(&[special, SUB_ARM], ""));
        green(&repo, suite);
        squash(&repo);
        let main = main_tip(&repo);
        let out = repo.run(&["submit-work", "-s", "squashed"]);
        out.expect(1);
        assert!(
            out.stdout.starts_with(
                "FAILURE: task 1's RED test (step 1.1, `sh run_tests.sh`) killed 5 of 8 mutants \
                 of the code the task wrote (made by the built-in mutator), below the 90% \
                 [verify] min_killed: it does not check what the code does. Surviving mutants \
                 (the test still passes with each):\n\
                 - calc.sh:3 `99` → `100`\n\
                 - calc.sh:3 `0` → ``\n\
                 - calc.sh:3 `0` → `1`\n"
            ),
            "{guard}: {}",
            out.stdout
        );
        assert_eq!(main_tip(&repo), main, "{guard}");
    }
}

/// The witness weakened in a file that also gains task 2's own test, which fails on task 1's
/// code: task 1 is measured with the witness holding only the lines the squash kept (not the
/// strong assertion, not task 2's test), and refused as when weakened alone.
#[test]
fn a_witness_weakened_beside_a_later_test_does_not_measure_an_earlier_tasks_code() {
    let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.9", TWO_TASKS);
    witness_weakened_later(
        &repo,
        &format!("sh calc.sh mul 99 2 >/dev/null\n{SUB_TEST}"),
    );
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout
            .contains("task 1's RED test (step 1.1, `sh run_tests.sh`) killed 5 of 8 mutants"),
        "{}",
        out.stdout
    );
    assert_eq!(main_tip(&repo), main);
}

/// An honest PR whose task 2 adds its test to a test file task 1's command runs (the suite's
/// `tests/test_add.sh`, on main before the PR): that file as the squash has it fails on task
/// 1's code, so task 1 is measured with it holding the lines task 1 ended with that the
/// squash kept, and passes under enforce, every mutant killed.
#[test]
fn a_later_task_adding_its_test_to_a_file_an_earlier_task_runs_passes() {
    let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 1", TWO_TASKS);
    let suite = "sh run_tests.sh";
    honest_first_task(&repo, suite);
    repo.write(
        "tests/test_add.sh",
        &format!("[ \"$(sh calc.sh add 2 3)\" = 5 ]\n{SUB_TEST}"),
    );
    red(&repo, suite);
    repo.write("calc.sh", &calc(&[MUL_ARM, SUB_ARM], ""));
    green(&repo, suite);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        honest_adequacy_of_the_suite()
    );
}
