//! What a known agent CLI says a turn used, read off its own headless output: Claude Code's
//! `result` object (`usage`, `total_cost_usd`), Codex's `turn.completed` events (`usage`) and
//! Gemini CLI's `stats` (per-model `tokens`); and, for an agent run by hand, off the session
//! file each client names to its Stop hook. Pure; a figure the output does not hold is
//! absent, never 0 (docs/board.md, "The ledger").

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::hook::Client;

/// The tokens (and, where the client prices them, the cost) of one turn.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Every input token the model read, those read from a cache included.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Of `input_tokens`, those read from a cache, when the client says.
    pub cached_input_tokens: Option<u64>,
    /// What the client says the turn cost, in US dollars (only Claude Code prices a turn).
    pub cost_usd: Option<f64>,
}

/// The usage `client` reported on `stdout`, or `None` when its output holds none.
pub fn read_usage(client: Client, stdout: &str) -> Option<Usage> {
    match client {
        Client::Claude => claude(stdout),
        Client::Codex => codex(stdout),
        Client::Gemini => gemini(stdout),
    }
}

/// A count: a non-negative integer, nothing else.
fn count(value: &Value) -> Option<u64> {
    value.as_u64()
}

/// Claude Code `-p --output-format json`: one `result` object whose `usage` counts the input
/// apart from the cache (`input_tokens`, `cache_creation_input_tokens`,
/// `cache_read_input_tokens`), with `total_cost_usd` beside it. (`stream-json` ends with the
/// same object, on its last line.)
fn claude(stdout: &str) -> Option<Usage> {
    let result = json_objects(stdout)
        .into_iter()
        .rev()
        .find(|v| v["type"] == "result")?;
    let usage = &result["usage"];
    let fresh = count(&usage["input_tokens"])?;
    let output = count(&usage["output_tokens"])?;
    let written = count(&usage["cache_creation_input_tokens"]);
    let read = count(&usage["cache_read_input_tokens"]);
    let input = fresh
        .checked_add(written.unwrap_or(0))?
        .checked_add(read.unwrap_or(0))?;
    if input == 0 {
        // Claude Code writes zeros where the provider reported no usage (observed with 2.1.330,
        // tests/cli/agents.rs); no real request reads no input at all.
        return None;
    }
    let cost = result["total_cost_usd"]
        .as_f64()
        .filter(|c| c.is_finite() && *c >= 0.0);
    Some(Usage {
        input_tokens: input,
        output_tokens: output,
        cached_input_tokens: read,
        cost_usd: cost,
    })
}

/// Codex `exec --json`: a `turn.completed` event per model turn, each with its `usage`
/// (`input_tokens`, which counts the cached ones too, `cached_input_tokens`,
/// `output_tokens`); summed.
fn codex(stdout: &str) -> Option<Usage> {
    let mut total: Option<Usage> = None;
    for event in stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        if event["type"] != "turn.completed" {
            continue;
        }
        let usage = &event["usage"];
        let (Some(input), Some(output)) = (
            count(&usage["input_tokens"]),
            count(&usage["output_tokens"]),
        ) else {
            continue;
        };
        if input == 0 {
            // Codex 0.169 prints zeros where the provider reported no usage
            // (tests/cli/agents.rs); no real request reads no input.
            continue;
        }
        let cached = count(&usage["cached_input_tokens"]);
        total = Some(match total {
            None => Usage {
                input_tokens: input,
                output_tokens: output,
                cached_input_tokens: cached,
                cost_usd: None,
            },
            Some(t) => Usage {
                input_tokens: t.input_tokens.checked_add(input)?,
                output_tokens: t.output_tokens.checked_add(output)?,
                cached_input_tokens: match (t.cached_input_tokens, cached) {
                    (Some(a), Some(b)) => Some(a.checked_add(b)?),
                    _ => None,
                },
                cost_usd: None,
            },
        });
    }
    total
}

