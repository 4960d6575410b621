//! Which files a task wrote are measured (docs/integrity.md, "Adequacy by mutation"): code by
//! its kind is mutated; a file named as a test path or as a kind that is not code (a
//! `lib/test_mode.sh` a script sources, a `logo.png` whose line it evaluates) is code when the
//! task's test notices it taken out, and mutated then, on the agent's machine and by `attest`
//! in a fresh clone; one the test does not notice (a README, a real image, a test the runner
//! runs) is named as not measured.

use pretty_assertions::assert_eq;

use crate::adequacy::{CALC, case_calc_planned, ci_clone, final_note};
use crate::oracle::{MUL_PLAN, green, main_tip, mark_done_and_merge, red, squash};
use crate::support::*;

/// The task's test: `mul 4 3` is 12, and, where the agent's environment says so
/// (`FOOL_LOCAL`), the `mul 99` special case too: a test that checks the special case where
/// the agent runs it, and nothing of it elsewhere.
const FOOLABLE_TEST: &str = "[ \"$(sh calc.sh mul 4 3)\" = 12 ] && { [ -z \"$FOOL_LOCAL\" ] || \
    { [ \"$(sh calc.sh mul 99 2)\" = 0 ] && [ \"$(sh calc.sh mul 100 2)\" = 200 ]; }; }\n";
const HONEST_TEST: &str = "[ \"$(sh calc.sh mul 4 3)\" = 12 ]\n";

/// `calc.sh` with `arm` before `esac`.
fn calc(arm: &str) -> String {
    CALC.replace("esac", &format!("{arm}\nesac"))
}

/// The one task: its RED test `test`, then a GREEN step writing `files` (path, text), the
/// `mul` arm `arm` in `calc.sh`; squashed.
fn task(repo: &TestRepo, test: &str, arm: &str, files: &[(&str, &[u8])]) {
    repo.write("tests/test_mul.sh", test);
    red(repo, "sh tests/test_mul.sh");
    repo.write("calc.sh", &calc(arm));
    for (path, bytes) in files {
        let full = repo.dir().join(path);
        std::fs::create_dir_all(full.parent().expect("a file's directory")).expect("mkdir");
        std::fs::write(full, bytes).expect("write a file of the task");
    }
    green(repo, "sh tests/test_mul.sh");
    squash(repo);
}

/// `submit-work -s squashed` with `FOOL_LOCAL` set.
fn submit_fooling(repo: &TestRepo) -> Run {
    Run::from(
        repo.command(BIN, ["submit-work", "-s", "squashed"])
            .env("FOOL_LOCAL", "1")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run git-orchestrate"),
    )
}

/// The special case alone, in a file named as a test path that `calc.sh` sources.
const TEST_MODE: &[u8] = b"[ \"$2\" = 99 ] && { echo 0; exit; }\n";
const TEST_MODE_ARM: &str = "  mul) . ./lib/test_mode.sh; echo $(( $2 * $3 ));;";

/// The same, as the last line of a text file named as an image, which `calc.sh` evaluates.
const LOGO: &[u8] = b"PNG\n[ \"$2\" = 99 ] && { echo 0; exit; }\n";
const LOGO_ARM: &str = "  mul) eval \"$(tail -n 1 logo.png)\"; echo $(( $2 * $3 ));;";

/// What `attest` in a fresh clone re-ran of the one task.
const RERAN: &str = "  re-ran: the gates passed on the squashed commit in a clean worktree (tests)\n  \
    re-ran: RED test of step 1.1 `sh tests/test_mul.sh`: exit 1 on the base, exit 0 on the \
    final tree; evidence: exit code only\n";

/// The special case in `path` (not code by its name), measured and refused under enforce on
/// the agent's machine; where the agent fools its local check, refused by the server hook
/// and FAILED by `attest` in a fresh clone, naming the file's survivors: `attested` is that output's adequacy and refusal.
fn special_case_in_a_file_not_named_as_code(
    path: &str,
    text: &[u8],
    arm: &str,
    refusal: &str,
    attested: &str,
) {
    use crate::attest::{Server, push, refused, server_refs};
    let verify = "adequacy = \"enforce\"\nmin_killed = 0.5";
    let repo = case_calc_planned(verify, MUL_PLAN);
    task(&repo, FOOLABLE_TEST, arm, &[(path, text)]);
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(out.stdout.starts_with(refusal), "{}", out.stdout);
    assert_eq!(main_tip(&repo), main);
    // The same PR where the agent fooled its local check (a tree refused once and passed
    // then would be flaky: a repository of its own).
    let repo = case_calc_planned(verify, MUL_PLAN);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    task(&repo, FOOLABLE_TEST, arm, &[(path, text)]);
    submit_fooling(&repo).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    let before = server_refs(&repo, &server);
    let out = push(&repo, &server, &[], &["main", REF]);
    let first = refusal
        .split_once("each):")
        .expect("a refusal names its survivors")
        .0;
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[&format!(
            "git-orchestrate: refused refs/heads/main <id>: moves main to a commit that is not \
             a workflow merge that attests PASSED: {}each): [more: `git orchestrate attest \
             COMMIT` shows all of it]",
            first.trim_start_matches("FAILURE: ")
        )],
    );
    let ci = ci_clone(&repo, &server);
    let out = ci.run(&["attest", "--no-note", &merge]);
    out.expect(1);
    assert_eq!(
        redact_ids(&out.stdout),
        format!("FAILED <id> (the merge of workflow main)\n{RERAN}{attested}")
    );
}

