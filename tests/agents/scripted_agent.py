#!/usr/bin/env python3
"""A scripted agent for `git orchestrate run -- python3 scripted_agent.py`: it reads the
briefing on stdin and does what a one-task plan needs, one turn at a time, through the real
`git orchestrate` commands. AGENT_MODE=good does the work; lazy does nothing on GREEN steps;
idle does nothing at all; sleep waits a minute (for Ctrl-C). PLAN_FILE holds the plan.
"""

import json
import os
import subprocess
import sys
import time

briefing = sys.stdin.read()
mode = os.environ.get("AGENT_MODE", "good")
print("turn %s, session %s (%s): %s" % (
    os.environ.get("GIT_ORCHESTRATE_RUN_TURN"), os.environ.get("GIT_ORCHESTRATE_RUN_SESSION"),
    os.environ.get("GIT_ORCHESTRATE_RUN_SESSION_ID", "")[:8], briefing.splitlines()[0] if briefing else ""))
with open(os.environ["GIT_ORCHESTRATE_BRIEFING_FILE"]) as f:
    assert f.read() == briefing, "the briefing file holds the briefing"


def orchestrate(*args):
    r = subprocess.run(["git", "orchestrate", *args], capture_output=True, text=True)
    print("$ git orchestrate %s -> exit %d" % (" ".join(args), r.returncode))
    return r


def git(*args):
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


if mode == "idle":
    print("I will do nothing.")
    sys.exit(0)
if mode == "sleep":
    with open("agent.pid", "w") as f:
        f.write(str(os.getpid()))
    time.sleep(60)
    sys.exit(0)

status = json.loads(orchestrate("--json", "status").stdout)
state, step, pending = status["state"], status.get("step") or {}, status.get("pending")
if state == "INITIALIZING":
    if "[DONE]" in open("docs/plan.md").read():
        orchestrate("submit-work", "-s", "every PR of the master plan is done", "--no-pr-left")
    else:
        orchestrate("submit-work", "-s", "plan the PR", "--plan", os.environ["PLAN_FILE"])
elif pending == "checkpoint":
    orchestrate("checkpoint")
elif state in ("EXECUTING_TDD", "DEBUGGING") and step.get("type") == "RED":
    orchestrate("submit-work", "-s", "the test", "--test-command", "test -e add.sh", "--expectation", "FAIL")
    orchestrate("submit-work", "-s", "add.sh is missing", "--analysis-decision", "SUCCESS")
elif state in ("EXECUTING_TDD", "DEBUGGING") and step.get("type") == "GREEN":
    if mode == "lazy":
        print("Not today.")
        sys.exit(0)
    with open("add.sh", "w") as f:
        f.write("echo 5\n")
    orchestrate("submit-work", "-s", "add.sh", "--test-command", "test -e add.sh", "--expectation", "PASS")
    orchestrate("checkpoint")
elif state == "AWAITING_FINALIZATION":
    base = git("merge-base", "main", "HEAD").strip()
    git("reset", "--soft", base)
    git("commit", "-q", "-m", status["pr_title"])
    orchestrate("submit-work", "-s", "squashed")
elif state == "FINALIZE_COMPLETE":
    head = git("rev-parse", "HEAD").strip()
    text = open("docs/plan.md").read().replace(status["pr_title"], "%s [DONE] %s" % (status["pr_title"], head))
    with open("docs/plan.md", "w") as f:
        f.write(text)
    git("add", "docs/plan.md")
    git("commit", "-q", "-m", 'docs: mark "%s" done in the master plan' % status["pr_title"])
    orchestrate("submit-work", "-s", "master plan updated")
else:
    print("nothing for me in state", state)