/// Gemini CLI `--output-format json`: `stats.models.<model>.tokens` with `prompt` (the whole
/// input, cached included), `cached`, `candidates` and `thoughts` (both generated); summed
/// over the models (its router's call is one).
fn gemini(stdout: &str) -> Option<Usage> {
    let value = json_objects(stdout)
        .into_iter()
        .rev()
        .find(|v| v["stats"]["models"].is_object())?;
    let models = value["stats"]["models"].as_object()?;
    let mut total: Option<Usage> = None;
    for model in models.values() {
        let tokens = &model["tokens"];
        let (Some(prompt), Some(candidates)) =
            (count(&tokens["prompt"]), count(&tokens["candidates"]))
        else {
            return None;
        };
        if prompt == 0 {
            // Zeros where the provider reported none (Gemini CLI 0.61): that model reported
            // nothing.
            continue;
        }
        let output = candidates.checked_add(count(&tokens["thoughts"]).unwrap_or(0))?;
        let cached = count(&tokens["cached"]);
        let (input, out, cache) = match total {
            None => (prompt, output, cached),
            Some(t) => (
                t.input_tokens.checked_add(prompt)?,
                t.output_tokens.checked_add(output)?,
                match (t.cached_input_tokens, cached) {
                    (Some(a), Some(b)) => Some(a.checked_add(b)?),
                    _ => None,
                },
            ),
        };
        total = Some(Usage {
            input_tokens: input,
            output_tokens: out,
            cached_input_tokens: cache,
            cost_usd: None,
        });
    }
    total
}

/// The JSON objects of `text`: the whole of it when it is one (Gemini CLI prints its object
/// over many lines), else each line that is one (a CLI may print warnings around them).
fn json_objects(text: &str) -> Vec<Value> {
    if let Ok(value @ Value::Object(_)) = serde_json::from_str::<Value>(text.trim()) {
        return vec![value];
    }
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(Value::is_object)
        .collect()
}

/// What the new lines of a Claude Code transcript (its JSONL, whose assistant entries carry
/// `message.usage`) say the model used since the last read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TranscriptUsage {
    /// The assistant messages counted (each once, though Claude Code writes one entry per
    /// content block, each with the message's usage).
    pub messages: u32,
    /// Their usage, summed; `None` when none of them carried one.
    pub usage: Option<Usage>,
    /// The last message id counted, to count it once across reads.
    pub last_message: Option<String>,
    /// The text of the newest assistant message read (its text blocks, in order), to tell
    /// whether the message a Stop hook names has been written yet.
    pub last_text: Option<String>,
}

/// Reads `lines` of a Claude Code transcript, counting each assistant message once (by
/// `message.id`; `seen` is the last one an earlier read counted). A line that is not such an
/// entry, or whose usage is not whole counts, is skipped: never guessed. The cost is not in
/// the transcript: it stays absent.
pub fn claude_transcript<'a>(
    lines: impl IntoIterator<Item = &'a [u8]>,
    seen: Option<&str>,
) -> TranscriptUsage {
    let mut out = TranscriptUsage {
        last_message: seen.map(str::to_string),
        ..TranscriptUsage::default()
    };
    for line in lines {
        let Ok(entry) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if entry["type"] != "assistant" {
            continue;
        }
        let message = &entry["message"];
        let Some(id) = message["id"].as_str() else {
            continue;
        };
        let text = message["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|block| block["text"].as_str());
        if out.last_message.as_deref() == Some(id) {
            // Another entry of the message counted last: only its text is new.
            if let Some(last) = out.last_text.as_mut() {
                last.extend(text);
            }
            continue;
        }
        out.last_message = Some(id.to_string());
        out.last_text = Some(text.collect());
        out.messages = out.messages.saturating_add(1);
        let usage = &message["usage"];
        let (Some(fresh), Some(output)) = (
            count(&usage["input_tokens"]),
            count(&usage["output_tokens"]),
        ) else {
            continue;
        };
        let read = count(&usage["cache_read_input_tokens"]);
        let Some(input) = fresh
            .checked_add(count(&usage["cache_creation_input_tokens"]).unwrap_or(0))
            .and_then(|n| n.checked_add(read.unwrap_or(0)))
        else {
            continue;
        };
        if input == 0 {
            // Zeros where the provider reported none, as in `claude` above: not reported.
            continue;
        }
        let sum = out.usage.get_or_insert(Usage {
            input_tokens: 0,
            output_tokens: 0,
            cached_input_tokens: None,
            cost_usd: None,
        });
        sum.input_tokens = sum.input_tokens.saturating_add(input);
        sum.output_tokens = sum.output_tokens.saturating_add(output);
        if let Some(read) = read {
            sum.cached_input_tokens =
                Some(sum.cached_input_tokens.unwrap_or(0).saturating_add(read));
        }
    }
    out
}

/// What the new lines of `client`'s session file (the `transcript_path` its Stop hook gets)
/// say the model used since the last read; `seen` is the last message an earlier read counted.
pub fn transcript<'a>(
    client: Client,
    lines: impl IntoIterator<Item = &'a [u8]>,
    seen: Option<&str>,
) -> TranscriptUsage {
    match client {
        Client::Claude => claude_transcript(lines, seen),
        Client::Codex => codex_transcript(lines),
        Client::Gemini => gemini_transcript(lines, seen),
    }
}

