//! What pytest loads around a pinned test besides `conftest.py` (docs/integrity.md,
//! "Per-test evidence"), with real pytest: its configuration (`pytest.ini`, `.pytest.ini`,
//! the pytest section of `pyproject.toml`, `tox.ini`, `setup.cfg`), the plugin modules
//! `pytest_plugins` names, and such files the working tree has but git ignores, are test
//! code which RED steps write. A GREEN step that neuters the pinned test through one
//! (`addopts = -p evil`, `--deselect`, `-k`, `python_files`, a plugin rewritten) is refused
//! at GREEN, by the final check and by `attest` in a fresh clone; one that adds a dependency
//! to `pyproject.toml`'s `[project]` is not.

use std::path::Path;

use pretty_assertions::assert_eq;

use crate::evidence::{
    CALC, CALC_MUL, attest_in_clone, pycalc_with, pytest, pytest_command, red_mul,
};
use crate::oracle::{MUL_PLAN, main_tip, mark_done_and_merge, red, squash};
use crate::support::*;

/// A plugin module that makes every collected test's run a no-op: pytest reports the pinned
/// test passed though its body never ran.
const EVIL: &str = "def pytest_collection_modifyitems(items):\n    for item in items:\n        \
                    item.runtest = lambda: None\n";

/// main's `pyproject.toml`: the project, no pytest section.
const PYPROJECT: &str = "[project]\nname = \"calc\"\nversion = \"0.1\"\ndependencies = []\n";

/// A calculator on main with a `pyproject.toml` (and `files`), its PR: multiply.
fn repo_with(bin: &Path, extra: &str, files: &[(&str, &str)]) -> TestRepo {
    let mut all = vec![("pyproject.toml", PYPROJECT)];
    all.extend_from_slice(files);
    pycalc_with(bin, extra, MUL_PLAN, &all)
}

/// The refusal's first line when the RED test's run had `with` (the runner's files put
/// back) and still failed: `what` is what those files are.
fn refusal(command: &str, with: &str, what: &str) -> String {
    format!(
        "FAILURE: `{command}` passed (exit 0), but the task's RED test `{command}` (run with \
         {with}) still fails (exit 1): the GREEN step must make it pass. {what} test code, \
         which only a RED step may write: what the GREEN step changed there is not in the RED \
         test's run. What the test needs from it (a fixture, say) belongs in the task's RED \
         test file, written by its RED step; submit-work cannot undo the GREEN step, so a RED \
         step that lacks it needs a new plan (`request-scope-reduction` once unlocked, or \
         `submit-work --contradiction`); debugging attempt 1"
    )
}

/// The cheats: the configuration file a GREEN step writes, what it holds, and how the
/// refusal names the file's run.
fn cheats() -> Vec<(&'static str, String, String)> {
    let out = |path: &str| format!("{path} taken out, as the RED step's tree has none");
    let evil = "addopts = -p evil\n";
    vec![
        ("pytest.ini", format!("[pytest]\n{evil}"), out("pytest.ini")),
        (
            ".pytest.ini",
            format!("[pytest]\n{evil}"),
            out(".pytest.ini"),
        ),
        (
            "tests/pytest.ini",
            format!("[pytest]\n{evil}"),
            out("tests/pytest.ini"),
        ),
        (
            "pyproject.toml",
            format!("{PYPROJECT}\n[tool.pytest.ini_options]\naddopts = \"-p evil\"\n"),
            "pyproject.toml as the RED step left it".into(),
        ),
        (
            "tox.ini",
            format!("[tox]\nenvlist = py3\n\n[pytest]\n{evil}"),
            out("tox.ini"),
        ),
        (
            "setup.cfg",
            format!("[metadata]\nname = calc\n\n[tool:pytest]\n{evil}"),
            out("setup.cfg"),
        ),
        // iniconfig drops a byte-order mark before the first section.
        (
            "tox.ini",
            format!("\u{feff}[pytest]\n{evil}"),
            out("tox.ini"),
        ),
        (
            "setup.cfg",
            format!("\u{feff}[tool:pytest]\n{evil}"),
            out("setup.cfg"),
        ),
        (
            "pytest.ini",
            "[pytest]\naddopts = --deselect tests/test_mul.py::test_mul\n".into(),
            out("pytest.ini"),
        ),
        (
            "pytest.ini",
            "[pytest]\naddopts = -k \"not mul\"\n".into(),
            out("pytest.ini"),
        ),
        (
            "pytest.ini",
            "[pytest]\npython_files = test_add.py\n".into(),
            out("pytest.ini"),
        ),
    ]
}

