//! What `init --agent` writes into an agent client's project files (docs/setup.md, "Agent set-up"):
//! the hooks and the MCP registration, merged into what is there without dropping or
//! reordering anything, and taken out again. Pure: text in, text out; the engine reads and
//! writes the files.

use serde_json::{Map, Value, json};

use super::hook::Client;

/// One project file of a client, and how it is edited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `.claude/settings.json`: hooks and the permission for the MCP tools.
    ClaudeSettings,
    /// `.mcp.json`: the MCP server.
    ClaudeMcp,
    /// `.codex/config.toml`: the MCP server, as a table appended to the file.
    CodexConfig,
    /// `.codex/hooks.json`: hooks, in Claude Code's shape.
    CodexHooks,
    /// `.gemini/settings.json`: hooks and the MCP server.
    GeminiSettings,
}

pub struct AgentFile {
    pub path: &'static str,
    pub kind: Kind,
}

pub fn files(client: Client) -> Vec<AgentFile> {
    match client {
        Client::Claude => vec![
            AgentFile {
                path: ".claude/settings.json",
                kind: Kind::ClaudeSettings,
            },
            AgentFile {
                path: ".mcp.json",
                kind: Kind::ClaudeMcp,
            },
        ],
        Client::Codex => vec![
            AgentFile {
                path: ".codex/config.toml",
                kind: Kind::CodexConfig,
            },
            AgentFile {
                path: ".codex/hooks.json",
                kind: Kind::CodexHooks,
            },
        ],
        Client::Gemini => vec![AgentFile {
            path: ".gemini/settings.json",
            kind: Kind::GeminiSettings,
        }],
    }
}

/// Every client's project files `init --agent` manages, from the top of the working tree.
pub fn managed_paths() -> Vec<String> {
    [Client::Claude, Client::Codex, Client::Gemini]
        .into_iter()
        .flat_map(files)
        .map(|file| file.path.to_string())
        .collect()
}

/// The name the MCP server is registered under.
pub const SERVER_NAME: &str = "orchestrate";
/// What marks a hook command as ours.
const HOOK_MARK: &str = " agent-hook ";

/// Every environment variable our MCP server reads: the session's role on a ticket workflow,
/// the workflow it serves, and the token of `git orchestrate run`'s turn, which the server
/// writes back when it starts. `GIT_ORCHESTRATE_HUMAN` is left out on purpose: a server
/// started by an agent never answers for a human.
pub const SERVER_ENV: [&str; 3] = [
    crate::workflow::ticket::ROLE_ENV,
    crate::WORKFLOW_ENV,
    super::run::RUN_PROOF_VAR,
];

/// How our commands are started: the program and, for a workflow other than the default,
/// `--workflow W`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    pub program: String,
    pub workflow: Option<String>,
}

impl Launch {
    fn args(&self, rest: &[&str]) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(w) = &self.workflow {
            args.push("--workflow".to_string());
            args.push(w.clone());
        }
        args.extend(rest.iter().map(|s| s.to_string()));
        args
    }

    fn hook_command(&self, client: &str, event: &str) -> String {
        let mut words = vec![self.program.clone()];
        words.extend(self.args(&["agent-hook", client, event]));
        words.join(" ")
    }
}

