#!/usr/bin/env python3
"""A scripted fake model on 127.0.0.1 for driving the real agent CLIs offline in tests: the
Anthropic Messages API (Claude Code), the OpenAI Responses API (Codex) and the Gemini API
(Gemini CLI), each streamed as the client expects.

Usage: fake_llm.py SCRIPT.json LOG.jsonl PORTFILE

It is stateless: for each request it counts the model's turns already in the conversation and
answers with that turn of the script, so retries and hook-injected user messages simply move
the script on. A turn is a list of blocks, {"text": "..."} or {"tool_use": {"name": ...,
"input": {...}}}; a turn with a tool_use ends as a tool call. Past the end of the script it
answers "done". Every request is appended to LOG.jsonl as {"path", "body"}.
"""

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOADED = json.load(open(sys.argv[1]))
SCRIPT = LOADED.get("turns", [])
# Several conversations, each chosen by its prompt: [{"match": "...", "turns": [...]}]. The
# newest user message that contains a `match` starts the episode; the turns count from there
# (for all three APIs).
BY_PROMPT = LOADED.get("by_prompt", [])
# "usage": false makes every answer carry no token counts (a provider that reports none).
USAGE = LOADED.get("usage", True)
LOG = sys.argv[2]
PORTFILE = sys.argv[3]
LOCK = threading.Lock()


def text_of(message):
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def turn_for(body):
    messages = body.get("messages") or []
    if BY_PROMPT:
        for i in range(len(messages) - 1, -1, -1):
            if messages[i].get("role") != "user":
                continue
            text = text_of(messages[i])
            for entry in BY_PROMPT:
                if entry["match"] in text:
                    n = sum(1 for m in messages[i + 1:] if m.get("role") == "assistant")
                    turns = entry["turns"]
                    # Tool-use ids stay unique across episodes: the index counts all turns.
                    total = sum(1 for m in messages if m.get("role") == "assistant")
                    return total, turns[n] if n < len(turns) else [{"text": "done"}]
        return 0, [{"text": "done"}]
    n = sum(1 for m in messages if m.get("role") == "assistant")
    if n < len(SCRIPT):
        return n, SCRIPT[n]
    return n, [{"text": "done"}]


def blocks(n, turn):
    out = []
    for i, block in enumerate(turn):
        if "tool_use" in block:
            use = block["tool_use"]
            out.append({"type": "tool_use", "id": "toolu_%02d_%02d" % (n, i),
                        "name": use["name"], "input": use.get("input", {})})
        else:
            out.append({"type": "text", "text": block.get("text", "")})
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self.reply_json({"data": [], "has_more": False})

    def reply_json(self, value, status=200):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        with LOCK:
            with open(LOG, "a") as log:
                log.write(json.dumps({"path": self.path, "body": body}) + "\n")
        if "count_tokens" in self.path or "countTokens" in self.path:
            return self.reply_json({"input_tokens": 100, "totalTokens": 100})
        if self.path.startswith("/v1/responses"):
            return self.openai(body)
        if ":streamGenerateContent" in self.path or ":generateContent" in self.path:
            return self.gemini(body)
        if not self.path.startswith("/v1/messages"):
            return self.reply_json({})
        n, turn = turn_for(body)
        content = blocks(n, turn)
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        model = body.get("model", "claude-fake")
        message = {"id": "msg_%02d" % n, "type": "message", "role": "assistant", "model": model,
                   "content": [], "stop_reason": None, "stop_sequence": None,
                   "usage": {"input_tokens": 10, "output_tokens": 1}}
        if not USAGE:
            del message["usage"]
        if not body.get("stream"):
            message["content"] = content
            message["stop_reason"] = stop
            return self.reply_json(message)
        events = [("message_start", {"type": "message_start", "message": message})]
        for i, block in enumerate(content):
            if block["type"] == "text":
                events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                       "content_block": {"type": "text", "text": ""}}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "text_delta", "text": block["text"]}}))
            else:
                start = dict(block, input={})
                events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                       "content_block": start}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "input_json_delta",
                                                                 "partial_json": json.dumps(block["input"])}}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        delta = {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                 "usage": {"output_tokens": 5}}
        if not USAGE:
            del delta["usage"]
        events.append(("message_delta", delta))
        events.append(("message_stop", {"type": "message_stop"}))
        data = "".join("event: %s\ndata: %s\n\n" % (name, json.dumps(payload)) for name, payload in events)
        data = data.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def sse(handler, events):
    data = "".join(events).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def by_prompt(entries, is_user, text, is_model):
    """The turn of the BY_PROMPT episode started by the newest user entry holding a `match`,
    and the count of all model turns (for unique ids); None when no entry matches."""
    total = sum(1 for e in entries if is_model(e))
    for i in range(len(entries) - 1, -1, -1):
        if not is_user(entries[i]):
            continue
        said = text(entries[i])
        for entry in BY_PROMPT:
            if entry["match"] in said:
                n = sum(1 for e in entries[i + 1:] if is_model(e))
                turns = entry["turns"]
                return total, turns[n] if n < len(turns) else [{"text": "done"}]
    return total, [{"text": "done"}]