/// Each configuration a GREEN step writes to neuter the pinned test (a plugin of the repo
/// loaded through `addopts = -p`, in each file pytest reads its configuration from, at the
/// root or on the test's way; the test deselected, filtered out by `-k`, or no longer
/// collected): the RED test's run has the file as the RED tree has it, fails, and the
/// refusal names it and what to do. `mul` is still missing.
#[test]
fn pytest_configuration_a_green_step_writes_is_refused_at_green() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    for (path, content, with) in cheats() {
        let repo = repo_with(&bin, "", &[]);
        red_mul(&repo, &command);
        repo.write("evil.py", EVIL);
        repo.write(path, &content);
        let out = repo.submit_test(&command, None);
        out.expect(1);
        assert_eq!(
            out.stdout.lines().next().unwrap_or_default(),
            refusal(&command, &with, "pytest's configuration is"),
            "{path}: {content}"
        );
        assert_eq!(repo.status(), "DEBUGGING", "{path}: {content}");
    }
}

/// RED pins `test_mul`; an honest GREEN; then `mul` taken out again and `path` written as
/// `content` (with the plugin `evil.py`), checkpointed (the gates, pytest itself, pass).
fn configured_after_green(repo: &TestRepo, command: &str, path: &str, content: &str) {
    red_mul(repo, command);
    repo.write("calc.py", CALC_MUL);
    repo.submit_test(command, None).expect(0);
    repo.write("calc.py", CALC);
    repo.write("evil.py", EVIL);
    repo.write(path, content);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
}

/// The configuration a GREEN step (then a checkpoint) wrote is no pass of the pinned test
/// at the end, whichever of the GREEN step's cheats it is: the final check and `attest` in a
/// fresh clone run it with each configuration file as RED steps left it, else as the base
/// has it (absent: main has none), and it fails. (One main has is a test that existed when
/// the PR began, which the PR may change only with a human's approval when the gates fail
/// with it as it was.)
#[test]
fn pytest_configuration_written_after_red_is_refused_at_the_end_and_by_attest() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    let failed = "FAILED tests/test_mul.py::test_mul";
    for (path, content, _) in cheats() {
        let refusal = format!(
            "the final check of task 1's RED test (step 1.1, `{command}`, with tests/test_mul.py \
             as the RED step left them, and {path} as RED steps left it, else as the base has \
             it) failed: it fails on the squashed commit (exit 1). Output:"
        );
        let repo = pycalc_with(&bin, "", MUL_PLAN, &[]);
        configured_after_green(&repo, &command, path, &content);
        let main = main_tip(&repo);
        squash(&repo);
        let out = repo.run(&["submit-work", "-s", "squashed"]);
        out.expect(1);
        assert!(
            out.stdout.starts_with(&format!("FAILURE: {refusal}")) && out.stdout.contains(failed),
            "{path}: {}",
            out.stdout
        );
        assert_eq!(main_tip(&repo), main, "main did not move");

        let repo = pycalc_with(&bin, "\n[finalize]\nclean_check = false\n", MUL_PLAN, &[]);
        configured_after_green(&repo, &command, path, &content);
        squash(&repo);
        repo.run(&["submit-work", "-s", "squashed"]).expect(0);
        mark_done_and_merge(&repo).expect(0);
        let out = attest_in_clone(&repo);
        out.expect(1);
        assert!(
            out.stdout.contains(&format!("  - {refusal}")) && out.stdout.contains(failed),
            "{path}: {}",
            out.stdout
        );
    }
}

/// The honest twin: a GREEN step that adds a dependency to `pyproject.toml`'s `[project]`
/// (and one to `setup.cfg`'s `[options]`, beside the pytest section main has) changes
/// nothing pytest reads: accepted at GREEN, proven at the end and by `attest` in a fresh
/// clone.
#[test]
fn a_dependency_a_green_step_adds_to_pyproject_passes() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    let setup = "[metadata]\nname = calc\n\n[tool:pytest]\naddopts = -q\n";
    let repo = repo_with(&bin, "", &[("setup.cfg", setup)]);
    red_mul(&repo, &command);
    repo.write("calc.py", CALC_MUL);
    repo.write(
        "pyproject.toml",
        &PYPROJECT.replace("[]", "[\"requests>=2\"]"),
    );
    repo.write(
        "setup.cfg",
        &format!("{setup}\n[options]\ninstall_requires = requests\n"),
    );
    crate::oracle::green(&repo, &command);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    attest_in_clone(&repo).expect(0);
}