/// Why a client's file cannot take our entries, or give them back: it is left as it is.
/// Its text (`Display`) is what the person reads after the file's path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The JSON file's top level is no object.
    NotAnObject,
    /// The JSON does not parse (the parser's message).
    InvalidJson(String),
    /// A key appears twice in one object, at this path.
    DuplicateKey(String),
    /// What should be an array at this path (`hooks.Stop`, `permissions.allow`) is not.
    NotAnArray(String),
    /// What should be an object under this top-level key is not.
    NotAnObjectAt(String),
    /// `mcpServers.git-orchestrate` starts another program.
    ServerTaken,
    /// The TOML does not parse (the parser's message).
    InvalidToml(String),
    /// `mcp_servers.git-orchestrate` is there, not in our block.
    TomlServerTaken,
    /// Our table makes the TOML invalid (the parser's message).
    TableRefused(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotAnObject => f.write_str("its top level is not a JSON object"),
            Refusal::InvalidJson(e) => write!(f, "it is not valid JSON ({e})"),
            Refusal::DuplicateKey(path) => write!(
                f,
                "the key at `{path}` appears more than once in its object; give it once"
            ),
            Refusal::NotAnArray(path) => write!(f, "{path} is not an array"),
            Refusal::NotAnObjectAt(key) => write!(f, "`{key}` is not a JSON object"),
            Refusal::ServerTaken => write!(
                f,
                "mcpServers.{SERVER_NAME} is configured for another program; rename or remove it first"
            ),
            Refusal::InvalidToml(e) => write!(f, "it is not valid TOML ({e})"),
            Refusal::TomlServerTaken => write!(
                f,
                "mcp_servers.{SERVER_NAME} is configured already, not by git-orchestrate; rename or remove it first"
            ),
            Refusal::TableRefused(e) => write!(
                f,
                "the server's table cannot be added to it (mcp_servers written inline?): {e}"
            ),
        }
    }
}

/// [`merge`], its refusal as text.
pub fn install(kind: Kind, old: Option<&str>, launch: &Launch) -> Result<String, String> {
    merge(kind, old, launch).map_err(|r| r.to_string())
}

/// [`take_out`], its refusal as text.
pub fn uninstall(kind: Kind, text: &str) -> Result<Option<String>, String> {
    take_out(kind, text).map_err(|r| r.to_string())
}

/// The file with our entries merged in (the same text when they are there already).
pub fn merge(kind: Kind, old: Option<&str>, launch: &Launch) -> Result<String, Refusal> {
    match kind {
        Kind::CodexConfig => install_codex_config(old, launch),
        _ => {
            let style = old.map(JsonStyle::of).unwrap_or_default();
            let mut value = parse_json(old)?;
            let Value::Object(root) = &mut value else {
                return Err(Refusal::NotAnObject);
            };
            let changed = merge_json(kind, root, launch)?;
            if !changed && let Some(old) = old {
                return Ok(old.to_string());
            }
            // The user's text is kept where nothing changed; written afresh only when it
            // cannot be (it is empty, say).
            Ok(old
                .and_then(|old| super::json_edit::rewrite(old, &value, &style.indent))
                .unwrap_or_else(|| style.render(&value)))
        }
    }
}

/// True when the file holds our entries.
pub fn has_ours(kind: Kind, text: &str) -> bool {
    match kind {
        Kind::CodexConfig => codex_block_range(text).is_some(),
        _ => text.contains(HOOK_MARK) || text.contains(&format!("\"{SERVER_NAME}\"")),
    }
}

/// The file with our entries taken out, everything else kept; `None` when nothing else is
/// left in it (the file was ours alone).
pub fn take_out(kind: Kind, text: &str) -> Result<Option<String>, Refusal> {
    match kind {
        Kind::CodexConfig => {
            let Some((start, end)) = codex_block_range(text) else {
                return Ok(Some(text.to_string()));
            };
            let rest = format!("{}{}", &text[..start], &text[end..]);
            Ok((!rest.trim().is_empty()).then_some(rest))
        }
        _ => {
            let style = JsonStyle::of(text);
            let mut value = parse_json(Some(text))?;
            let Value::Object(root) = &mut value else {
                return Err(Refusal::NotAnObject);
            };
            remove_json(kind, root);
            if root.is_empty() {
                return Ok(None);
            }
            Ok(Some(style.render(&value)))
        }
    }
}

