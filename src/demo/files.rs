//! The demo project's files and texts: the calc sources and tests at each stage, its
//! configuration, reviewer and master plan, the plans the agent submits, the escalation
//! report and the MCP session. Data only; src/demo/scenario.rs says when each is used.

/// The first PR's plan, as the scripted agent submits it; the tests submit the same file.
pub(super) const PLAN: &str = include_str!("plan.json");
/// The re-plan after the scope reduction of task `sub`.
pub(super) const REPLAN: &str = include_str!("replan.json");
/// The second PR's plan, submitted after the merge.
pub(super) const PLAN_2: &str = include_str!("plan-2.json");

pub(super) const MASTER_PLAN: &str = "# Master plan: calc, a tiny shell calculator

## PR 1: feat: Add and subtract numbers
- `add A B` prints A + B
- `sub A B` prints A - B

## PR 2: feat: Multiply numbers
- `mul A B` prints A * B
";

pub(super) const CONFIG: &str = "main_branch = \"main\"
master_plan = \"docs/Plan_Doc/Active_Plan.md\"

[[preflight]]
name = \"tests\"
command = \"sh tests/run_all.sh\"
timeout = \"1m\"

# The demo's reviewer is a small script (tools/review.sh); a real one would ask a model.
[review]
command = \"sh tools/review.sh\"
dimensions = [\"correctness\", \"style\"]
max_rounds = 2

# Small thresholds, so the demo reaches the escape hatches quickly (defaults: 2 / 5 / 6 / 10).
[debugging]
hypothesize_max_attempts = 1
instrumentation_max_attempts = 1
unlock_scope_reduction_at = 2
unlock_escalation_at = 3

[test]
timeout = \"1m\"
output_tail = 40
";

pub(super) const RUN_ALL: &str = "#!/bin/sh
# Runs every tests/test_*.sh; fails on the first failure.
for t in tests/test_*.sh; do
  [ -e \"$t\" ] || continue
  sh \"$t\" || exit 1
done
echo \"all tests passed\"
";

/// Reads the review context (JSON) on stdin and prints findings (JSON). It knows two rules:
/// style wants every function to print with printf; correctness always notes the missing docs.
pub(super) const REVIEWER: &str = r#"#!/bin/sh
# The demo's code reviewer. git orchestrate runs it once per dimension, the review context
# as JSON on stdin ({pr, base, head, diff, dimension, round, ...}); it prints
# {"findings": [{"priority", "file", "line", "issue", "suggestion"}]}.
context=$(cat)
case "$context" in
  *'"dimension":"style"'*)
    if printf '%s' "$context" | grep -q '+[a-z]*() { echo \$(('; then
      echo '{"findings": [{"priority": "P1", "file": "lib/calc.sh", "issue": "a function prints with echo while add prints with printf: output formatting must be consistent", "suggestion": "print with printf as add does"}]}'
    else
      echo '{"findings": []}'
    fi ;;
  *)
    echo '{"findings": [{"priority": "P3", "file": "lib/calc.sh", "issue": "sub and neg have no usage comment", "suggestion": "document them like add"}]}' ;;
esac
"#;

pub(super) const CALC_EMPTY: &str = "# calc: shell functions for arithmetic.\n";

pub(super) const CALC_ADD: &str = "# calc: shell functions for arithmetic.
add() { echo $(($1 + $2)); }
";

pub(super) const CALC_ADD_REFACTOR_BROKEN: &str = "# calc: shell functions for arithmetic.

# add A B: prints A + B.
add() { printf '%d\\n' \"$(($1 + $3))\"; }
";

pub(super) const CALC_ADD_REFACTOR_FIXED: &str = "# calc: shell functions for arithmetic.

# add A B: prints A + B.
add() { printf '%d\\n' \"$(($1 + $2))\"; }
";

/// The calc library after task 1, plus `extra`.
pub(super) fn calc_with(extra: &str) -> String {
    format!("{CALC_ADD_REFACTOR_FIXED}{extra}")
}

pub(super) const ESCALATION: &str = "# sub 5 3 keeps printing 0

**Goal:** task 2b, `sub A B` prints A - B, built as `add A (neg B)`.

**Tried:**
1. `sub() { add \"$1\" \"$(neg $1)\"; }`: prints 0.
2. The same again, with quoting changes: prints 0 (identical failure).
3. `sub() { add \"$(neg $1)\" \"$1\"; }`: prints 0.

**Error:** `FAIL: sub 5 3 printed '0', expected 2`

**Analysis:** every variant cancels out. I do not see which operand `neg` should take.
";

/// One `get_task` round trip as an MCP client sends it: initialize, then tools/call.
pub(super) const MCP_SESSION: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"demo","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_task","arguments":{}}}"#,
    "\n",
);

/// A test script of the calc project: `call` must print `expected`.
pub(super) fn calc_test(call: &str, expected: &str) -> String {
    format!(
        "#!/bin/sh
. ./lib/calc.sh
result=$({call})
if [ \"$result\" != \"{expected}\" ]; then
  echo \"FAIL: {call} printed '$result', expected {expected}\"
  exit 1
fi
echo \"ok: {call} = {expected}\"
"
    )
}
