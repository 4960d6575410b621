//! The MCP server's stdio, between the client and the SDK: each line the client sends is
//! looked at first, and what the SDK would leave unanswered is answered here. A line that
//! is not JSON gets JSON-RPC's parse error (`-32700`, id null; the SDK drops it in silence);
//! a method name too long to be any method's is answered "method not found" with its first
//! characters, not echoed whole; a line over the cap is refused, not buffered. One task
//! writes stdout, so an answer from here never lands inside one of the SDK's.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, DuplexStream};
use tokio::sync::mpsc;

/// The longest line taken: a plan, a report or a summary is capped at 8 MiB; JSON quoting
/// may double that.
const MAX_LINE: usize = 16 * 1024 * 1024;
/// Longer than any method name: such a "method" is not echoed whole.
const MAX_METHOD: usize = 256;
/// How much of a too-long method name an answer quotes.
const QUOTED: usize = 64;

/// The tasks that carry the lines; [`Wire::finish`] once the SDK's session has ended.
pub struct Wire {
    reader: tokio::task::JoinHandle<()>,
    relay: tokio::task::JoinHandle<()>,
    writer: tokio::task::JoinHandle<()>,
}

impl Wire {
    /// Writes what the SDK said last, then stops reading the client.
    pub async fn finish(self) {
        let _ = self.relay.await;
        self.reader.abort();
        let _ = self.reader.await;
        let _ = self.writer.await;
    }
}

