//! Whether an agent client will load a project's settings (our hooks and MCP server) in a
//! folder, read off the client's own record of the folders its user trusted: Codex's
//! `[projects."<dir>"] trust_level` in `$CODEX_HOME/config.toml`, Gemini CLI's
//! `~/.gemini/trustedFolders.json`. Pure: the engine reads the files.

use std::path::Path;

/// What a client's record says of a folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trust {
    /// Trusted: the client loads the project's settings.
    Trusted,
    /// Marked untrusted by its user: the client drops the project's settings, asked or not.
    Untrusted,
    /// Not decided yet: an interactive session asks once; headless, the settings are dropped
    /// unless the command line or the environment trusts the folder.
    Undecided,
}

/// Codex: the `trust_level` of the nearest of `project` and its ancestors that
/// `config` (the text of `$CODEX_HOME/config.toml`) names under `[projects]`.
pub fn codex(config: Option<&str>, project: &Path) -> Trust {
    codex_rule(config, project).map_or(Trust::Undecided, |(_, trust)| trust)
}

/// [`codex`], with the folder whose `[projects."<dir>"]` entry decided it.
pub fn codex_rule(config: Option<&str>, project: &Path) -> Option<(String, Trust)> {
    let table = config
        .and_then(|text| text.parse::<toml::Table>().ok())
        .and_then(|t| t.get("projects").and_then(|p| p.as_table()).cloned())?;
    for dir in project.ancestors() {
        let key = dir.to_string_lossy();
        let level = table
            .get(key.as_ref())
            .and_then(|entry| entry.get("trust_level"))
            .and_then(|level| level.as_str());
        match level {
            Some("trusted") => return Some((key.into_owned(), Trust::Trusted)),
            Some("untrusted") => return Some((key.into_owned(), Trust::Untrusted)),
            _ => {}
        }
    }
    None
}

/// What `git orchestrate run` does about a client's trust in the project before its first
/// turn: the client must load the project's settings, and a user's own "untrusted" is never
/// overruled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunTrust {
    /// Trusted already: nothing to do.
    Loads,
    /// Not judged yet: `run` trusts it (Codex records that, `--trust`; Gemini CLI is told
    /// for the turn alone, through its environment), and says so.
    Grant,
    /// Marked untrusted by the user: `run` refuses to start.
    Refuse,
}

pub fn run_trust(trust: &Trust) -> RunTrust {
    match trust {
        Trust::Trusted => RunTrust::Loads,
        Trust::Undecided => RunTrust::Grant,
        Trust::Untrusted => RunTrust::Refuse,
    }
}

/// Gemini CLI: the rule of `folders` (the text of `trustedFolders.json`, a path → rule map)
/// that applies to `project` most closely: `TRUST_FOLDER` and `DO_NOT_TRUST` cover the folder
/// named and everything in it, `TRUST_PARENT` its parent folder.
pub fn gemini(folders: Option<&str>, project: &Path) -> Trust {
    gemini_rule(folders, project).map_or(Trust::Undecided, |(_, trust)| trust)
}

/// [`gemini`], with the path of the rule that decided it.
pub fn gemini_rule(folders: Option<&str>, project: &Path) -> Option<(String, Trust)> {
    let rules = folders
        .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok())
        .and_then(|v| v.as_object().cloned())?;
    let mut best: Option<(usize, String, Trust)> = None;
    for (path, rule) in &rules {
        let path = Path::new(path);
        let (covered, trust) = match rule.as_str() {
            Some("TRUST_FOLDER") => (Some(path), Trust::Trusted),
            Some("TRUST_PARENT") => (path.parent(), Trust::Trusted),
            Some("DO_NOT_TRUST") => (Some(path), Trust::Untrusted),
            _ => continue,
        };
        let Some(covered) = covered.filter(|c| project.starts_with(c)) else {
            continue;
        };
        let depth = covered.components().count();
        if best.as_ref().is_none_or(|(d, _, _)| depth > *d) {
            best = Some((depth, path.display().to_string(), trust));
        }
    }
    best.map(|(_, path, trust)| (path, trust))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn codex_trust_is_the_nearest_projects_entry() {
        let project = Path::new("/home/u/src/app");
        assert_eq!(codex(None, project), Trust::Undecided);
        assert_eq!(codex(Some("not toml ["), project), Trust::Undecided);
        let config = "model = \"m\"\n[projects.\"/home/u/src/app\"]\ntrust_level = \"trusted\"\n";
        assert_eq!(codex(Some(config), project), Trust::Trusted);
        let config = "[projects.\"/home/u\"]\ntrust_level = \"untrusted\"\n";
        assert_eq!(codex(Some(config), project), Trust::Untrusted);
        let config = "[projects.\"/home/u\"]\ntrust_level = \"untrusted\"\n\
                      [projects.\"/home/u/src/app\"]\ntrust_level = \"trusted\"\n";
        assert_eq!(codex(Some(config), project), Trust::Trusted);
        let config = "[projects.\"/home/u/src/app2\"]\ntrust_level = \"trusted\"\n";
        assert_eq!(codex(Some(config), project), Trust::Undecided);
        let config = "[projects.\"/home/u\"]\ntrust_level = \"untrusted\"\n";
        assert_eq!(
            codex_rule(Some(config), project),
            Some(("/home/u".to_string(), Trust::Untrusted))
        );
    }

    #[test]
    fn run_trusts_only_a_project_nobody_judged() {
        assert_eq!(run_trust(&Trust::Trusted), RunTrust::Loads);
        assert_eq!(run_trust(&Trust::Undecided), RunTrust::Grant);
        assert_eq!(run_trust(&Trust::Untrusted), RunTrust::Refuse);
    }

    #[test]
    fn gemini_trust_is_the_closest_rule() {
        let project = Path::new("/home/u/src/app");
        assert_eq!(gemini(None, project), Trust::Undecided);
        assert_eq!(
            gemini(Some(r#"{"/home/u/src/app": "TRUST_FOLDER"}"#), project),
            Trust::Trusted
        );
        assert_eq!(
            gemini(Some(r#"{"/home/u/src/other": "TRUST_PARENT"}"#), project),
            Trust::Trusted
        );
        assert_eq!(
            gemini(
                Some(r#"{"/home/u": "TRUST_FOLDER", "/home/u/src": "DO_NOT_TRUST"}"#),
                project
            ),
            Trust::Untrusted
        );
        assert_eq!(
            gemini(Some(r#"{"/home/u/src/app-old": "TRUST_FOLDER"}"#), project),
            Trust::Undecided
        );
    }
}