/// A `conftest.py`, and a `pytest.ini`, that git ignores (`.git/info/exclude`) in the
/// working tree at GREEN: pytest loads them (the conftest beside the test's way, in
/// `tests/zz/`, which it collects), no commit has them. The RED test's run is not in place
/// then: it has them taken out, fails, and the refusal names them.
#[test]
fn an_ignored_conftest_or_configuration_is_taken_out_at_green() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    for (path, content, what) in [
        ("tests/zz/conftest.py", EVIL.to_string(), "conftest.py is"),
        (
            "pytest.ini",
            "[pytest]\naddopts = -p evil\n".to_string(),
            "pytest's configuration is",
        ),
    ] {
        let repo = repo_with(&bin, "", &[]);
        red_mul(&repo, &command);
        std::fs::write(
            repo.path.join(".git/info/exclude"),
            "zz/\npytest.ini\nevil.py\n",
        )
        .unwrap();
        repo.write("evil.py", EVIL);
        repo.write(path, &content);
        let status = repo.git(&["status", "--porcelain", "--untracked-files=all"]);
        assert_eq!(status, "?? tests/test_mul.py\n", "the files are ignored");
        let out = repo.submit_test(&command, None);
        out.expect(1);
        assert_eq!(
            out.stdout.lines().next().unwrap_or_default(),
            refusal(
                &command,
                &format!("{path} taken out, as the RED step's tree has none"),
                what
            ),
            "{path}"
        );
        assert_eq!(repo.status(), "DEBUGGING");
    }
}

/// main's root `conftest.py` names a plugin module of the repository in `pytest_plugins`;
/// it holds a fixture.
const PLUGGED: &[(&str, &str)] = &[
    ("conftest.py", "pytest_plugins = [\"helpers.plugin\"]\n"),
    ("helpers/__init__.py", ""),
    (
        "helpers/plugin.py",
        "import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n",
    ),
];

/// A GREEN step that rewrites the plugin module `pytest_plugins` names (to neuter every
/// test) is refused at GREEN (the run has it as the RED step left it), by the final check
/// and by `attest` in a fresh clone (as the base has it).
#[test]
fn a_plugin_module_named_in_pytest_plugins_is_test_code() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    let plugin = "helpers/plugin.py";
    let repo = repo_with(&bin, "", PLUGGED);
    red_mul(&repo, &command);
    repo.write(plugin, EVIL);
    let out = repo.submit_test(&command, None);
    out.expect(1);
    assert_eq!(
        out.stdout.lines().next().unwrap_or_default(),
        refusal(
            &command,
            "helpers/plugin.py as the RED step left it",
            "A plugin module pytest loads is"
        )
    );

    let refusal = format!(
        "the final check of task 1's RED test (step 1.1, `{command}`, with tests/test_mul.py as \
         the RED step left them, and {plugin} as RED steps left it, else as the base has it) \
         failed: it fails on the squashed commit (exit 1). Output:"
    );
    let failed = "FAILED tests/test_mul.py::test_mul";
    let repo = repo_with(&bin, "", PLUGGED);
    configured_after_green(&repo, &command, plugin, EVIL);
    squash(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.starts_with(&format!("FAILURE: {refusal}")) && out.stdout.contains(failed),
        "{}",
        out.stdout
    );

    let repo = repo_with(&bin, "\n[finalize]\nclean_check = false\n", PLUGGED);
    configured_after_green(&repo, &command, plugin, EVIL);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let out = attest_in_clone(&repo);
    out.expect(1);
    assert!(
        out.stdout.contains(&format!("  - {refusal}")) && out.stdout.contains(failed),
        "{}",
        out.stdout
    );
}

/// A `pytest_plugins` that only running its module tells (a name) cannot be pinned: the RED
/// step is refused, saying how to write it.
#[test]
fn a_pytest_plugins_that_is_no_literal_is_refused_at_red() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    let repo = repo_with(
        &bin,
        "",
        &[
            (
                "conftest.py",
                "PLUGINS = [\"helpers.plugin\"]\npytest_plugins = PLUGINS\n",
            ),
            PLUGGED[1],
            PLUGGED[2],
        ],
    );
    repo.write("tests/test_mul.py", crate::evidence::TEST_MUL);
    let out = repo.submit_test(&command, Some("FAIL"));
    out.expect(1);
    assert!(
        out.stdout.contains(
            "its test cannot be pinned: conftest.py sets `pytest_plugins = PLUGINS`, which is not \
             a string or a list of strings written out, and which plugin modules it names (test \
             code, pinned with the test) only running it tells: write it as a string or a list \
             of strings"
        ),
        "{}",
        out.stdout
    );
    // Written out, the RED step pins it.
    repo.write("conftest.py", "pytest_plugins = [\"helpers.plugin\"]\n");
    red(&repo, &command);
}

