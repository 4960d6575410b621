//! `hermetic`'s readings of settings one behaviour at a time, and its judgement of a real
//! repository's configuration and refs.

use super::*;
use crate::engine::test_repo::Repo;
use pretty_assertions::assert_eq;

fn setting(key: &str, value: &str) -> Setting {
    Setting {
        key: key.into(),
        value: value.into(),
        origin: ".git/config".into(),
        worktree_only: false,
    }
}

#[test]
fn a_filter_setting_names_its_driver_even_with_dots_in_the_name() {
    assert_eq!(driver("filter.lfs.clean"), Some("lfs"));
    assert_eq!(driver("filter.my.driver.smudge"), Some("my.driver"));
}

#[test]
fn a_setting_outside_the_filter_section_names_no_driver() {
    assert_eq!(driver("core.fsmonitor"), None);
    assert_eq!(driver("filter"), None);
    assert_eq!(driver("filter.nodot"), None);
    assert_eq!(driver(""), None);
}

#[test]
fn git_lfs_is_its_own_filter_under_either_spelling_of_its_command() {
    assert!(is_lfs_own("filter.lfs.clean", "git-lfs clean -- %f"));
    assert!(is_lfs_own("filter.lfs.clean", "git lfs clean -- %f"));
    assert!(is_lfs_own("filter.lfs.clean", "  git-lfs   clean  --  %f "));
}

#[test]
fn git_lfs_with_anything_added_or_under_another_drivers_name_is_not_its_own() {
    assert!(!is_lfs_own("filter.lfs.clean", "git-lfs clean -- %f extra"));
    assert!(!is_lfs_own("filter.lfs.clean", "git-lfs smudge -- %f"));
    assert!(!is_lfs_own("filter.other.clean", "git-lfs clean -- %f"));
    assert!(!is_lfs_own("filter.lfs.required", "true"));
    assert!(!is_lfs_own(
        "filter.lfs.clean",
        "/usr/bin/git-lfs clean -- %f"
    ));
    assert!(!is_lfs_own("filter.lfs.clean", ""));
}

#[test]
fn a_falsy_value_is_any_of_gits_spellings_of_false_in_any_case() {
    for value in ["false", "FALSE", "No", "off", "0", "", "  false  "] {
        assert!(is_false(value), "{value:?}");
    }
    for value in ["true", "yes", "1", "on", "falsey", "/path/to/monitor"] {
        assert!(!is_false(value), "{value:?}");
    }
}

#[test]
fn an_fsmonitor_set_to_false_is_safe_and_to_a_hook_is_not() {
    assert_eq!(judge(&setting("core.fsmonitor", "off")), None);
    let found = judge(&setting("core.fsmonitor", "true")).expect("unsafe");
    assert_eq!(found.setting, "core.fsmonitor");
    assert!(found.why.contains("file system monitor"), "{}", found.why);
}

#[test]
fn a_refusal_names_the_setting_its_origin_and_how_to_unset_it() {
    let mut s = setting("core.worktree", "/elsewhere");
    s.origin = "/home/u/.gitconfig".into();
    let found = judge(&s).expect("core.worktree is unsafe");
    assert_eq!(found.setting, "core.worktree");
    assert_eq!(found.origin, "/home/u/.gitconfig");
    assert_eq!(
        found.fix,
        "a human removes it: git config --unset-all core.worktree (in /home/u/.gitconfig)"
    );
}

#[test]
fn a_hooks_path_is_unsafe_only_when_one_worktree_alone_sets_it() {
    let mut s = setting("core.hookspath", "/tmp/hooks");
    assert_eq!(judge(&s), None);
    s.worktree_only = true;
    assert!(judge(&s).is_some());
}

#[test]
fn a_filter_part_other_than_clean_smudge_or_process_is_not_judged() {
    assert_eq!(judge(&setting("filter.x.required", "true")), None);
    assert_eq!(judge(&setting("filter.x.clean", "   ")), None);
    assert!(judge(&setting("filter.x.process", "x")).is_some());
}

#[test]
fn a_key_without_a_subsection_is_lowercased_whole() {
    assert_eq!(lowercase_key("Core.HooksPath"), "core.hookspath");
    assert_eq!(lowercase_key("NODOT"), "nodot");
    assert_eq!(lowercase_key(""), "");
}

#[test]
fn a_subsection_keeps_its_case_and_its_inner_dots() {
    assert_eq!(
        lowercase_key("FILTER.My.Driver.CLEAN"),
        "filter.My.Driver.clean"
    );
}

#[test]
fn empty_or_unquoted_git_config_parameters_give_no_settings() {
    assert_eq!(parse_parameters(""), Vec::<(String, String)>::new());
    assert_eq!(parse_parameters("core.fsmonitor=true"), Vec::new());
}

#[test]
fn a_parameter_without_a_value_reads_as_an_empty_value() {
    assert_eq!(
        parse_parameters("'core.fsmonitor'"),
        vec![("core.fsmonitor".to_string(), String::new())]
    );
}

#[test]
fn an_unterminated_quote_takes_the_rest_of_the_text() {
    assert_eq!(
        parse_parameters("'a.b=c d"),
        vec![("a.b".to_string(), "c d".to_string())]
    );
}

#[test]
fn a_plain_repository_is_fit_to_verify_in() {
    let repo = Repo::new();
    assert_eq!(problems(&repo.session("w")).expect("read"), Vec::new());
    assert!(require(&repo.session("w")).is_ok());
}

#[test]
fn a_replace_ref_makes_the_repository_unfit_and_is_named() {
    let repo = Repo::new();
    let first = repo.git(&["rev-parse", "HEAD"]);
    let second = repo.commit_all("second");
    repo.git(&["replace", &first, &second]);
    let found = problems(&repo.session("w")).expect("read");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].setting, format!("refs/replace/{first}"));
    assert_eq!(
        found[0].fix,
        format!("a human checks what it replaces, then: git replace -d {first}")
    );
    assert!(matches!(
        require(&repo.session("w")),
        Err(EngineError::NotHermetic(_))
    ));
}

#[test]
fn a_content_filter_counts_only_where_an_attribute_applies_it_to_a_stored_file() {
    let repo = Repo::new();
    repo.git(&["config", "filter.strip.clean", "sed s/a/b/"]);
    assert_eq!(problems(&repo.session("w")).expect("read"), Vec::new());
    repo.write(".gitattributes", "*.txt filter=strip\n");
    repo.commit_all("attributes");
    assert_eq!(
        problems(&repo.session("w")).expect("read"),
        Vec::new(),
        "no file is *.txt"
    );
    repo.write("a.txt", "a\n");
    repo.commit_all("a file the filter applies to");
    let found = problems(&repo.session("w")).expect("read");
    let names: Vec<&str> = found.iter().map(|u| u.setting.as_str()).collect();
    assert_eq!(names, vec!["filter.strip.clean"]);
}

#[test]
fn the_scratch_worktrees_live_outside_the_working_tree() {
    let repo = Repo::new();
    let root = scratch_root(&repo.session("w"));
    let workdir = repo.dir().canonicalize().expect("the repository exists");
    assert!(!root.starts_with(&workdir), "{}", root.display());
}