fn parse_json(text: Option<&str>) -> Result<Value, Refusal> {
    match text {
        None => Ok(Value::Object(Map::new())),
        Some(t) if t.trim().is_empty() => Ok(Value::Object(Map::new())),
        Some(t) => {
            let value: Value =
                serde_json::from_str(t).map_err(|e| Refusal::InvalidJson(e.to_string()))?;
            // JSON parsers keep one of a key given twice, each its own: the client might read
            // the other one than we would write around.
            match crate::workflow::plan::duplicate_keys(t.as_bytes()).first() {
                Some(problem) => Err(Refusal::DuplicateKey(problem.path.clone())),
                None => Ok(value),
            }
        }
    }
}

/// The hooks of one client, by event: (event, matcher, hook event name for our command,
/// timeout).
fn hook_entries(kind: Kind) -> Vec<(&'static str, Option<&'static str>, &'static str, u64)> {
    match kind {
        Kind::ClaudeSettings => vec![
            ("SessionStart", None, "session-start", 30),
            (
                "PreToolUse",
                Some("Bash|Edit|Write|MultiEdit|NotebookEdit"),
                "pre-tool-use",
                30,
            ),
            ("Stop", None, "stop", 30),
        ],
        Kind::CodexHooks => vec![
            ("SessionStart", None, "session-start", 30),
            ("PreToolUse", None, "pre-tool-use", 30),
            ("Stop", None, "stop", 30),
        ],
        // Gemini CLI's timeouts are in milliseconds.
        Kind::GeminiSettings => vec![
            ("SessionStart", None, "session-start", 30_000),
            (
                "BeforeTool",
                Some("run_shell_command|write_file|replace"),
                "pre-tool-use",
                30_000,
            ),
            ("AfterAgent", None, "stop", 30_000),
        ],
        Kind::ClaudeMcp | Kind::CodexConfig => Vec::new(),
    }
}

fn client_name(kind: Kind) -> &'static str {
    match kind {
        Kind::ClaudeSettings | Kind::ClaudeMcp => "claude",
        Kind::CodexConfig | Kind::CodexHooks => "codex",
        Kind::GeminiSettings => "gemini",
    }
}

/// Adds what is missing; returns whether anything changed.
fn merge_json(kind: Kind, root: &mut Map<String, Value>, launch: &Launch) -> Result<bool, Refusal> {
    let mut changed = false;
    let entries = hook_entries(kind);
    if !entries.is_empty() {
        let hooks = object_at(root, "hooks")?;
        for (event, matcher, ours, timeout) in entries {
            let command = launch.hook_command(client_name(kind), ours);
            let groups = hooks
                .entry(event.to_string())
                .or_insert_with(|| Value::Array(Vec::new()));
            let Value::Array(groups) = groups else {
                return Err(Refusal::NotAnArray(format!("hooks.{event}")));
            };
            let present = groups
                .iter()
                .any(|g| group_commands(g).any(|c| c == command));
            // Ours for this event, set up for another workflow (or program): switched over in
            // place, as the MCP server is, so the hooks and the server judge one workflow.
            let suffix = format!(" agent-hook {} {ours}", client_name(kind));
            let mut switched = false;
            if !present {
                for hook in groups
                    .iter_mut()
                    .filter_map(|g| g.get_mut("hooks").and_then(Value::as_array_mut))
                    .flatten()
                {
                    let stale = hook["command"]
                        .as_str()
                        .is_some_and(|c| c.contains(HOOK_MARK) && c.ends_with(&suffix));
                    if stale {
                        hook["command"] = json!(command);
                        switched = true;
                    }
                }
                changed |= switched;
            }
            if !present && !switched {
                let mut group = Map::new();
                if let Some(m) = matcher {
                    group.insert("matcher".into(), json!(m));
                }
                group.insert(
                    "hooks".into(),
                    json!([{"type": "command", "command": command, "timeout": timeout}]),
                );
                groups.push(Value::Object(group));
                changed = true;
            }
        }
    }
    if kind == Kind::ClaudeSettings {
        let permissions = object_at(root, "permissions")?;
        let allow = permissions
            .entry("allow".to_string())
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(allow) = allow else {
            return Err(Refusal::NotAnArray("permissions.allow".into()));
        };
        let rule = json!(format!("mcp__{SERVER_NAME}"));
        if !allow.contains(&rule) {
            allow.push(rule);
            changed = true;
        }
    }
    if matches!(kind, Kind::ClaudeMcp | Kind::GeminiSettings) {
        let server = match kind {
            Kind::ClaudeMcp => {
                json!({"type": "stdio", "command": launch.program, "args": launch.args(&["mcp"])})
            }
            _ => {
                json!({"command": launch.program, "args": launch.args(&["mcp"]), "timeout": 600_000})
            }
        };
        let servers = object_at(root, "mcpServers")?;
        match servers.get(SERVER_NAME) {
            Some(existing) if *existing == server => {}
            Some(existing) if is_ours(existing) => {
                servers.insert(SERVER_NAME.into(), server);
                changed = true;
            }
            Some(_) => {
                return Err(Refusal::ServerTaken);
            }
            None => {
                servers.insert(SERVER_NAME.into(), server);
                changed = true;
            }
        }
    }
    Ok(changed)
}