/// The honest twin that needs the section-only rule: the task's test checks the project's
/// version in `pyproject.toml`, which main lacks, and the GREEN step writes one with
/// `[project]` alone. pytest reads nothing of it: the RED test's run has it as the working
/// tree has it (taken out, the test would fail), and so do the final check and `attest` in a
/// fresh clone.
#[test]
fn a_pyproject_a_green_step_writes_without_a_pytest_section_stays_for_the_pinned_test() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    let repo = pycalc_with(&bin, "", MUL_PLAN, &[]);
    repo.write(
        "tests/test_version.py",
        "import tomllib\n\n\ndef test_version():\n    with open(\"pyproject.toml\", \"rb\") as f:\n        \
         assert tomllib.load(f)[\"project\"][\"version\"] == \"1.0\"\n",
    );
    red(&repo, &command);
    assert_eq!(
        repo.state()["red_test"]["red_tests"],
        serde_json::json!(["tests.test_version::test_version"])
    );
    repo.write(
        "pyproject.toml",
        "[project]\nname = \"calc\"\nversion = \"1.0\"\n",
    );
    crate::oracle::green(&repo, &command);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    attest_in_clone(&repo).expect(0);
}

/// The configuration file the RED command names with `-c` (pytest reads it instead of
/// searching for one) and the plugin module a `-p` loads are pinned with the test as hooks:
/// a GREEN step that rewrites either to neuter the test is refused by the RED test's run,
/// which has the file as the RED tree has it (the gate, which names neither, would fail
/// too, but later and for another reason).
#[test]
fn the_configuration_and_plugin_the_red_command_names_are_pinned() {
    let Some(bin) = pytest() else { return };
    let plain: [(&str, &str); 2] = [("ci/ci-pytest.ini", "[pytest]\n"), ("plug.py", "")];
    for (named, path, content, what) in [
        (
            // `--rootdir .`: else the named file's directory is the root, and the test's id
            // another.
            "-c ci/ci-pytest.ini --rootdir .",
            "ci/ci-pytest.ini",
            "[pytest]\naddopts = -p evil\n",
            "pytest's configuration is",
        ),
        (
            "-p plug",
            "plug.py",
            EVIL,
            "A plugin module pytest loads is",
        ),
    ] {
        let command = format!("{} {named}", pytest_command(&bin));
        let repo = repo_with(&bin, "", &plain);
        red_mul(&repo, &command);
        repo.write("evil.py", EVIL);
        repo.write(path, content);
        let out = repo.submit_test(&command, None);
        out.expect(1);
        assert_eq!(
            out.stdout.lines().next().unwrap_or_default(),
            refusal(&command, &format!("{path} as the RED step left it"), what),
            "{named}"
        );
        assert_eq!(repo.status(), "DEBUGGING", "{named}");
    }
}

/// A plugin of the repository that does nothing to the tests: what main's configuration
/// loads with `addopts = -p …`.
const PLUG: &str = "def pytest_report_header(config):\n    return \"project plugin\"\n";

/// The configurations that load a plugin module of the repository through `addopts`: the
/// file, what it holds, the plugin's file, and whether the RED step writes the file (else
/// main has it), in each file and spelling pytest reads it.
fn addopts_loading() -> Vec<(&'static str, String, &'static str, bool)> {
    vec![
        (
            "pytest.ini",
            "[pytest]\naddopts = -p plug\n".into(),
            "plug.py",
            false,
        ),
        (
            "pyproject.toml",
            format!(
                "{PYPROJECT}\n[tool.pytest.ini_options]\naddopts = [\"-q\", \"-phelpers.plug\"]\n"
            ),
            "helpers/plug.py",
            false,
        ),
        (
            "setup.cfg",
            "[metadata]\nname = calc\n\n[tool:pytest]\naddopts =\n    -q\n    -p plug\n".into(),
            "plug.py",
            false,
        ),
        (
            "tox.ini",
            "[pytest]\naddopts = -p plug\n".into(),
            "plug.py",
            true,
        ),
    ]
}