/// The SDK's end of the pipes: it reads the client's lines from `.0` and writes its own to
/// `.1`.
pub fn pipes() -> (
    (
        tokio::io::ReadHalf<DuplexStream>,
        tokio::io::WriteHalf<DuplexStream>,
    ),
    Wire,
) {
    let (sdk_in, to_sdk) = tokio::io::duplex(64 * 1024);
    let (from_sdk, sdk_out) = tokio::io::duplex(64 * 1024);
    let (sdk_in_read, _) = tokio::io::split(sdk_in);
    let (_, sdk_out_write) = tokio::io::split(sdk_out);
    let (lines, mut outbox) = mpsc::unbounded_channel::<Vec<u8>>();
    let answers = lines.clone();
    let reader = tokio::spawn(read_client(to_sdk, answers));
    let relay = tokio::spawn(relay_sdk(from_sdk, lines));
    let writer = tokio::spawn(async move {
        let mut stdout = super::mcp_pipe::output();
        while let Some(line) = outbox.recv().await {
            if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    (
        (sdk_in_read, sdk_out_write),
        Wire {
            reader,
            relay,
            writer,
        },
    )
}

/// The SDK's lines, whole, to the one writer.
async fn relay_sdk(from_sdk: DuplexStream, lines: mpsc::UnboundedSender<Vec<u8>>) {
    let mut reader = tokio::io::BufReader::new(from_sdk);
    loop {
        let mut line = Vec::new();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                if lines.send(line).is_err() {
                    break;
                }
            }
        }
    }
}

/// The client's lines: passed on to the SDK, or answered here.
async fn read_client(mut to_sdk: DuplexStream, answers: mpsc::UnboundedSender<Vec<u8>>) {
    let mut stdin = tokio::io::BufReader::new(super::mcp_pipe::input());
    let mut line: Vec<u8> = Vec::new();
    let mut oversized = false;
    while let Ok(chunk) = stdin.fill_buf().await {
        if chunk.is_empty() {
            if !line.is_empty() && !oversized {
                let last = std::mem::take(&mut line);
                if !pass_on(&last, &mut to_sdk, &answers).await {
                    break;
                }
            }
            break;
        }
        let (taken, ended) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if !oversized {
            line.extend_from_slice(&chunk[..taken]);
            if line.len() > MAX_LINE {
                oversized = true;
                line = Vec::new();
            }
        }
        stdin.consume(taken);
        if ended {
            let whole = std::mem::take(&mut line);
            let passed = if oversized {
                answer(
                    &answers,
                    &error(
                        Value::Null,
                        -32700,
                        format!(
                            "Parse error: a line over {} MiB is not read",
                            MAX_LINE >> 20
                        ),
                    ),
                )
            } else {
                pass_on(&whole, &mut to_sdk, &answers).await
            };
            oversized = false;
            if !passed {
                break;
            }
        }
    }
    // The client is gone: so is the SDK's input, which ends the session.
    let _ = to_sdk.shutdown().await;
}

/// One client line: to the SDK, or answered. False when nothing can be sent any more.
async fn pass_on(
    line: &[u8],
    to_sdk: &mut DuplexStream,
    answers: &mpsc::UnboundedSender<Vec<u8>>,
) -> bool {
    match judge(line) {
        Judged::Blank => true,
        Judged::Pass => {
            let mut whole = line.to_vec();
            if !whole.ends_with(b"\n") {
                whole.push(b'\n');
            }
            to_sdk.write_all(&whole).await.is_ok()
        }
        Judged::Answer(reply) => answer(answers, &reply),
        Judged::Drop => true,
    }
}

fn answer(answers: &mpsc::UnboundedSender<Vec<u8>>, reply: &Value) -> bool {
    let mut line = reply.to_string().into_bytes();
    line.push(b'\n');
    answers.send(line).is_ok()
}

fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[derive(Debug, PartialEq)]
enum Judged {
    Blank,
    /// For the SDK.
    Pass,
    /// Answered here.
    Answer(Value),
    /// A notification with a method name no method has: nothing to answer.
    Drop,
}

fn judge(line: &[u8]) -> Judged {
    let text = line.strip_suffix(b"\n").unwrap_or(line);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    // A byte-order mark is taken away, as the SDK does.
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    if text.iter().all(u8::is_ascii_whitespace) {
        return Judged::Blank;
    }
    let value: Value = match serde_json::from_slice(text) {
        Ok(value) => value,
        Err(e) => {
            return Judged::Answer(error(Value::Null, -32700, format!("Parse error: {e}")));
        }
    };
    // JSON that is no JSON-RPC message: the SDK answers it without the id, so a client
    // waiting for that id would wait for ever.
    if value.as_array().is_some_and(Vec::is_empty) {
        return Judged::Answer(error(
            Value::Null,
            -32600,
            "Invalid Request: an empty batch".into(),
        ));
    }
    if let Some(id) = value.get("id").filter(|id| !id.is_null())
        && value
            .get("method")
            .is_some_and(|m| m.as_str().is_none_or(|m| m.len() <= MAX_METHOD))
        && !is_plain_tool_call(&value)
        && serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(value.clone()).is_err()
    {
        return Judged::Answer(error(
            id.clone(),
            -32600,
            "Invalid Request: not a request this server reads (its params do not fit its method)"
                .into(),
        ));
    }
    match value.get("method").and_then(Value::as_str) {
        Some(method) if method.len() > MAX_METHOD => {
            let shown: String = method.chars().take(QUOTED).collect();
            match value.get("id") {
                Some(id) => Judged::Answer(error(
                    id.clone(),
                    -32601,
                    format!("Method not found: {shown}… ({} bytes)", method.len()),
                )),
                None => Judged::Drop,
            }
        }
        _ => Judged::Pass,
    }
}

/// A `tools/call` of the one shape agents send, which the SDK reads whatever its name and
/// arguments: asking the SDK's own reader first (a copy of the message and a trial decode)
/// was a fifth of a warm call's work. Anything else is still put to the SDK's reader.
fn is_plain_tool_call(value: &Value) -> bool {
    let Value::Object(message) = value else {
        return false;
    };
    let only = |fields: &serde_json::Map<String, Value>, allowed: &[&str]| {
        fields.keys().all(|k| allowed.contains(&k.as_str()))
    };
    let Some(Value::Object(params)) = message.get("params") else {
        return false;
    };
    only(message, &["jsonrpc", "id", "method", "params"])
        && message.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && message.get("method").and_then(Value::as_str) == Some("tools/call")
        && message
            .get("id")
            .is_some_and(|id| id.is_string() || id.is_i64())
        && only(params, &["name", "arguments"])
        && params.get("name").is_some_and(Value::is_string)
        && params.get("arguments").is_none_or(Value::is_object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn lines_are_passed_on_or_answered() {
        assert_eq!(judge(b"\r\n"), Judged::Blank);
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
            Judged::Pass
        );
        let Judged::Answer(parse) = judge(b"{not json\n") else {
            panic!("answered")
        };
        assert_eq!(parse["id"], Value::Null);
        assert_eq!(parse["error"]["code"], -32700);
        let long = "m".repeat(10_000);
        let Judged::Answer(missing) = judge(
            json!({"jsonrpc": "2.0", "id": 7, "method": long})
                .to_string()
                .as_bytes(),
        ) else {
            panic!("answered")
        };
        assert_eq!(missing["id"], 7);
        assert_eq!(missing["error"]["code"], -32601);
        assert_eq!(
            missing["error"]["message"],
            format!("Method not found: {}… (10000 bytes)", "m".repeat(64))
        );
        assert_eq!(
            judge(
                json!({"jsonrpc": "2.0", "method": long})
                    .to_string()
                    .as_bytes()
            ),
            Judged::Drop
        );
        let Judged::Answer(invalid) = judge(
            json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": "x"})
                .to_string()
                .as_bytes(),
        ) else {
            panic!("answered")
        };
        assert_eq!(invalid["id"], 9);
        assert_eq!(invalid["error"]["code"], -32600);
        assert!(matches!(judge(b"[]"), Judged::Answer(_)));
    }

    /// The shortcut is only ever taken for a message the SDK's own reader takes.
    #[test]
    fn a_plain_tool_call_is_one_the_sdk_reads() {
        use proptest::prelude::*;
        let json = prop::collection::vec(
            prop_oneof![
                Just(json!(null)),
                any::<bool>().prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                any::<f64>()
                    .prop_filter("finite", |f| f.is_finite())
                    .prop_map(Value::from),
                ".{0,12}".prop_map(Value::from),
                Just(json!([1, "a", {"b": []}])),
                Just(json!({"nested": {"deep": [null]}})),
            ],
            0..4,
        );
        let id = prop_oneof![
            any::<i64>().prop_map(Value::from),
            ".{0,8}".prop_map(Value::from),
        ];
        let message = (
            id,
            ".{0,20}",
            prop::collection::vec(("[a-z_]{0,6}", json), 0..2),
            any::<bool>(),
        )
            .prop_map(|(id, name, args, with_args)| {
                let mut params = json!({ "name": name });
                if with_args {
                    let mut arguments = serde_json::Map::new();
                    for (k, v) in args {
                        arguments.insert(k, Value::Array(v));
                    }
                    params["arguments"] = Value::Object(arguments);
                }
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
            });
        proptest!(ProptestConfig::with_cases(512), |(message in message)| {
            prop_assert!(is_plain_tool_call(&message));
            prop_assert!(
                serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(message.clone()).is_ok(),
                "{message}"
            );
            prop_assert_eq!(judge(message.to_string().as_bytes()), Judged::Pass);
        });
        for other in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 3}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "arguments": []}}),
            json!({"jsonrpc": "2.0", "id": u64::MAX, "method": "tools/call", "params": {"name": "x"}}),
            json!({"jsonrpc": "2.0", "id": 1.5, "method": "tools/call", "params": {"name": "x"}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "extra": 1}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}, "x": 1}),
            json!({"jsonrpc": "1.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"name": "x"}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}),
        ] {
            assert!(!is_plain_tool_call(&other), "{other}");
        }
    }
}