def openai_text(item):
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def openai(self, body):
    """The Responses API, streamed: one output item per block."""
    items = body.get("input") or []
    is_model = lambda i: (i.get("type") == "function_call"
                          or (i.get("type") == "message" and i.get("role") == "assistant"))
    n = sum(1 for i in items if is_model(i))
    turn = SCRIPT[n] if n < len(SCRIPT) else [{"text": "done"}]
    if BY_PROMPT:
        n, turn = by_prompt(items, lambda i: i.get("type") == "message" and i.get("role") == "user",
                            openai_text, is_model)
    output = []
    for i, block in enumerate(turn):
        if "tool_use" in block:
            use = block["tool_use"]
            output.append({"type": "function_call", "id": "fc_%02d_%02d" % (n, i),
                           "call_id": "call_%02d_%02d" % (n, i), "name": use["name"],
                           "arguments": json.dumps(use.get("input", {})), "status": "completed"})
            # Codex offers an MCP server's tools in a namespace (`mcp__orchestrate`).
            if "namespace" in use:
                output[-1]["namespace"] = use["namespace"]
        else:
            output.append({"type": "message", "id": "msg_%02d_%02d" % (n, i), "role": "assistant",
                           "status": "completed",
                           "content": [{"type": "output_text", "text": block.get("text", ""),
                                        "annotations": []}]})
    rid = "resp_%02d" % n
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    events = ["event: response.created\ndata: %s\n\n" % json.dumps(
        {"type": "response.created", "response": {"id": rid, "status": "in_progress", "output": []}})]
    for i, item in enumerate(output):
        events.append("event: response.output_item.added\ndata: %s\n\n" % json.dumps(
            {"type": "response.output_item.added", "output_index": i, "item": item}))
        events.append("event: response.output_item.done\ndata: %s\n\n" % json.dumps(
            {"type": "response.output_item.done", "output_index": i, "item": item}))
    events.append("event: response.completed\ndata: %s\n\n" % json.dumps(
        {"type": "response.completed",
         "response": dict({"id": rid, "status": "completed", "output": output},
                          **({"usage": usage} if USAGE else {}))}))
    sse(self, events)


def gemini(self, body):
    """The Gemini API: the router's JSON-mode call answered with a model choice; the
    streamed call with the script's turn."""
    if ":generateContent" in self.path:
        choice = json.dumps({"reasoning": "scripted", "model_choice": "flash"})
        return self.reply_json({"candidates": [{"content": {"role": "model", "parts": [{"text": choice}]},
                                                "finishReason": "STOP", "index": 0}],
                                "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1,
                                                  "totalTokenCount": 2}})
    contents = body.get("contents") or []
    n = sum(1 for c in contents if c.get("role") == "model")
    turn = SCRIPT[n] if n < len(SCRIPT) else [{"text": "done"}]
    if BY_PROMPT:
        n, turn = by_prompt(contents, lambda c: c.get("role") == "user",
                            lambda c: "".join(p.get("text", "") for p in c.get("parts") or []),
                            lambda c: c.get("role") == "model")
    parts = []
    for block in turn:
        if "tool_use" in block:
            use = block["tool_use"]
            parts.append({"functionCall": {"name": use["name"], "args": use.get("input", {})}})
        else:
            parts.append({"text": block.get("text", "")})
    chunk = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                             "index": 0}],
             "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}
    if not USAGE:
        del chunk["usageMetadata"]
    sse(self, ["data: %s\n\n" % json.dumps(chunk)])


Handler.openai = openai
Handler.gemini = gemini


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = PORTFILE + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, PORTFILE)
    server.serve_forever()


if __name__ == "__main__":
    main()
