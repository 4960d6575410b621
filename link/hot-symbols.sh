#!/bin/bash
# Regenerates link/hot-symbols.txt (link/README.md): the functions that two passing
# `submit-work`s at GREEN (a test through `sh`, and `true` started directly), `get-task` and
# `status` run, in the order callgrind first lists them,
# for each build given (their names differ: cargo's release and bench profiles hash them
# apart), the first build's names first.
# Usage: link/hot-symbols.sh BINARY...   (`cargo build --release`'s, then `cargo bench`'s)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || { echo "usage: $0 BINARY..." >&2; exit 2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
: > "$work/names"
for given in "$@"; do
bin=$(cd "$(dirname "$given")" && pwd)/$(basename "$given")
rm -rf "$work/repo"
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
python3 - "$work" >> "$work/names" <<'P'
import re, sys
seen = set()
for n in range(1, 5):
    for line in open(f"{sys.argv[1]}/cg.{n}", errors="replace"):
        m = re.match(r"^c?fn=\(\d+\) (\S+)", line)
        if m and m.group(1).startswith(("_ZN", "_R")) and m.group(1) not in seen:
            seen.add(m.group(1))
            print(m.group(1))
P
done
# The first build's names first, each name once.
awk '!seen[$0]++' "$work/names" > "$root/link/hot-symbols.txt"
wc -l < "$root/link/hot-symbols.txt"