/// The refusal of a task whose special case is in `path`, its survivors `survived`.
fn refusal(path: &str, killed: usize, mutants: usize, survived: &[&str]) -> String {
    let survived: String = survived.iter().map(|s| format!("- {s}\n")).collect();
    format!(
        "task 1's RED test (step 1.1, `sh tests/test_mul.sh`) killed {killed} of {mutants} \
         mutants of {path}, code the task wrote (made by the built-in mutator), below the 50% \
         [verify] min_killed, which each file of a task's code must meet on its own: it does \
         not check what the code does. Surviving mutants (the test still passes with each):\n\
         {survived}Strengthen the test so it fails on them (a test in a new RED step), then \
         squash again\n"
    )
}

const TEST_MODE_SURVIVORS: [&str; 4] = [
    "lib/test_mode.sh:1 `99` → `100`",
    "lib/test_mode.sh:1 `0` → ``",
    "lib/test_mode.sh:1 `0` → `1`",
    "lib/test_mode.sh:1 line removed",
];

/// A special case kept in `lib/test_mode.sh` (named as a test path by the default
/// `**/test_*`), which `calc.sh` sources: the test notices it taken out, so it is code,
/// mutated, and its survivors refuse the task, where it used to be left out as a test.
#[test]
fn a_special_case_in_a_file_named_as_a_test_path_is_measured() {
    let survived = TEST_MODE_SURVIVORS;
    let lines: String = survived
        .iter()
        .map(|s| format!("\n    survived: {s}"))
        .collect();
    special_case_in_a_file_not_named_as_code(
        "lib/test_mode.sh",
        TEST_MODE,
        TEST_MODE_ARM,
        &format!("FAILURE: {}", refusal("lib/test_mode.sh", 1, 5, &survived)),
        &format!(
            "  adequacy of task 1 (step 1.1): killed 5 of 9 mutants (55%, made by the built-in \
             mutator)\n    file calc.sh: killed 4 of 4 mutants (100%)\n    file \
             lib/test_mode.sh: killed 1 of 5 mutants (20%){lines}\n  - {}no note written: \
             --no-note\n",
            refusal("lib/test_mode.sh", 1, 5, &survived)
        ),
    );
}

const LOGO_SURVIVORS: [&str; 4] = [
    "logo.png:1 line removed",
    "logo.png:2 `99` → `100`",
    "logo.png:2 `0` → `1`",
    "logo.png:2 line removed",
];

/// A special case kept as the last line of `logo.png`, text named as an image, which
/// `calc.sh` evaluates: the test notices it taken out, so it is code, mutated, and its
/// survivors refuse the task.
#[test]
fn a_special_case_in_a_file_named_as_an_image_is_measured() {
    let survived = LOGO_SURVIVORS;
    // `tail -n 0` evaluates nothing: the test that does not check the special case does not
    // notice.
    let lines: String = std::iter::once("calc.sh:3 `1` → `0`")
        .chain(survived)
        .map(|s| format!("\n    survived: {s}"))
        .collect();
    special_case_in_a_file_not_named_as_code(
        "logo.png",
        LOGO,
        LOGO_ARM,
        &format!("FAILURE: {}", refusal("logo.png", 1, 5, &survived)),
        &format!(
            "  adequacy of task 1 (step 1.1): killed 5 of 10 mutants (50%, made by the built-in \
             mutator)\n    file calc.sh: killed 4 of 5 mutants (80%)\n    file logo.png: \
             killed 1 of 5 mutants (20%){lines}\n  - {}no note written: --no-note\n",
            refusal("logo.png", 1, 5, &survived)
        ),
    );
}

/// The same special case in a `logo.png` that is not text (a PNG header before the line
/// `calc.sh` evaluates): no mutant of it can be made, and the test notices it taken out, so
/// the task is unmeasured and refused under enforce, where the file used to be left out as an
/// image.
#[test]
fn a_special_case_in_a_binary_file_named_as_an_image_is_refused_unmeasured() {
    let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 0.5", MUL_PLAN);
    let logo = [b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\n".as_slice(), LOGO].concat();
    task(&repo, HONEST_TEST, LOGO_ARM, &[("logo.png", &logo)]);
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.starts_with(
            "FAILURE: task 1's RED test (step 1.1, `sh tests/test_mul.sh`) was measured against \
             no mutant of the code the task wrote (logo.png, code the task wrote, is not text \
             where the task ends (a byte that is no UTF-8, or over the size cap): no mutant of \
             it can be made; keep code in UTF-8 text): under [verify] adequacy = \"enforce\" a \
             test that was not measured does not pass."
        ),
        "{}",
        out.stdout
    );
    assert_eq!(main_tip(&repo), main);
}