/// What one of a client's project files lacks for the client to load our hooks and our MCP
/// server: what `run` refuses to start over and `doctor` reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gap {
    /// The file is not there.
    Missing,
    /// It does not parse (why).
    Unreadable(String),
    /// No hook of ours for this event.
    Hook(&'static str),
    /// No MCP server of ours.
    Server,
    /// Codex: these variables are not passed to the MCP server.
    EnvVars(Vec<&'static str>),
}

impl std::fmt::Display for Gap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Gap::Missing => f.write_str("is not there"),
            Gap::Unreadable(why) => write!(f, "cannot be read: {why}"),
            Gap::Hook(event) => write!(f, "names no `git-orchestrate agent-hook` hook for {event}"),
            Gap::Server => write!(
                f,
                "registers no MCP server `{SERVER_NAME}` that starts `git-orchestrate mcp`"
            ),
            Gap::EnvVars(vars) => write!(
                f,
                "does not pass {} to the MCP server (env_vars under [mcp_servers.{SERVER_NAME}])",
                vars.join(", ")
            ),
        }
    }
}

/// What the file of `kind` (its text, `None` when it is not there) lacks, as the client will
/// read it: every hook of ours, our MCP server, and for Codex the variables it must pass the
/// server. Empty when nothing is missing.
pub fn gaps(kind: Kind, text: Option<&str>) -> Vec<Gap> {
    let Some(text) = text else {
        return vec![Gap::Missing];
    };
    if kind == Kind::CodexConfig {
        return codex_config_gaps(text);
    }
    let value = match parse_json(Some(text)) {
        Ok(value) => value,
        Err(refusal) => return vec![Gap::Unreadable(refusal.to_string())],
    };
    let mut found = Vec::new();
    for (event, _, ours, _) in hook_entries(kind) {
        let suffix = format!(" agent-hook {} {ours}", client_name(kind));
        let present = value["hooks"][event].as_array().is_some_and(|groups| {
            groups
                .iter()
                .any(|g| group_commands(g).any(|c| c.ends_with(&suffix)))
        });
        if !present {
            found.push(Gap::Hook(event));
        }
    }
    if matches!(kind, Kind::ClaudeMcp | Kind::GeminiSettings)
        && !is_ours(&value["mcpServers"][SERVER_NAME])
    {
        found.push(Gap::Server);
    }
    found
}