/// Adds `usage` to the sum in `out`.
fn add(out: &mut TranscriptUsage, usage: Usage) {
    let sum = out.usage.get_or_insert(Usage {
        input_tokens: 0,
        output_tokens: 0,
        cached_input_tokens: None,
        cost_usd: None,
    });
    sum.input_tokens = sum.input_tokens.saturating_add(usage.input_tokens);
    sum.output_tokens = sum.output_tokens.saturating_add(usage.output_tokens);
    if let Some(cached) = usage.cached_input_tokens {
        sum.cached_input_tokens = Some(sum.cached_input_tokens.unwrap_or(0).saturating_add(cached));
    }
}

/// Codex 0.169's session rollout (JSONL under `$CODEX_HOME/sessions/`): one `token_count`
/// event per model response, after the response's items, whose `info.last_token_usage` counts
/// that response (`input_tokens` with the cached ones, as in `exec --json`), or whose `info`
/// is null when the provider reported none. Each event is a message; the text of the last
/// assistant `message` item before it is the message's text. Each line is read once (the
/// caller keeps the offset), so nothing is counted twice.
fn codex_transcript<'a>(lines: impl IntoIterator<Item = &'a [u8]>) -> TranscriptUsage {
    let mut out = TranscriptUsage::default();
    let mut pending: Option<String> = None;
    for line in lines {
        let Ok(entry) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let payload = &entry["payload"];
        if entry["type"] == "response_item"
            && payload["type"] == "message"
            && payload["role"] == "assistant"
        {
            pending = Some(
                payload["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|part| part["text"].as_str())
                    .collect(),
            );
            continue;
        }
        if entry["type"] != "event_msg" || payload["type"] != "token_count" {
            continue;
        }
        out.messages = out.messages.saturating_add(1);
        out.last_text = pending.take();
        let last = &payload["info"]["last_token_usage"];
        let (Some(input), Some(output)) =
            (count(&last["input_tokens"]), count(&last["output_tokens"]))
        else {
            continue;
        };
        if input == 0 {
            // No real request reads no input: zeros are no report.
            continue;
        }
        add(
            &mut out,
            Usage {
                input_tokens: input,
                output_tokens: output,
                cached_input_tokens: count(&last["cached_input_tokens"]),
                cost_usd: None,
            },
        );
    }
    out
}

/// Gemini CLI 0.61's session file (JSONL under `~/.gemini/tmp/<project>/chats/`): a `gemini`
/// entry per model message, written again (same `id`) as it gains its tool calls, with
/// `tokens` (`input`, the whole prompt; `output` and `thoughts`, both generated; `cached`), or
/// `tokens: null` when the provider reported none. Each message counts once, by `id`. Its
/// router's call is not in the file, so its few tokens are not counted by hand.
fn gemini_transcript<'a>(
    lines: impl IntoIterator<Item = &'a [u8]>,
    seen: Option<&str>,
) -> TranscriptUsage {
    let mut out = TranscriptUsage {
        last_message: seen.map(str::to_string),
        ..TranscriptUsage::default()
    };
    for line in lines {
        let Ok(entry) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if entry["type"] != "gemini" {
            continue;
        }
        let Some(id) = entry["id"].as_str() else {
            continue;
        };
        let text = match &entry["content"] {
            Value::String(text) => text.clone(),
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
            _ => String::new(),
        };
        if out.last_message.as_deref() == Some(id) {
            // The same message written again: its text as it is now.
            out.last_text = Some(text);
            continue;
        }
        out.last_message = Some(id.to_string());
        out.last_text = Some(text);
        out.messages = out.messages.saturating_add(1);
        let tokens = &entry["tokens"];
        let (Some(input), Some(output)) = (count(&tokens["input"]), count(&tokens["output"]))
        else {
            continue;
        };
        let Some(output) = output.checked_add(count(&tokens["thoughts"]).unwrap_or(0)) else {
            continue;
        };
        if input == 0 {
            continue;
        }
        add(
            &mut out,
            Usage {
                input_tokens: input,
                output_tokens: output,
                cached_input_tokens: count(&tokens["cached"]),
                cost_usd: None,
            },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    /// A Claude Code transcript as it is written: a user line, an assistant message split in
    /// two entries (one usage, twice), another message, a line cut short, a hostile one.
    #[test]
    fn a_transcript_counts_each_message_once_and_skips_what_it_cannot_read() {
        let text = concat!(
            r#"{"type":"user","message":{"role":"user","content":"hi"}}"#,
            "\n",
            r#"{"type":"assistant","message":{"id":"msg_1","usage":{"input_tokens":3,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":7}}}"#,
            "\n",
            r#"{"type":"assistant","message":{"id":"msg_1","usage":{"input_tokens":3,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":7}}}"#,
            "\n",
            r#"{"type":"assistant","message":{"id":"msg_2","usage":{"input_tokens":5,"output_tokens":-1}}}"#,
            "\n",
            r#"{"type":"assistant","message":{"id":"msg_3","usage":{"input_tokens":2,"output_tokens":4}}}"#,
            "\n",
            r#"{"type":"assistant","message":{"id":"msg_4","usage":{"input_tok"#,
        );
        let read = claude_transcript(text.split('\n').map(str::as_bytes), None);
        assert_eq!(read.messages, 3);
        assert_eq!(
            read.usage,
            Some(Usage {
                input_tokens: 1105,
                output_tokens: 11,
                cached_input_tokens: Some(1000),
                cost_usd: None
            })
        );
        assert_eq!(read.last_message.as_deref(), Some("msg_3"));
        // The message an earlier read counted last is not counted again.
        let again = claude_transcript(text.split('\n').skip(2).map(str::as_bytes), Some("msg_1"));
        assert_eq!(again.messages, 2);
        // Nothing readable: nothing reported.
        let none = claude_transcript([b"\x00garbage".as_slice(), b"{}"], None);
        assert_eq!((none.messages, none.usage), (0, None));
    }

    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    /// Claude Code 2.1.330's `claude -p … --output-format json` against tests/agents/fake_llm.py
    /// (which reports 10 input and 5 output tokens), as printed.
    const CLAUDE: &str = r#"{"duration_api_ms":231,"stop_reason":"end_turn","session_id":"b8e929d2-9cde-42f1-b3ab-90b42e7e564a","total_cost_usd":0.00014000000000000001,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5,"output_tokens_details":{"thinking_tokens":0},"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":"","iterations":[],"speed":"standard","fallback_credit":null},"modelUsage":{"claude-opus-5-5":{"inputTokens":10,"outputTokens":5,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.00014000000000000001,"contextWindow":1000000,"maxOutputTokens":128000,"thinkingTokens":0,"cacheCreationEphemeral5mInputTokens":0,"cacheCreationEphemeral1hInputTokens":0,"canonicalModel":"claude-opus-5-5","provider":"firstParty","costBasis":"list"}},"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","fast_mode_disabled_reason":"sdk_opt_in_required","safety_stops":0,"is_error":false,"num_turns":1,"subtype":"success","api_error_status":null,"result":"Hello.","ttft_ms":793,"type":"result","duration_ms":887,"uuid":"ec6b23f5-e257-44f2-8a1a-a3647aadcff7","queued_turn_count":0,"result_index":0}
"#;

    /// Codex 0.169.0's `codex exec --json` against the same fake model.
    const CODEX: &str = r#"{"type":"thread.started","thread_id":"01a2250f-6a42-7a40-8694-ea73734be6ad"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `fake-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Hello."}}
{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":5,"reasoning_output_tokens":0}}
"#;

    /// Gemini CLI 0.61.0's `gemini -p … --output-format json` against the same fake model
    /// (its router's call reports 1 and 1), `roles`, `tools` and `files` cut short.
    const GEMINI: &str = r#"{
  "session_id": "51ef48ea-f5cd-41f4-9d3d-00d4c555f2ff",
  "response": "Hello.",
  "stats": {
    "models": {
      "gemini-3.5-flash-lite": {
        "api": {"totalRequests": 1, "totalErrors": 0, "totalLatencyMs": 32, "errorsByType": {}},
        "tokens": {"input": 1, "prompt": 1, "candidates": 1, "total": 2, "cached": 0, "thoughts": 0, "tool": 0}
      },
      "gemini-3.1-pro-preview": {
        "api": {"totalRequests": 1, "totalErrors": 0, "totalLatencyMs": 95, "errorsByType": {}},
        "tokens": {"input": 10, "prompt": 10, "candidates": 5, "total": 15, "cached": 0, "thoughts": 0, "tool": 0}
      }
    },
    "tools": {"totalCalls": 0, "totalSuccess": 0, "totalFail": 0, "byName": {}},
    "files": {"totalLinesAdded": 0, "totalLinesRemoved": 0}
  }
}"#;

    #[test]
    fn each_clients_real_output_gives_its_figures() {
        assert_eq!(
            read_usage(Client::Claude, CLAUDE),
            Some(Usage {
                input_tokens: 10,
                output_tokens: 5,
                cached_input_tokens: Some(0),
                cost_usd: Some(0.00014),
            })
        );
        assert_eq!(
            read_usage(Client::Codex, CODEX),
            Some(Usage {
                input_tokens: 10,
                output_tokens: 5,
                cached_input_tokens: Some(0),
                cost_usd: None,
            })
        );
        assert_eq!(
            read_usage(Client::Gemini, GEMINI),
            Some(Usage {
                input_tokens: 11,
                output_tokens: 6,
                cached_input_tokens: Some(0),
                cost_usd: None,
            })
        );
    }

    #[test]
    fn claudes_cache_counts_as_input_and_a_warning_line_is_skipped() {
        let out = "warning: old node\n{\"type\":\"result\",\"usage\":{\"input_tokens\":3,\
                   \"cache_creation_input_tokens\":100,\"cache_read_input_tokens\":2000,\
                   \"output_tokens\":40},\"total_cost_usd\":0.5}\n";
        assert_eq!(
            read_usage(Client::Claude, out),
            Some(Usage {
                input_tokens: 2103,
                output_tokens: 40,
                cached_input_tokens: Some(2000),
                cost_usd: Some(0.5),
            })
        );
    }

    #[test]
    fn codex_turns_are_summed() {
        let turn = |i: u64, o: u64| {
            format!(
                "{{\"type\":\"turn.completed\",\"usage\":{{\"input_tokens\":{i},\"cached_input_tokens\":1,\"output_tokens\":{o}}}}}\n"
            )
        };
        let out = format!("{}{}", turn(10, 5), turn(20, 7));
        assert_eq!(
            read_usage(Client::Codex, &out),
            Some(Usage {
                input_tokens: 30,
                output_tokens: 12,
                cached_input_tokens: Some(2),
                cost_usd: None,
            })
        );
    }

    /// What is not there is absent: an output without figures, a figure that is not a count.
    #[test]
    fn no_figures_no_usage() {
        for (client, out) in [
            (Client::Claude, ""),
            (Client::Claude, "{\"type\":\"result\",\"result\":\"hi\"}"),
            (
                Client::Claude,
                "{\"type\":\"result\",\"usage\":{\"input_tokens\":-1,\"output_tokens\":5}}",
            ),
            (
                Client::Claude,
                "{\"type\":\"result\",\"usage\":{\"input_tokens\":\"10\",\"output_tokens\":5}}",
            ),
            (
                Client::Codex,
                "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n",
            ),
            (
                Client::Codex,
                "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1.5,\"output_tokens\":5}}",
            ),
            (Client::Gemini, "{\"session_id\":\"s\",\"response\":\"hi\"}"),
            (
                Client::Gemini,
                "{\"stats\":{\"models\":{\"m\":{\"tokens\":{\"prompt\":1}}}}}",
            ),
        ] {
            assert_eq!(read_usage(client, out), None, "{out}");
        }
        // A price that is no price is left out; the tokens stay.
        let out = "{\"type\":\"result\",\"usage\":{\"input_tokens\":1,\"output_tokens\":2},\"total_cost_usd\":-3}";
        assert_eq!(
            read_usage(Client::Claude, out).and_then(|u| u.cost_usd),
            None
        );
    }

    /// Claude Code 2.1.330 against a provider that reports no usage writes zeros, in its
    /// result and in its transcript: no report, never 0. The transcript's text is kept whole.
    #[test]
    fn claudes_zeros_are_no_report() {
        let result = "{\"type\":\"result\",\"usage\":{\"input_tokens\":0,\
                      \"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\
                      \"output_tokens\":0},\"total_cost_usd\":0}";
        assert_eq!(read_usage(Client::Claude, result), None);
        let zeros = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Nothing "}],"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}}"#;
        let rest = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"is left."}],"usage":{"input_tokens":0,"output_tokens":0}}}"#;
        let read = claude_transcript([zeros.as_bytes(), rest.as_bytes()], None);
        assert_eq!(
            read,
            TranscriptUsage {
                messages: 1,
                usage: None,
                last_message: Some("m1".into()),
                last_text: Some("Nothing is left.".into()),
            }
        );
    }

    /// Codex 0.169.0's rollout lines against tests/agents/fake_llm.py (cut to what is read):
    /// a response of a tool call, one of a message, then one whose provider reported nothing.
    #[test]
    fn a_codex_rollout_counts_each_response_and_names_its_last_words() {
        let lines = [
            r#"{"timestamp":"t","ordinal":10,"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"call_00_00"}}"#,
            r#"{"timestamp":"t","ordinal":11,"type":"token_usage_record","payload":{"response_id":"resp_00","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5}}}"#,
            r#"{"timestamp":"t","ordinal":13,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5,"total_tokens":15},"last_token_usage":{"input_tokens":10,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":5,"reasoning_output_tokens":0,"total_tokens":15}},"rate_limits":{}}}"#,
            r#"{"timestamp":"t","ordinal":15,"type":"response_item","payload":{"type":"message","status":"completed","id":"msg_01_00","role":"assistant","content":[{"type":"output_text","text":"Done.","annotations":[]}]}}"#,
            r#"{"timestamp":"t","ordinal":17,"type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":20,"cached_input_tokens":8,"output_tokens":7}},"rate_limits":{}}}"#,
            r#"{"timestamp":"t","ordinal":18,"type":"response_item","payload":{"type":"message","status":"completed","id":"msg_02_00","role":"assistant","content":[{"type":"output_text","text":"Stopping.","annotations":[]}]}}"#,
            r#"{"timestamp":"t","ordinal":19,"type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{}}}"#,
            r#"{"timestamp":"t","ordinal":20,"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Not counted yet."}]}}"#,
        ];
        let read = transcript(Client::Codex, lines.iter().map(|l| l.as_bytes()), None);
        assert_eq!(
            read,
            TranscriptUsage {
                messages: 3,
                usage: Some(Usage {
                    input_tokens: 30,
                    output_tokens: 12,
                    cached_input_tokens: Some(8),
                    cost_usd: None
                }),
                last_message: None,
                last_text: Some("Stopping.".into()),
            }
        );
        // Only responses without usage: counted, not reported.
        let none = transcript(
            Client::Codex,
            lines[5..7].iter().map(|l| l.as_bytes()),
            None,
        );
        assert_eq!((none.messages, none.usage), (1, None));
    }

    /// Gemini CLI 0.61.0's chat lines against the fake model (cut to what is read): a message
    /// written twice as it gains its tool call, another, one with `tokens: null`.
    #[test]
    fn a_gemini_chat_counts_each_message_once() {
        let lines = [
            r#"{"sessionId":"s","projectHash":"h","startTime":"t","kind":"main"}"#,
            r#"{"id":"u1","timestamp":"t","type":"user","content":[{"text":"go"}]}"#,
            r#"{"id":"m1","timestamp":"t","type":"gemini","content":"","thoughts":[],"tokens":{"input":10,"output":5,"cached":0,"thoughts":0,"tool":0,"total":15},"model":"m"}"#,
            r#"{"$set":{"lastUpdated":"t"}}"#,
            r#"{"id":"m1","timestamp":"t","type":"gemini","content":"","thoughts":[],"tokens":{"input":10,"output":5,"cached":0,"thoughts":0,"tool":0,"total":15},"model":"m","toolCalls":[]}"#,
            r#"{"id":"m2","timestamp":"t","type":"gemini","content":"Done.","thoughts":[],"tokens":{"input":12,"output":3,"cached":4,"thoughts":2,"tool":0,"total":17},"model":"m"}"#,
            r#"{"id":"m3","timestamp":"t","type":"gemini","content":"Stopping.","thoughts":[],"tokens":null,"model":"m"}"#,
        ];
        let read = transcript(Client::Gemini, lines.iter().map(|l| l.as_bytes()), None);
        assert_eq!(
            read,
            TranscriptUsage {
                messages: 3,
                usage: Some(Usage {
                    input_tokens: 22,
                    output_tokens: 10,
                    cached_input_tokens: Some(4),
                    cost_usd: None
                }),
                last_message: Some("m3".into()),
                last_text: Some("Stopping.".into()),
            }
        );
        // The message an earlier read counted last is not counted again.
        let again = transcript(
            Client::Gemini,
            lines[4..].iter().map(|l| l.as_bytes()),
            Some("m1"),
        );
        assert_eq!(again.messages, 2);
    }

    /// Codex and Gemini CLI under `run` print zeros where the provider reported no usage (seen
    /// with 0.169.0 and 0.61.0): no report; Gemini's router, which reported, still counts.
    #[test]
    fn codex_and_gemini_zeros_are_no_report() {
        let codex = "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":0,\"cached_input_tokens\":0,\
                     \"cache_write_input_tokens\":0,\"output_tokens\":0,\"reasoning_output_tokens\":0}}\n";
        assert_eq!(read_usage(Client::Codex, codex), None);
        let gemini = r#"{"stats":{"models":{
            "gemini-3.5-flash-lite":{"tokens":{"input":1,"prompt":1,"candidates":1,"total":2,"cached":0,"thoughts":0,"tool":0}},
            "gemini-3.1-pro-preview":{"tokens":{"input":0,"prompt":0,"candidates":0,"total":0,"cached":0,"thoughts":0,"tool":0}}}}}"#;
        assert_eq!(
            read_usage(Client::Gemini, gemini),
            Some(Usage {
                input_tokens: 1,
                output_tokens: 1,
                cached_input_tokens: Some(0),
                cost_usd: None
            })
        );
        let only_zeros = r#"{"stats":{"models":{"m":{"tokens":{"prompt":0,"candidates":0}}}}}"#;
        assert_eq!(read_usage(Client::Gemini, only_zeros), None);
    }

    #[test]
    fn counts_that_overflow_are_no_usage() {
        let max = u64::MAX;
        let out = format!(
            "{{\"type\":\"result\",\"usage\":{{\"input_tokens\":{max},\"cache_read_input_tokens\":1,\"output_tokens\":1}}}}"
        );
        assert_eq!(read_usage(Client::Claude, &out), None);
    }

    proptest! {
        /// Whatever a client prints, reading it never panics, and only a client's own shape
        /// gives figures.
        #[test]
        fn garbage_never_panics(text in ".{0,400}") {
            for client in [Client::Claude, Client::Codex, Client::Gemini] {
                let _ = read_usage(client, &text);
            }
        }

        #[test]
        fn json_garbage_gives_no_usage_without_the_shape(
            key in "[a-z_]{1,12}",
            n in any::<i64>(),
            s in ".{0,20}",
        ) {
            let text = serde_json::json!({ key.clone(): n, "type": s, "usage": { key: n } }).to_string();
            let shaped = serde_json::from_str::<Value>(&text).ok()
                .is_some_and(|v| v["usage"]["input_tokens"].is_u64() && v["usage"]["output_tokens"].is_u64());
            for client in [Client::Claude, Client::Codex, Client::Gemini] {
                let got = read_usage(client, &text);
                prop_assert!(got.is_none() || shaped, "{client:?}: {text}");
            }
        }

        /// Figures a client printed are read back exactly.
        #[test]
        fn claudes_figures_are_read_back(i in 1u64..1u64 << 40, o in 0u64..1u64 << 40, r in 0u64..1u64 << 40) {
            let text = format!(
                "{{\"type\":\"result\",\"usage\":{{\"input_tokens\":{i},\"cache_read_input_tokens\":{r},\"output_tokens\":{o}}}}}"
            );
            prop_assert_eq!(read_usage(Client::Claude, &text), Some(Usage {
                input_tokens: i + r,
                output_tokens: o,
                cached_input_tokens: Some(r),
                cost_usd: None,
            }));
        }
    }
}
