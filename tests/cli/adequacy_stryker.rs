//! Stryker makes the mutants of a JavaScript task (docs/integrity.md, "Adequacy by
//! mutation"): Stryker 9.5.1 from npm, installed once into the cache outside the clone, on
//! the PATH the tests run with; the task's test runs on each mutant. npm is required: without
//! it, or with the registry unreachable, the tests fail, they are not skipped.

use pretty_assertions::assert_eq;

use crate::adequacy::{final_note, submit_with_path};
use crate::oracle::{CALC_CONFIG, MUL_PLAN, green, main_tip, red, squash};
use crate::support::*;

const CALC: &str = "function add(a, b) {\n  return a + b;\n}\nmodule.exports = { add };\n";

/// The task's `mul`, with `before` above it (a comment of the PR's).
fn with_mul(before: &str) -> String {
    format!(
        "function add(a, b) {{\n  return a + b;\n}}\n{before}function mul(a, b) {{\n  \
         return a * b;\n}}\nmodule.exports = {{ add, mul }};\n"
    )
}

/// A test that checks almost nothing: that `mul` is a function.
const WEAK_TEST: &str =
    "const calc = require('../calc');\nif (typeof calc.mul !== 'function') process.exit(1);\n";

/// A JavaScript calculator on main (node scripts for tests, run one after another by the
/// gate), `[verify]` set to `verify`, and the PR to add `mul` under way: RED with the weak
/// test (and `pr_files` written beside it), GREEN with `mul` (`before` above it), squashed.
fn js_task(verify: &str, pr_files: &[(&str, &str)], before: &str) -> TestRepo {
    let repo = TestRepo::empty();
    repo.write("calc.js", CALC);
    repo.write(
        "tests/test_add.js",
        "const calc = require('../calc');\nif (calc.add(2, 3) !== 5) process.exit(1);\n",
    );
    repo.write(
        "run_tests.sh",
        "for t in tests/test_*.js; do node \"$t\" || { echo \"FAILED: $t\"; exit 1; }; done\n",
    );
    repo.write("docs/plan.md", "# Plan\n## PR 1: feat: Multiply\n");
    repo.write(
        ".orchestrate.toml",
        &format!("{CALC_CONFIG}\n[verify]\n{verify}\n"),
    );
    repo.commit_all("calculator");
    repo.submit_plan(MUL_PLAN).expect(0);
    repo.run(&["get-task"]).expect(0);
    for (path, text) in pr_files {
        repo.write(path, text);
    }
    repo.write("tests/test_mul.js", WEAK_TEST);
    red(&repo, "node tests/test_mul.js");
    repo.write("calc.js", &with_mul(before));
    green(&repo, "node tests/test_mul.js");
    squash(&repo);
    repo
}

/// `submit-work` with Stryker on the PATH; fails, loudly, when npm cannot install it.
fn submit_with_stryker(repo: &TestRepo) -> Run {
    let bin = crate::managers::tool("stryker")
        .expect("the Stryker tests need `npm` to install Stryker (is it installed?)");
    submit_with_path(repo, bin)
}

#[test]
fn stryker_names_the_survivors_of_a_test_that_checks_almost_nothing_in_report() {
    let repo = js_task("adequacy = \"report\"", &[], "");
    submit_with_stryker(&repo).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "stryker", "mutants": 3,
            "killed": 1, "survived": ["calc.js:4 `{ … }` → `{}`", "calc.js:5 `*` → `/`"],
            "files": [{"path": "calc.js", "mutants": 3, "killed": 1}]}])
    );
}

/// What the PR could tell Stryker to skip changes nothing: its own `stryker.conf.json`
/// (nothing to mutate, every mutator excluded) is not read, and its `// Stryker disable all`
/// above the lines it wrote makes their mutants `Ignored`, still mutants. The same three are
/// made, and the squash is refused in `enforce`.
#[test]
fn stryker_is_not_told_by_the_prs_files_to_skip_its_lines_and_enforce_refuses() {
    let config = "{\"mutate\": [], \"mutator\": {\"excludedMutations\": \
                  [\"ArithmeticOperator\", \"BlockStatement\", \"ObjectLiteral\"]}}\n";
    // A test path: a file a RED step writes elsewhere is code, mutated by the built-in
    // mutator (Stryker mutates JavaScript only), and this test is of Stryker's mutants.
    let repo = js_task(
        "adequacy = \"enforce\"\nmin_killed = 0.5\n\n[gates]\n\
         test_paths = [\"tests/**\", \"stryker.conf.json\"]",
        &[("stryker.conf.json", config)],
        "// Stryker disable all\n",
    );
    let main = main_tip(&repo);
    let out = submit_with_stryker(&repo);
    out.expect(1);
    assert_eq!(
        out.stdout,
        "FAILURE: task 1's RED test (step 1.1, `node tests/test_mul.js`) killed 1 of 3 mutants \
         of the code the task wrote (made by stryker), below the 50% [verify] min_killed: it \
         does not check what the code does. Surviving mutants (the test still passes with \
         each):\n- calc.js:5 `{ … }` → `{}`\n- calc.js:6 `*` → `/`\nStrengthen the test so it \
         fails on them (a test in a new RED step), then squash again\nstate: \
         AWAITING_FINALIZATION · next: fix what the FAILURE line says and submit again (`git \
         orchestrate get-task` repeats the instructions); if it cannot be fixed, hand it to a \
         human with `git orchestrate escalate --report FILE`\n"
    );
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    assert_eq!(main_tip(&repo), main);
}
