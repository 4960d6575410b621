//! `init --agent`: merging into a client's project files full of the user's own settings,
//! idempotence, and `--remove` restoring them byte for byte.

use crate::support::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// A settings file a real user might have: unrelated settings, other hooks, odd spacing.
const CLAUDE_SETTINGS: &str = "{\n\t\"model\": \"claude-opus-4\",\n\t\"permissions\": {\"allow\": [\"Bash(npm run lint)\"], \"deny\": [\"Read(./.env)\"]},\n\t\"hooks\": {\n\t\t\"PreToolUse\": [{\"matcher\": \"Edit\", \"hooks\": [{\"type\": \"command\", \"command\": \"prettier --check\"}]}],\n\t\t\"Notification\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]}]\n\t},\n\t\"statusLine\": {\"type\": \"command\", \"command\": \"echo hi\"},\n\t\"env\": {\"A\": \"1\"}\n}";

fn read(repo: &TestRepo, path: &str) -> Option<String> {
    std::fs::read_to_string(repo.path.join(path)).ok()
}

#[test]
fn init_agent_claude_merges_keeps_everything_and_remove_restores_it_byte_for_byte() {
    let repo = TestRepo::new();
    repo.write(".claude/settings.json", CLAUDE_SETTINGS);
    let out = repo.run(&["init", "--agent", "claude"]);
    out.expect(0)
        .says("agent claude: added git-orchestrate to .claude/settings.json")
        .says("agent claude: created .mcp.json")
        .says("claude mcp list");

    let settings: Value =
        serde_json::from_str(&read(&repo, ".claude/settings.json").unwrap()).unwrap();
    let keys: Vec<&String> = settings.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["model", "permissions", "hooks", "statusLine", "env"]);
    assert_eq!(settings["permissions"]["deny"], json!(["Read(./.env)"]));
    assert_eq!(
        settings["permissions"]["allow"],
        json!(["Bash(npm run lint)", "mcp__orchestrate"])
    );
    let hooks: Vec<&String> = settings["hooks"].as_object().unwrap().keys().collect();
    assert_eq!(
        hooks,
        ["PreToolUse", "Notification", "SessionStart", "Stop"]
    );
    assert_eq!(
        settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "prettier --check"
    );
    assert_eq!(
        settings["hooks"]["PreToolUse"][1]["hooks"][0]["command"],
        "git-orchestrate agent-hook claude pre-tool-use"
    );
    assert_eq!(
        settings["hooks"]["Notification"][0]["hooks"][0]["command"],
        "notify-send done"
    );
    assert!(
        read(&repo, ".claude/settings.json")
            .unwrap()
            .contains("\n\t\"model\""),
        "tabs kept"
    );
    let mcp: Value = serde_json::from_str(&read(&repo, ".mcp.json").unwrap()).unwrap();
    assert_eq!(
        mcp,
        json!({"mcpServers": {"orchestrate": {"type": "stdio", "command": "git-orchestrate", "args": ["mcp"]}}})
    );

    // Again: nothing changes, byte for byte.
    let before = (
        read(&repo, ".claude/settings.json"),
        read(&repo, ".mcp.json"),
    );
    repo.run(&["init", "--agent", "claude"])
        .expect(0)
        .says("agent claude: unchanged: .claude/settings.json")
        .says("agent claude: unchanged: .mcp.json");
    assert_eq!(
        (
            read(&repo, ".claude/settings.json"),
            read(&repo, ".mcp.json")
        ),
        before
    );

    // Remove: the user's file exactly as it was (its odd spacing too), ours gone.
    let json = repo
        .run(&["init", "--agent", "claude", "--remove", "--json"])
        .expect(0)
        .json();
    assert_eq!(
        json["agent"]["files"],
        json!([{"path": ".claude/settings.json", "action": "restored"}, {"path": ".mcp.json", "action": "removed"}])
    );
    assert_eq!(
        read(&repo, ".claude/settings.json").as_deref(),
        Some(CLAUDE_SETTINGS)
    );
    assert_eq!(read(&repo, ".mcp.json"), None);
    // Removing twice is harmless.
    repo.run(&["init", "--agent", "claude", "--remove"])
        .expect(0)
        .says("unchanged: .claude/settings.json");
}