fn codex_config_gaps(text: &str) -> Vec<Gap> {
    let table: toml::Table = match toml::from_str(text) {
        Ok(table) => table,
        Err(e) => return vec![Gap::Unreadable(format!("it is not valid TOML ({e})"))],
    };
    let server = table
        .get("mcp_servers")
        .and_then(|s| s.get(SERVER_NAME))
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or_default();
    if !is_ours(&server) {
        return vec![Gap::Server];
    }
    let passed: Vec<&str> = server["env_vars"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let lacking: Vec<&'static str> = SERVER_ENV
        .into_iter()
        .filter(|v| !passed.contains(v))
        .collect();
    if lacking.is_empty() {
        Vec::new()
    } else {
        vec![Gap::EnvVars(lacking)]
    }
}

/// An MCP server entry that starts git-orchestrate's own server.
fn is_ours(server: &Value) -> bool {
    server["command"]
        .as_str()
        .is_some_and(|c| c.ends_with("git-orchestrate"))
        && server["args"]
            .as_array()
            .is_some_and(|a| a.last() == Some(&json!("mcp")))
}

fn group_commands(group: &Value) -> impl Iterator<Item = &str> {
    group["hooks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| h["command"].as_str())
}

fn object_at<'m>(
    root: &'m mut Map<String, Value>,
    key: &str,
) -> Result<&'m mut Map<String, Value>, Refusal> {
    match root
        .entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()))
    {
        Value::Object(map) => Ok(map),
        _ => Err(Refusal::NotAnObjectAt(key.to_string())),
    }
}

/// Takes out our hook groups, permission and server; drops containers left empty by it.
fn remove_json(kind: Kind, root: &mut Map<String, Value>) {
    if let Some(Value::Object(hooks)) = root.get_mut("hooks") {
        for (event, _, _, _) in hook_entries(kind) {
            if let Some(Value::Array(groups)) = hooks.get_mut(event) {
                groups.retain(|g| !group_commands(g).any(|c| c.contains(HOOK_MARK)));
                if groups.is_empty() {
                    hooks.remove(event);
                }
            }
        }
        if hooks.is_empty() {
            root.remove("hooks");
        }
    }
    if kind == Kind::ClaudeSettings
        && let Some(Value::Object(permissions)) = root.get_mut("permissions")
    {
        if let Some(Value::Array(allow)) = permissions.get_mut("allow") {
            allow.retain(|r| *r != json!(format!("mcp__{SERVER_NAME}")));
            if allow.is_empty() {
                permissions.remove("allow");
            }
        }
        if permissions.is_empty() {
            root.remove("permissions");
        }
    }
    if let Some(Value::Object(servers)) = root.get_mut("mcpServers") {
        if servers.get(SERVER_NAME).is_some_and(is_ours) {
            servers.remove(SERVER_NAME);
        }
        if servers.is_empty() {
            root.remove("mcpServers");
        }
    }
}

/// How a JSON file is laid out, so a rewrite keeps it: the indentation and the final newline.
#[derive(Clone, Debug, PartialEq, Eq)]
struct JsonStyle {
    indent: String,
    newline: bool,
}

impl Default for JsonStyle {
    fn default() -> Self {
        JsonStyle {
            indent: "  ".into(),
            newline: true,
        }
    }
}

impl JsonStyle {
    fn of(text: &str) -> JsonStyle {
        let indent = text
            .lines()
            .skip(1)
            .find(|l| l.starts_with([' ', '\t']))
            .map(|l| l.chars().take_while(|c| *c == ' ' || *c == '\t').collect())
            .unwrap_or_else(|| "  ".to_string());
        JsonStyle {
            indent,
            newline: text.ends_with('\n') || text.is_empty(),
        }
    }

    fn render(&self, value: &Value) -> String {
        use serde::Serialize as _;
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(self.indent.as_bytes());
        let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
        // A Value always serializes.
        let _ = value.serialize(&mut serializer);
        let mut text = String::from_utf8_lossy(&out).into_owned();
        if self.newline {
            text.push('\n');
        }
        text
    }
}

