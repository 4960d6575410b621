#!/usr/bin/env python3
"""A scripted fake of the Anthropic Messages API on 127.0.0.1, for driving the real Claude
Code CLI offline in tests (AGENT-CLIENTS.md).

Usage: fake_anthropic.py SCRIPT.json LOG.jsonl PORTFILE

It is stateless: for each request it counts the assistant turns already in `messages` and
answers with that turn of the script, so retries and hook-injected user messages simply move
the script on. A turn is a list of blocks, {"text": "..."} or {"tool_use": {"name": ...,
"input": {...}}}; a turn with a tool_use ends with stop_reason "tool_use". Past the end of the
script it answers "done". Every request is appended to LOG.jsonl as {"path", "body"}.
"""

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = json.load(open(sys.argv[1]))["turns"]
LOG = sys.argv[2]
PORTFILE = sys.argv[3]
LOCK = threading.Lock()


def turn_for(body):
    messages = body.get("messages") or []
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
        if "count_tokens" in self.path:
            return self.reply_json({"input_tokens": 100})
        if not self.path.startswith("/v1/messages"):
            return self.reply_json({})
        n, turn = turn_for(body)
        content = blocks(n, turn)
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        model = body.get("model", "claude-fake")
        message = {"id": "msg_%02d" % n, "type": "message", "role": "assistant", "model": model,
                   "content": [], "stop_reason": None, "stop_sequence": None,
                   "usage": {"input_tokens": 10, "output_tokens": 1}}
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
        events.append(("message_delta", {"type": "message_delta",
                                         "delta": {"stop_reason": stop, "stop_sequence": None},
                                         "usage": {"output_tokens": 5}}))
        events.append(("message_stop", {"type": "message_stop"}))
        data = "".join("event: %s\ndata: %s\n\n" % (name, json.dumps(payload)) for name, payload in events)
        data = data.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = PORTFILE + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, PORTFILE)
    server.serve_forever()


if __name__ == "__main__":
    main()