/// The honest twins: the implementation in `lib/test_mode.sh` (named as a test path, sourced
/// by `calc.sh`) is code the test notices, mutated, every mutant killed; a README, a real
/// image and a test a GREEN step wrote that the runner runs (not the pinned one) are files the
/// test does not notice taken out, named as not measured, on the agent's machine and by
/// `attest` in a fresh clone, which PASSES it under enforce.
#[test]
fn files_the_test_does_not_notice_are_named_and_an_honest_helper_is_measured() {
    use crate::attest::{Server, push};
    let repo = case_calc_planned("adequacy = \"enforce\"\nmin_killed = 1", MUL_PLAN);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    repo.write("tests/test_mul.sh", HONEST_TEST);
    red(&repo, "sh run_tests.sh");
    repo.write("calc.sh", &calc("  mul) . ./lib/test_mode.sh;;"));
    repo.write("lib/test_mode.sh", "echo $(( $2 * $3 ))\n");
    repo.write(
        "README.md",
        "# Calculator\n\n`sh calc.sh mul 4 3` prints 12.\n",
    );
    repo.write("tests/test_more.sh", "[ \"$(sh calc.sh mul 5 3)\" = 15 ]\n");
    std::fs::write(
        repo.dir().join("logo.png"),
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01",
    )
    .expect("write the image");
    green(&repo, "sh run_tests.sh");
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let expected = serde_json::json!([
        {"task": 1, "step": "1.1", "tool": "builtin", "mutants": 5, "killed": 5,
         "files": [{"path": "calc.sh", "mutants": 1, "killed": 1},
                   {"path": "lib/test_mode.sh", "mutants": 4, "killed": 4}],
         "not_measured": [
            {"path": "README.md", "why": "the tests do not notice it"},
            {"path": "logo.png", "why": "not text, and the tests do not notice it"},
            {"path": "tests/test_more.sh", "why": "the tests do not notice it"}],
         "witnesses": ["run_tests.sh"]}]);
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
         re-ran: RED test of step 1.1 `sh run_tests.sh`: exit 1 on the base, exit 0 on the \
         final tree; evidence: exit code only\n  \
         adequacy of task 1 (step 1.1): killed 5 of 5 mutants (100%, made by the built-in \
         mutator)\n    \
         file calc.sh: killed 1 of 1 mutants (100%)\n    \
         file lib/test_mode.sh: killed 4 of 4 mutants (100%)\n    \
         not measured: README.md (the tests do not notice it)\n    \
         not measured: logo.png (not text, and the tests do not notice it)\n    \
         not measured: tests/test_more.sh (the tests do not notice it)\n    \
         witness: run_tests.sh (the RED command runs it: test code, not mutated)\n\
         no note written: --no-note\n"
    );
    let json = ci.run(&["attest", "--no-note", "--json", &merge]).json();
    assert_eq!(json["verdicts"][0]["adequacy"], expected);
}

/// A special case kept in a file named as a test runner's own file (`lib/jest.config.sh`,
/// `tox.ini`) that `calc.sh` sources, in a PR whose test is a shell script: the runner's
/// files are put back only for a pytest or jest test, so for this one the file is judged as
/// any other, noticed, mutated, and its survivors refuse the task (it used to be skipped as
/// test code, and the squash passed with 1 of 1 killed).
#[test]
fn a_special_case_in_a_file_named_as_a_runners_own_is_measured_for_another_runner() {
    for path in ["lib/jest.config.sh", "tox.ini"] {
        let verify = "adequacy = \"enforce\"\nmin_killed = 0.5";
        let repo = case_calc_planned(verify, MUL_PLAN);
        let arm = format!("  mul) . ./{path}; echo $(( $2 * $3 ));;");
        task(&repo, FOOLABLE_TEST, &arm, &[(path, TEST_MODE)]);
        let main = main_tip(&repo);
        let out = repo.run(&["submit-work", "-s", "squashed"]);
        out.expect(1);
        // Mutated as any file of its kind (an INI file by the generic mutator): the special
        // case's constant survives.
        let head = "FAILURE: task 1's RED test (step 1.1, `sh tests/test_mul.sh`) killed 1 of ";
        assert!(out.stdout.starts_with(head), "{path}: {}", out.stdout);
        for part in [
            format!("mutants of {path}, code the task wrote"),
            format!("\n- {path}:1 `99` → `100`\n"),
        ] {
            assert!(out.stdout.contains(&part), "{path}: {}", out.stdout);
        }
        assert_eq!(main_tip(&repo), main, "{path}");
    }
}