/// The block appended to `.codex/config.toml`, and where it starts and ends.
fn codex_block(launch: &Launch) -> String {
    let args: Vec<String> = launch
        .args(&["mcp"])
        .iter()
        .map(|a| toml::Value::String(a.clone()).to_string())
        .collect();
    let env: Vec<String> = SERVER_ENV
        .iter()
        .map(|v| toml::Value::String(v.to_string()).to_string())
        .collect();
    // Codex hands a stdio server only the variables named here (and a few of its own, such
    // as PATH and HOME): without them the server of a ticket role starts with no role.
    format!(
        "{CODEX_BEGIN}\n[mcp_servers.{SERVER_NAME}]\ncommand = {}\nargs = [{}]\nenv_vars = [{}]\ntool_timeout_sec = 600\n{CODEX_END}\n",
        toml::Value::String(launch.program.clone()),
        args.join(", "),
        env.join(", ")
    )
}

const CODEX_BEGIN: &str = "# >>> git-orchestrate: the agent tools over MCP (`git orchestrate init --agent codex --remove` takes this out)";
const CODEX_END: &str = "# <<< git-orchestrate";

fn codex_block_range(text: &str) -> Option<(usize, usize)> {
    let start = text.find(CODEX_BEGIN)?;
    let end_marker = text[start..].find(CODEX_END)? + start;
    let mut end = end_marker + CODEX_END.len();
    if text[end..].starts_with('\n') {
        end += 1;
    }
    // The blank line put before the block goes with it.
    let start = if start >= 1 && text[..start].ends_with("\n\n") {
        start - 1
    } else {
        start
    };
    Some((start, end))
}

fn install_codex_config(old: Option<&str>, launch: &Launch) -> Result<String, Refusal> {
    let old = old.unwrap_or_default();
    let block = codex_block(launch);
    if let Some((start, end)) = codex_block_range(old) {
        let current = old[start..end].trim_start_matches('\n');
        if current == block {
            return Ok(old.to_string());
        }
        // An older block of ours (another workflow, another program): replace it in place.
        let replaced =
            format!("{}{}{}", &old[..start], separator(&old[..start]), block) + &old[end..];
        return check_toml(replaced);
    }
    let parsed: toml::Table =
        toml::from_str(old).map_err(|e| Refusal::InvalidToml(e.to_string()))?;
    if parsed
        .get("mcp_servers")
        .and_then(|s| s.get(SERVER_NAME))
        .is_some()
    {
        return Err(Refusal::TomlServerTaken);
    }
    let mut text = old.to_string();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(separator(&text));
    text.push_str(&block);
    check_toml(text)
}

/// A blank line between the user's last line and our block.
fn separator(before: &str) -> &'static str {
    if before.is_empty() || before.ends_with("\n\n") {
        ""
    } else {
        "\n"
    }
}