/// main with `config` (unless the RED step writes it) and the plugin `plugin` it loads.
fn repo_loading(
    bin: &Path,
    extra: &str,
    (config, content, plugin, by_red): (&str, &str, &str, bool),
) -> TestRepo {
    let mut files = vec![(plugin, PLUG), ("helpers/__init__.py", "")];
    if !by_red {
        files.push((config, content));
    }
    repo_with(bin, extra, &files)
}

/// The RED step of `mul`, writing `config` with the test where `by_red` says so.
fn red_loading(repo: &TestRepo, command: &str, (config, content, by_red): (&str, &str, bool)) {
    if by_red {
        repo.write(config, content);
    }
    red_mul(repo, command);
}

/// The plugin module a configuration's `addopts` loads with `-p` (main's, or one its RED
/// step wrote), rewritten by a GREEN step to neuter every test: the RED test's run has it as
/// the RED step left it, fails, and the refusal names it. `mul` is still missing.
#[test]
fn a_plugin_the_configurations_addopts_loads_is_test_code_at_green() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    for (config, content, plugin, by_red) in addopts_loading() {
        let repo = repo_loading(&bin, "", (config, &content, plugin, by_red));
        red_loading(&repo, &command, (config, &content, by_red));
        repo.write(plugin, EVIL);
        let out = repo.submit_test(&command, None);
        out.expect(1);
        assert_eq!(
            out.stdout.lines().next().unwrap_or_default(),
            refusal(
                &command,
                &format!("{plugin} as the RED step left it"),
                "A plugin module pytest loads is"
            ),
            "{config}: {content}"
        );
        assert_eq!(repo.status(), "DEBUGGING", "{config}");
    }
}

/// The plugin `addopts` loads, rewritten after an honest GREEN and checkpointed (the gates
/// pass: every test is neutered): the final check and `attest` in a fresh clone run the
/// pinned test with it as RED steps left it, else as the base has it, and it fails.
#[test]
fn a_plugin_the_configurations_addopts_loads_is_refused_at_the_end_and_by_attest() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    let failed = "FAILED tests/test_mul.py::test_mul";
    for (config, content, plugin, by_red) in addopts_loading().into_iter().take(2) {
        let refusal = format!(
            "the final check of task 1's RED test (step 1.1, `{command}`, with tests/test_mul.py \
             as the RED step left them, and {plugin} as RED steps left it, else as the base has \
             it) failed: it fails on the squashed commit (exit 1). Output:"
        );
        let repo = repo_loading(&bin, "", (config, &content, plugin, by_red));
        configured_after_green(&repo, &command, plugin, EVIL);
        let main = main_tip(&repo);
        squash(&repo);
        let out = repo.run(&["submit-work", "-s", "squashed"]);
        out.expect(1);
        assert!(
            out.stdout.starts_with(&format!("FAILURE: {refusal}")) && out.stdout.contains(failed),
            "{config}: {}",
            out.stdout
        );
        assert_eq!(main_tip(&repo), main, "main did not move");

        let extra = "\n[finalize]\nclean_check = false\n";
        let repo = repo_loading(&bin, extra, (config, &content, plugin, by_red));
        configured_after_green(&repo, &command, plugin, EVIL);
        squash(&repo);
        repo.run(&["submit-work", "-s", "squashed"]).expect(0);
        mark_done_and_merge(&repo).expect(0);
        let out = attest_in_clone(&repo);
        out.expect(1);
        assert!(
            out.stdout.contains(&format!("  - {refusal}")) && out.stdout.contains(failed),
            "{config}: {}",
            out.stdout
        );
    }
}

/// The honest twin: with the plugin loaded through `addopts` (main's configuration, or one
/// the RED step wrote), a GREEN step that writes the code passes at GREEN, at the end and
/// by `attest` in a fresh clone.
#[test]
fn code_a_green_step_writes_beside_an_addopts_plugin_passes() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    for (config, content, plugin, by_red) in addopts_loading() {
        let repo = repo_loading(&bin, "", (config, &content, plugin, by_red));
        red_loading(&repo, &command, (config, &content, by_red));
        repo.write("calc.py", CALC_MUL);
        crate::oracle::green(&repo, &command);
        squash(&repo);
        repo.run(&["submit-work", "-s", "squashed"]).expect(0);
        mark_done_and_merge(&repo).expect(0);
        attest_in_clone(&repo).expect(0);
    }
}
