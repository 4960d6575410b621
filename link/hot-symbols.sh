#!/bin/bash
# Regenerates link/hot-symbols.txt (link/README.md): the functions of a release build that a
# passing `submit-work`, `get-task` and `status` run, in the order callgrind first lists them.
# Usage: link/hot-symbols.sh [BINARY]   (default: target/release/git-orchestrate)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/target/release/git-orchestrate}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"; git init -q --initial-branch=main repo; cd repo
git config user.name Profile; git config user.email profile@example.invalid
echo profile > README; mkdir -p docs/Plan_Doc; printf "# Plan\n## PR 1: the profile PR\n" > docs/Plan_Doc/Active_Plan.md
git add README docs/Plan_Doc/Active_Plan.md; git commit -qm initial
cat > ../plan.json <<'P'
{"masterPlanPath": "docs/Plan_Doc/Active_Plan.md", "prTitle": "feat: the profile PR", "summary": "s",
 "verificationPlan": "v", "tasks": [{"taskName": "t", "status": "TODO", "tdd_steps": [
  {"type": "RED", "description": "r", "status": "TODO"},
  {"type": "GREEN", "description": "g", "status": "TODO"}]}]}
P
"$bin" submit-work -s plan --plan ../plan.json >/dev/null
"$bin" get-task >/dev/null
"$bin" submit-work -s red --test-command "test -e done" >/dev/null || [ $? = 3 ]
"$bin" submit-work -s why --analysis-decision SUCCESS >/dev/null
touch done
tip=$(git rev-parse refs/orchestrator/workflows/main)
run() { git update-ref refs/orchestrator/workflows/main "$tip"
  valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.$1" "$bin" "${@:2}" >/dev/null 2>&1 || true; }
run 1 submit-work -s green --test-command "test -e done"
run 2 submit-work -s true --test-command true
run 3 get-task
run 4 status
python3 - "$work" > "$root/link/hot-symbols.txt" <<'P'
import re, sys
seen = set()
for n in range(1, 5):
    for line in open(f"{sys.argv[1]}/cg.{n}", errors="replace"):
        m = re.match(r"^c?fn=\(\d+\) (\S+)", line)
        if m and m.group(1).startswith(("_ZN", "_R")) and m.group(1) not in seen:
            seen.add(m.group(1))
            print(m.group(1))
P
wc -l < "$root/link/hot-symbols.txt"