fn check_toml(text: String) -> Result<String, Refusal> {
    toml::from_str::<toml::Table>(&text).map_err(|e| Refusal::TableRefused(e.to_string()))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn launch() -> Launch {
        Launch {
            program: "git-orchestrate".into(),
            workflow: None,
        }
    }

    const USER_SETTINGS: &str = r#"{
    "model": "opus",
    "permissions": {
        "allow": [
            "Bash(npm test:*)"
        ],
        "deny": []
    },
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {
                        "type": "command",
                        "command": "./scripts/lint-guard.sh"
                    }
                ]
            }
        ],
        "PostToolUse": []
    },
    "env": {
        "FOO": "bar"
    }
}
"#;

    #[test]
    fn claude_settings_keep_every_key_in_order_and_gain_ours() {
        let merged = install(Kind::ClaudeSettings, Some(USER_SETTINGS), &launch()).unwrap();
        let value: Value = serde_json::from_str(&merged).unwrap();
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["model", "permissions", "hooks", "env"]);
        assert_eq!(
            value["permissions"]["allow"],
            json!(["Bash(npm test:*)", "mcp__orchestrate"])
        );
        let pre = &value["hooks"]["PreToolUse"];
        assert_eq!(pre[0]["hooks"][0]["command"], "./scripts/lint-guard.sh");
        assert_eq!(
            pre[1]["hooks"][0]["command"],
            "git-orchestrate agent-hook claude pre-tool-use"
        );
        assert_eq!(value["hooks"]["PostToolUse"], json!([]));
        assert_eq!(
            value["hooks"]["Stop"][0]["hooks"][0]["command"],
            "git-orchestrate agent-hook claude stop"
        );
        // Four spaces, as the user wrote it.
        assert!(merged.contains("\n    \"model\": \"opus\""), "{merged}");
        // Idempotent: the same text again.
        assert_eq!(
            install(Kind::ClaudeSettings, Some(&merged), &launch()).unwrap(),
            merged
        );
        // Taking ours out gives the user's file back, byte for byte (same layout).
        assert_eq!(
            uninstall(Kind::ClaudeSettings, &merged).unwrap().as_deref(),
            Some(USER_SETTINGS)
        );
    }

    #[test]
    fn a_file_of_ours_alone_goes_away_entirely() {
        let created = install(Kind::ClaudeMcp, None, &launch()).unwrap();
        assert_eq!(
            created,
            "{\n  \"mcpServers\": {\n    \"orchestrate\": {\n      \"type\": \"stdio\",\n      \"command\": \"git-orchestrate\",\n      \"args\": [\n        \"mcp\"\n      ]\n    }\n  }\n}\n"
        );
        assert_eq!(uninstall(Kind::ClaudeMcp, &created).unwrap(), None);
    }

    #[test]
    fn setting_up_again_for_another_workflow_switches_the_hooks_over() {
        let w2 = Launch {
            program: "git-orchestrate".into(),
            workflow: Some("w2".into()),
        };
        for kind in [Kind::ClaudeSettings, Kind::GeminiSettings, Kind::CodexHooks] {
            let first = install(kind, Some("{\"model\": \"x\"}\n"), &launch()).unwrap();
            let again = install(kind, Some(&first), &w2).unwrap();
            assert_eq!(
                again.matches(" agent-hook ").count(),
                first.matches(" agent-hook ").count(),
                "{kind:?}: no second set\n{again}"
            );
            assert_eq!(
                again.matches("--workflow w2 agent-hook").count(),
                first.matches(" agent-hook ").count(),
                "{kind:?}: every hook names w2\n{again}"
            );
            assert_eq!(install(kind, Some(&again), &w2).unwrap(), again);
        }
    }

    #[test]
    fn a_workflow_other_than_the_default_is_named_in_every_command() {
        let launch = Launch {
            program: "git-orchestrate".into(),
            workflow: Some("w2".into()),
        };
        let gemini: Value =
            serde_json::from_str(&install(Kind::GeminiSettings, None, &launch).unwrap()).unwrap();
        assert_eq!(
            gemini["hooks"]["BeforeTool"][0]["hooks"][0]["command"],
            "git-orchestrate --workflow w2 agent-hook gemini pre-tool-use"
        );
        assert_eq!(
            gemini["hooks"]["AfterAgent"][0]["hooks"][0]["timeout"],
            30_000
        );
        assert_eq!(
            gemini["mcpServers"]["orchestrate"]["args"],
            json!(["--workflow", "w2", "mcp"])
        );
    }

    #[test]
    fn someone_elses_server_of_that_name_is_not_taken_over() {
        let theirs = r#"{"mcpServers": {"orchestrate": {"command": "node", "args": ["x.js"]}}}"#;
        assert!(install(Kind::ClaudeMcp, Some(theirs), &launch()).is_err());
        assert!(install(Kind::ClaudeSettings, Some("[1]"), &launch()).is_err());
        assert!(install(Kind::ClaudeSettings, Some("{"), &launch()).is_err());
    }

    #[test]
    fn what_init_writes_has_no_gaps_and_each_missing_entry_is_named() {
        for kind in [
            Kind::ClaudeSettings,
            Kind::ClaudeMcp,
            Kind::CodexConfig,
            Kind::CodexHooks,
            Kind::GeminiSettings,
        ] {
            assert_eq!(gaps(kind, None), [Gap::Missing], "{kind:?}");
            let written = install(kind, Some(""), &launch()).unwrap();
            assert_eq!(gaps(kind, Some(&written)), [], "{kind:?}\n{written}");
            let w2 = Launch {
                program: "git-orchestrate".into(),
                workflow: Some("w2".into()),
            };
            let written = install(kind, None, &w2).unwrap();
            assert_eq!(gaps(kind, Some(&written)), [], "{kind:?}\n{written}");
        }
        assert_eq!(
            gaps(
                Kind::ClaudeSettings,
                Some(
                    r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "git-orchestrate agent-hook claude stop"}]}]}}"#
                )
            ),
            [Gap::Hook("SessionStart"), Gap::Hook("PreToolUse")]
        );
        assert_eq!(
            gaps(
                Kind::ClaudeMcp,
                Some(r#"{"mcpServers": {"other": {"command": "x"}}}"#)
            ),
            [Gap::Server]
        );
        assert_eq!(
            gaps(Kind::GeminiSettings, Some("{")).len(),
            1,
            "unreadable, once"
        );
        // Codex: the table written before env_vars existed lacks them all.
        let old = "[mcp_servers.orchestrate]\ncommand = \"git-orchestrate\"\nargs = [\"mcp\"]\n";
        assert_eq!(
            gaps(Kind::CodexConfig, Some(old)),
            [Gap::EnvVars(SERVER_ENV.to_vec())]
        );
        assert_eq!(
            Gap::EnvVars(vec!["GIT_ORCHESTRATE_ROLE"]).to_string(),
            "does not pass GIT_ORCHESTRATE_ROLE to the MCP server (env_vars under [mcp_servers.orchestrate])"
        );
        assert_eq!(
            gaps(Kind::CodexConfig, Some("model = \"m\"\n")),
            [Gap::Server]
        );
    }

    #[test]
    fn codex_config_gets_a_block_appended_and_loses_exactly_it() {
        let user = "model = \"o3\"\n# my servers\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n";
        let merged = install(Kind::CodexConfig, Some(user), &launch()).unwrap();
        assert!(merged.starts_with(user));
        let parsed: toml::Table = toml::from_str(&merged).unwrap();
        assert_eq!(
            parsed["mcp_servers"]["orchestrate"]["command"].as_str(),
            Some("git-orchestrate")
        );
        assert_eq!(
            parsed["mcp_servers"]["orchestrate"]["tool_timeout_sec"].as_integer(),
            Some(600)
        );
        assert_eq!(
            parsed["mcp_servers"]["orchestrate"]["env_vars"],
            toml::Value::Array(
                [
                    "GIT_ORCHESTRATE_ROLE",
                    "GIT_ORCHESTRATE_WORKFLOW",
                    "GIT_ORCHESTRATE_RUN_PROOF"
                ]
                .map(|v| toml::Value::String(v.into()))
                .to_vec()
            )
        );
        assert_eq!(
            install(Kind::CodexConfig, Some(&merged), &launch()).unwrap(),
            merged
        );
        assert_eq!(
            uninstall(Kind::CodexConfig, &merged).unwrap().as_deref(),
            Some(user)
        );
        let fresh = install(Kind::CodexConfig, None, &launch()).unwrap();
        assert_eq!(uninstall(Kind::CodexConfig, &fresh).unwrap(), None);
        // Inline tables cannot take another table: refused, not broken.
        assert!(
            install(
                Kind::CodexConfig,
                Some("mcp_servers = { a = { command = \"x\" } }\n"),
                &launch()
            )
            .is_err()
        );
        assert!(
            install(
                Kind::CodexConfig,
                Some("[mcp_servers.orchestrate]\ncommand = \"other\"\n"),
                &launch()
            )
            .is_err()
        );
    }
}
