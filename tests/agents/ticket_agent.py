#!/usr/bin/env python3
"""A scripted agent for a ticket under `git orchestrate run -- python3 ticket_agent.py`: it
plays the role GIT_ORCHESTRATE_ROLE names, through the real `git orchestrate` commands (which
read the role from that variable too). The manager assigns one subtask (hello.sh and its test),
rejects the first report and reassigns it, then accepts the second and completes the ticket;
the developer writes the files, commits and reports. AGENT_MODE=lazy makes the developer do
nothing; AGENT_MODE=cheat makes it approve its own report as the manager. Each turn appends "TURN ROLE SESSION_ID BRIEFED_AS" to ROLE_LOG (BRIEFED_AS: the role
the briefing speaks to).
"""

import json
import os
import subprocess
import sys

briefing = sys.stdin.read()
role = os.environ.get("GIT_ORCHESTRATE_ROLE", "")
mode = os.environ.get("AGENT_MODE", "good")
briefed_as = next((r for r in ("manager", "developer") if "you are the %s" % r in briefing), "?")
with open(os.environ["ROLE_LOG"], "a") as log:
    log.write("%s %s %s %s\n" % (os.environ.get("GIT_ORCHESTRATE_RUN_TURN"), role or "-",
                                 os.environ.get("GIT_ORCHESTRATE_RUN_SESSION_ID", "-"), briefed_as))
print("turn %s as %s: %s" % (os.environ.get("GIT_ORCHESTRATE_RUN_TURN"), role,
                             briefing.splitlines()[0] if briefing else ""))


def orchestrate(*args):
    r = subprocess.run(["git", "orchestrate", *args], capture_output=True, text=True)
    print("$ git orchestrate %s -> exit %d\n%s%s" % (" ".join(args), r.returncode, r.stdout, r.stderr))
    return r


def git(*args):
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


ticket = json.loads(orchestrate("--json", "ticket", "show").stdout)["ticket"]
current = next((s for s in ticket["subtasks"] if s["id"] == ticket.get("current")), None)


def assign(prior=None):
    args = ["assign", "--mode", "implementation", "--goal", "hello.sh prints hello",
            "--file-to-modify", "hello.sh", "--file-to-modify", "test_hello.sh",
            "--acceptance-criteria", "sh hello.sh prints hello"]
    if prior:
        args += ["--prior-context", prior]
    orchestrate(*args)


if role == "manager":
    if current and current.get("awaitingVerification"):
        if current["rejections"] == 0:
            orchestrate("update-subtask", "--status", "rejected", "--notes", "it must say hello, not hi")
            assign("rejected once: it must say hello, not hi")
        else:
            orchestrate("update-subtask", "--status", "complete", "--notes", "says hello")
            orchestrate("complete-ticket", "--summary", "hello.sh says hello")
    elif not ticket["subtasks"]:
        assign()
    else:
        print("nothing for the manager")
elif role == "developer":
    if mode == "lazy":
        print("Not today.")
        sys.exit(0)
    word = "hello" if current and current["rejections"] > 0 else "hi"
    with open("hello.sh", "w") as f:
        f.write("echo %s\n" % word)
    with open("test_hello.sh", "w") as f:
        f.write("[ \"$(sh hello.sh)\" = %s ]\n" % word)
    git("add", "hello.sh", "test_hello.sh")
    git("commit", "-q", "-m", "hello.sh says %s" % word)
    orchestrate("subtask-complete", "--status", "complete", "--build-status", "pass",
                "--message", "hello.sh says %s" % word, "--file", "hello.sh", "--file", "test_hello.sh")
    if mode == "cheat":
        # Approves its own report as the manager, out of the guard's sight: a child process
        # without the session's role that claims the other one.
        env = {k: v for k, v in os.environ.items() if k != "GIT_ORCHESTRATE_ROLE"}
        r = subprocess.run(["git", "orchestrate", "update-subtask", "--role", "manager",
                            "--status", "complete", "--notes", "looks good to me"],
                           capture_output=True, text=True, env=env)
        print("self-approval -> exit %d %s%s" % (r.returncode, r.stdout, r.stderr))
else:
    print("no role given")