#[test]
fn a_file_changed_after_init_keeps_the_users_changes_when_ours_are_removed() {
    let repo = TestRepo::new();
    repo.run(&["init", "--agent", "claude"]).expect(0);
    let text = read(&repo, ".claude/settings.json").unwrap();
    let mut value: Value = serde_json::from_str(&text).unwrap();
    value["model"] = json!("sonnet");
    repo.write(
        ".claude/settings.json",
        &serde_json::to_string_pretty(&value).unwrap(),
    );
    repo.run(&["init", "--agent", "claude", "--remove"])
        .expect(0)
        .says(
            "agent claude: took git-orchestrate out of .claude/settings.json (you changed it \
             since; the rest is kept)\n",
        );
    let left: Value = serde_json::from_str(&read(&repo, ".claude/settings.json").unwrap()).unwrap();
    assert_eq!(left, json!({"model": "sonnet"}));
    // The directory init made for them is gone with them when nothing else is in it.
    assert_eq!(read(&repo, ".mcp.json"), None);
}

#[test]
fn codex_and_gemini_files_round_trip() {
    let repo = TestRepo::new();
    let codex = "model = \"o4-mini\"\napproval_policy = \"never\"\n\n[mcp_servers.docs]\ncommand = \"docs\"\n";
    repo.write(".codex/config.toml", codex);
    let gemini = "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"x\"\n    }\n  }\n}\n";
    repo.write(".gemini/settings.json", gemini);
    repo.run(&["init", "--agent", "codex"])
        .expect(0)
        .says("codex mcp list");
    repo.run(&["init", "--agent", "gemini"])
        .expect(0)
        .says("gemini mcp list");

    let config: toml::Table = toml::from_str(&read(&repo, ".codex/config.toml").unwrap()).unwrap();
    assert_eq!(
        config["mcp_servers"]["orchestrate"]["args"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        config["mcp_servers"]["docs"]["command"].as_str(),
        Some("docs")
    );
    let hooks: Value = serde_json::from_str(&read(&repo, ".codex/hooks.json").unwrap()).unwrap();
    assert_eq!(
        hooks["hooks"]["Stop"][0]["hooks"][0]["command"],
        "git-orchestrate agent-hook codex stop"
    );
    let settings: Value =
        serde_json::from_str(&read(&repo, ".gemini/settings.json").unwrap()).unwrap();
    let servers: Vec<&String> = settings["mcpServers"].as_object().unwrap().keys().collect();
    assert_eq!(servers, ["other", "orchestrate"]);
    assert_eq!(
        settings["hooks"]["AfterAgent"][0]["hooks"][0]["command"],
        "git-orchestrate agent-hook gemini stop"
    );

    repo.run(&["init", "--agent", "codex", "--remove"])
        .expect(0);
    repo.run(&["init", "--agent", "gemini", "--remove"])
        .expect(0);
    assert_eq!(read(&repo, ".codex/config.toml").as_deref(), Some(codex));
    assert_eq!(read(&repo, ".codex/hooks.json"), None);
    assert_eq!(
        read(&repo, ".gemini/settings.json").as_deref(),
        Some(gemini)
    );
}

#[test]
fn a_broken_file_is_refused_and_nothing_is_written() {
    let repo = TestRepo::new();
    repo.write(".claude/settings.json", "{ \"model\": ");
    let out = repo.run(&["init", "--agent", "claude"]);
    out.expect(2);
    assert!(
        out.stderr
            .contains(".claude/settings.json: it is not valid JSON"),
        "{}",
        out.stderr
    );
    assert_eq!(
        read(&repo, ".claude/settings.json").as_deref(),
        Some("{ \"model\": ")
    );
    assert_eq!(read(&repo, ".mcp.json"), None);
    repo.run(&["init", "--remove"]).expect(2);
}

#[test]
fn a_workflow_chosen_by_flag_is_named_in_the_wiring() {
    let repo = TestRepo::new();
    repo.run(&["--workflow", "w2", "init", "--agent", "claude"])
        .expect(0);
    let mcp: Value = serde_json::from_str(&read(&repo, ".mcp.json").unwrap()).unwrap();
    assert_eq!(
        mcp["mcpServers"]["orchestrate"]["args"],
        json!(["--workflow", "w2", "mcp"])
    );
}

/// `doctor` says, per client wired here, whether it will load our settings in this folder,
/// read off the client's own record of trust.
#[test]
fn doctor_says_whether_each_wired_client_loads_our_settings_here() {
    let repo = TestRepo::new();
    let agents = |repo: &TestRepo, env: &[(&str, &std::path::Path)]| -> Vec<(String, String)> {
        let mut cmd = repo.command(BIN, ["--json", "doctor"]);
        for (key, value) in env {
            cmd.env(key, value);
        }
        let out = Run::from(cmd.output().unwrap());
        let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["check"] == "agent")
            .map(|c| {
                (
                    c["level"].as_str().unwrap().to_string(),
                    c["message"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(agents(&repo, &[]), [], "no client wired, nothing said");
    for client in ["claude", "codex", "gemini"] {
        repo.run(&["init", "--agent", client]).expect(0);
    }
    // An empty home: neither Codex nor Gemini CLI has trusted the project.
    let home = tempfile::tempdir().unwrap();
    let found = agents(
        &repo,
        &[
            ("HOME", home.path()),
            ("CODEX_HOME", &home.path().join(".codex")),
        ],
    );
    let levels: Vec<&str> = found.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(levels, ["ok", "warning", "warning"], "{found:#?}");
    assert!(
        found[1]
            .1
            .starts_with("codex: the project is not trusted yet"),
        "{found:#?}"
    );
    assert!(
        found[2].1.starts_with("gemini: the folder is not trusted"),
        "{found:#?}"
    );
    // Trusted in each client's own files.
    let root = repo.path.display().to_string();
    std::fs::create_dir_all(home.path().join(".codex")).unwrap();
    std::fs::write(
        home.path().join(".codex/config.toml"),
        format!(
            "[projects.{}]\ntrust_level = \"trusted\"\n",
            toml::Value::String(root.clone())
        ),
    )
    .unwrap();
    std::fs::create_dir_all(home.path().join(".gemini")).unwrap();
    std::fs::write(
        home.path().join(".gemini/trustedFolders.json"),
        serde_json::json!({ &root: "TRUST_FOLDER" }).to_string(),
    )
    .unwrap();
    let found = agents(
        &repo,
        &[
            ("HOME", home.path()),
            ("CODEX_HOME", &home.path().join(".codex")),
        ],
    );
    let levels: Vec<&str> = found.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(levels, ["ok", "ok", "ok"], "{found:#?}");
    // Marked untrusted in Codex: an error, as `run` cannot help it.
    std::fs::write(
        home.path().join(".codex/config.toml"),
        format!(
            "[projects.{}]\ntrust_level = \"untrusted\"\n",
            toml::Value::String(root)
        ),
    )
    .unwrap();
    let found = agents(
        &repo,
        &[
            ("HOME", home.path()),
            ("CODEX_HOME", &home.path().join(".codex")),
        ],
    );
    assert_eq!(found[1].0, "error", "{found:#?}");
    assert!(
        found[1].1.contains("marks this project untrusted"),
        "{found:#?}"
    );
    // A file the client loads that is not there is named, not said to be loaded.
    std::fs::remove_file(repo.path.join(".mcp.json")).unwrap();
    let found = agents(&repo, &[("HOME", home.path())]);
    assert_eq!(found[0].0, "error", "{found:#?}");
    assert!(
        found[0].1.starts_with(
            "claude: .mcp.json is not there: its agent would run without git-orchestrate's guard \
             or tools, and `git orchestrate run --agent claude` refuses to start"
        ),
        "{found:#?}"
    );
}

/// A user's settings keep their text where git-orchestrate adds nothing: a one-line object
/// stays on its line; ours come after, in the file's indentation.
#[test]
fn init_agent_keeps_the_users_layout() {
    let repo = TestRepo::new();
    let mine = "{\n  \"theme\": \"GitHub\",\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}}\n}\n";
    repo.write(".gemini/settings.json", mine);
    repo.run(&["init", "--agent", "gemini"]).expect(0);
    let text = read(&repo, ".gemini/settings.json").unwrap();
    assert!(
        text.starts_with(
            "{\n  \"theme\": \"GitHub\",\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},\n  \"hooks\": {\n    \"SessionStart\": [\n      {\n"
        ),
        "{text}"
    );
    assert!(text.ends_with("\n  }\n}\n"), "{text}");
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        value["security"],
        json!({"auth": {"selectedType": "gemini-api-key"}})
    );
    assert_eq!(
        value["mcpServers"]["orchestrate"]["command"],
        "git-orchestrate"
    );
    repo.run(&["init", "--agent", "gemini", "--remove"])
        .expect(0);
    assert_eq!(read(&repo, ".gemini/settings.json").unwrap(), mine);
}

/// A key given twice in a settings file is refused, as in a plan: the client and we could
/// each read the other one. Nothing is written.
#[test]
fn a_settings_file_with_a_key_given_twice_is_refused() {
    let repo = TestRepo::new();
    let text = "{\"hooks\": {}, \"model\": \"a\", \"hooks\": {\"Stop\": []}}";
    repo.write(".claude/settings.json", text);
    let out = repo.run(&["init", "--agent", "claude"]);
    out.expect(2);
    assert!(
        out.stderr.contains(
            ".claude/settings.json: the key at `hooks` appears more than once in its object; give it once"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(read(&repo, ".claude/settings.json").as_deref(), Some(text));
    assert_eq!(read(&repo, ".mcp.json"), None);
}

/// A settings file kept elsewhere and linked in (dotfiles) is written through its link: the
/// link stays a link, its target gets our entries, and `--remove` gives the target back.
/// A link that leads nowhere is refused before anything is written.
#[test]
fn a_linked_settings_file_is_written_through_its_link() {
    let repo = TestRepo::new();
    let dotfiles = tempfile::tempdir().unwrap();
    let target = dotfiles.path().join("claude-settings.json");
    std::fs::write(&target, CLAUDE_SETTINGS).unwrap();
    std::fs::create_dir_all(repo.path.join(".claude")).unwrap();
    let link = repo.path.join(".claude/settings.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    repo.run(&["init", "--agent", "claude"]).expect(0);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&target)
            .unwrap()
            .contains("git-orchestrate")
    );
    repo.run(&["init", "--agent", "claude", "--remove"])
        .expect(0);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), CLAUDE_SETTINGS);

    std::fs::remove_file(&target).unwrap();
    let out = repo.run(&["init", "--agent", "claude"]);
    out.expect(2);
    assert!(
        out.stderr
            .contains(".claude/settings.json: it is a symbolic link that leads nowhere"),
        "{}",
        out.stderr
    );
    assert_eq!(read(&repo, ".mcp.json"), None, "nothing was written");
}

/// Two `init --agent` at once take turns: both succeed, and the files hold our entries once.
#[test]
fn two_init_agents_at_once_take_turns() {
    for _ in 0..3 {
        let repo = TestRepo::new();
        repo.write(".claude/settings.json", CLAUDE_SETTINGS);
        let outs: Vec<Run> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    let repo = &repo;
                    scope.spawn(move || repo.run(&["init", "--agent", "claude"]))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for out in &outs {
            assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        }
        repo.run(&["init", "--agent", "claude", "--remove"])
            .expect(0);
        assert_eq!(
            read(&repo, ".claude/settings.json").as_deref(),
            Some(CLAUDE_SETTINGS),
            "the record of what was there before survived the race"
        );
    }
}
