// The board's page: draws /board.json (the `board --json` object) as lanes of cards, and
// polls /tips once a second, fetching the board again only when a ref moved.
//
// Every string in the board came from a repository or a remote and is hostile: it reaches
// the page only through textContent and attribute values, never as markup. Control and
// invisible characters are shown escaped, as the text board shows them.
"use strict";

// The phases, in the order work moves through them; each state of either workflow kind
// belongs to one (docs/board.md).
const LANES = [
  ["planning", "Planning"],
  ["tdd", "TDD"],
  ["review", "Review"],
  ["finalizing", "Finalizing / merging"],
  ["halted", "Halted"],
  ["idle", "Idle"],
  ["unreadable", "Unreadable"],
];

const PHASE = {
  INITIALIZING: "planning",
  CREATING_BRANCH: "planning",
  REPLANNING: "planning",
  EXECUTING_TDD: "tdd",
  DEBUGGING: "tdd",
  CODE_REVIEW: "review",
  AWAITING_FINALIZATION: "finalizing",
  FINALIZE_COMPLETE: "finalizing",
  PLAN_UPDATED: "finalizing",
  MERGING_BRANCH: "finalizing",
  HALTED: "halted",
  MANAGER: "planning",
  DEVELOPER: "tdd",
  TICKET_DONE: "idle",
};

const ABSENT = "not reported";

function lane(row) {
  if (row.state === null || row.state === undefined) return "unreadable";
  // A TDD workflow back at the start with no PR planned waits for work: idle.
  if (row.state === "INITIALIZING" && !row.pr) return "idle";
  return PHASE[row.state] || "unreadable";
}

// Control characters and the invisible ones that reorder or hide text, written out.
function visible(value) {
  return String(value).replace(
    /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g,
    (c) => {
      const code = c.codePointAt(0);
      return code < 0x20 || code === 0x7f
        ? "\\x" + code.toString(16).padStart(2, "0")
        : "\\u{" + code.toString(16) + "}";
    }
  );
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  // A <pre> keeps its line breaks; every other control character is shown escaped.
  if (text !== undefined) {
    node.textContent = tag === "pre" ? String(text).split("\n").map(visible).join("\n") : visible(text);
  }
  return node;
}

function age(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m";
  if (s < 86400) return Math.floor(s / 3600) + "h";
  return Math.floor(s / 86400) + "d";
}

// A duration as `45s`, `3m 05s`, `2h 07m`, `3d 04h`.
function duration(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const two = (n) => String(n).padStart(2, "0");
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m " + two(s % 60) + "s";
  if (s < 86400) return Math.floor(s / 3600) + "h " + two(Math.floor(s / 60) % 60) + "m";
  return Math.floor(s / 86400) + "d " + two(Math.floor(s / 3600) % 24) + "h";
}

// The ledger's figures as text; null when nobody reported them (docs/board.md, "The ledger").
function turnsText(f) {
  return known(f.turns) ? String(f.turns) : null;
}

function tokensText(f) {
  if (!known(f.tokens)) return null;
  const n = (x) => x.toLocaleString("en-US");
  let text = n(f.tokens.input) + " in / " + n(f.tokens.output) + " out";
  if (known(f.turns) && f.turns_reporting < f.turns) {
    text += " (" + f.turns_reporting + " of " + f.turns + " turns reported)";
  }
  return text;
}

function costText(f) {
  return known(f.cost_usd) ? "$" + f.cost_usd.toFixed(f.cost_usd < 1 ? 4 : 2) : null;
}

function stepsText(f) {
  return f.steps.map((s) => s.name + " " + duration(s.seconds)).join(", ");
}

function known(value) {
  return value !== null && value !== undefined;
}

function field(dl, name, value) {
  dl.append(el("dt", "", name));
  dl.append(known(value) ? el("dd", "", value) : el("dd", "absent", ABSENT));
}

function card(report, row) {
  const node = el("article", "card " + lane(row));
  node.setAttribute("data-workflow", row.workflow);
  node.append(el("h3", "title", known(row.pr_title) ? row.pr_title : row.workflow));
  const dl = el("dl");
  const where = row.shown === "remote" ? " (the remote's copy)" : "";
  field(dl, "workflow", row.workflow + (known(row.kind) ? " · " + row.kind : "") + where);
  field(dl, "state", row.state);
  field(
    dl,
    "step",
    known(row.step)
      ? row.step.id + " " + row.step.type + ": " + row.step.description
      : row.subtask
  );
  field(dl, "progress", known(row.progress) ? row.progress.done + "/" + row.progress.total : null);
  // The current step's debugging attempt, now: a TDD workflow's; a ticket reports none.
  // Not the ledger's failed attempts, which are summed over every step.
  field(
    dl,
    "debugging attempt",
    row.kind === "tdd" ? (row.debugging_attempt > 0 ? "#" + row.debugging_attempt + " on this step" : "none") : null
  );
  field(dl, "claim", claimText(row));
  field(
    dl,
    "last activity",
    known(row.last_activity) ? age(report.now - row.last_activity) + " ago" : null
  );
  field(dl, "worktree", worktreeText(row.worktree));
  field(dl, "behind main", row.behind_main);
  field(dl, "branch", row.branch);
  const l = row.ledger;
  field(dl, "wall time", known(l) ? duration(l.wall_seconds_total) : null);
  field(dl, "turns", known(l) ? turnsText(l) : null);
  field(dl, "tokens", known(l) ? tokensText(l) : null);
  field(dl, "cost", known(l) ? costText(l) : null);
  node.append(dl);
  if (!known(row.error)) {
    const link = el("a", "timeline-link", "timeline");
    link.setAttribute("href", "#timeline=" + encodeURIComponent(row.workflow));
    node.append(link);
  }
  if (known(row.error)) {
    node.append(el("p", "note", "the " + row.shown + " copy cannot be read: " + row.error));
  }
  if (known(row.local_tip) && known(row.remote_tip) && row.local_tip !== row.remote_tip) {
    node.append(el("p", "note", "here and on the remote differ: `git orchestrate sync` brings them level"));
  }
  return node;
}

function claimText(row) {
  const c = row.claim;
  if (!known(c)) return null;
  const holder = c.workflow === row.workflow ? "" : "by " + c.workflow + " ";
  return holder + c.user + "@" + c.host + ", " + age(c.age_s) + (c.expired ? " EXPIRED" : "");
}

function worktreeText(w) {
  if (!known(w)) return null;
  let text = String(w.path);
  if (known(w.uncommitted)) {
    if (w.uncommitted > 0) text += ", " + w.uncommitted + " uncommitted";
  } else {
    text += ", uncommitted: " + ABSENT;
  }
  if (known(w.unpushed) && w.unpushed > 0) text += ", " + w.unpushed + " unpushed";
  return text;
}

// Only what the state says for certain: a HALTED workflow waits for `resume`. A review
// waiting for `approve` depends on configuration the board does not report.
function gates(report) {
  return report.workflows
    .filter((row) => row.state === "HALTED" && known(row.gate))
    .map((row) => {
      const item = el("li");
      item.append(el("span", "", (known(row.pr_title) ? row.pr_title : row.workflow) + ": "));
      const gate = row.gate;
      item.append(el("code", "command", gate.command));
      if (known(gate.sign_command)) {
        const why =
          gate.signature_required === true
            ? "a signature is required ([human] require = \"signature\"); KEY is your SSH key:"
            : "if the pinned configuration requires a signature (it cannot be read here); KEY is your SSH key:";
        item.append(el("p", "sign-why", why));
        item.append(el("code", "sign-command", gate.sign_command));
        item.append(el("p", "sign-why", "or sign elsewhere:"));
        for (const line of gate.sign_elsewhere) item.append(el("code", "sign-elsewhere", line));
      }
      if (row.shown === "remote") {
        item.append(el("span", "", " (halted on the remote: run it in a clone that has it)"));
      }
      return item;
    });
}

function list(id, items, empty) {
  const node = document.getElementById(id);
  node.replaceChildren(...(items.length ? items : [el("li", "empty", empty)]));
}

function cell(tr, value) {
  tr.append(known(value) ? el("td", "", value) : el("td", "absent", ABSENT));
}

function ledgerRow(name, f, className) {
  const tr = el("tr", className);
  tr.append(el("th", "", name));
  cell(tr, duration(f.wall_seconds_total));
  cell(tr, f.failed_attempts);
  cell(tr, turnsText(f));
  cell(tr, tokensText(f));
  cell(tr, costText(f));
  cell(tr, stepsText(f));
  return tr;
}

// One row per workflow, then one per PR its chain tells apart (from its `plan` transition).
function ledgerRows(report) {
  const rows = [];
  for (const row of report.workflows) {
    if (!known(row.ledger)) continue;
    const title = known(row.pr_title) ? row.workflow + ": " + row.pr_title : row.workflow;
    const tr = ledgerRow(title, row.ledger, "workflow");
    tr.setAttribute("data-workflow", row.workflow);
    rows.push(tr);
    row.ledger.prs.forEach((pr, i) => {
      const started = new Date(pr.started * 1000).toISOString().replace("T", " ").slice(0, 16);
      rows.push(ledgerRow("PR " + (i + 1) + ", planned " + started + " UTC", pr, "pr"));
    });
  }
  if (!rows.length) {
    const tr = el("tr", "empty");
    const td = el("td", "", "no workflows");
    td.setAttribute("colspan", "7");
    tr.append(td);
    rows.push(tr);
  }
  return rows;
}

function render(report) {
  const lanes = new Map(LANES.map(([key]) => [key, []]));
  for (const row of report.workflows) lanes.get(lane(row)).push(card(report, row));
  const columns = LANES.filter(([key]) => key !== "unreadable" || lanes.get(key).length).map(
    ([key, title]) => {
      const column = el("section", "lane " + key);
      column.setAttribute("data-lane", key);
      column.append(el("h2", "", title + " (" + lanes.get(key).length + ")"));
      column.append(...lanes.get(key));
      return column;
    }
  );
  document.getElementById("lanes").replaceChildren(...columns);
  document.getElementById("ledger-rows").replaceChildren(...ledgerRows(report));
  list("gates", gates(report), "none");
  list(
    "unclaimed",
    report.unclaimed.map((pr) => el("li", "", pr.heading)),
    "none"
  );
  list(
    "warnings",
    report.warnings.map((w) => el("li", "", w)),
    "none"
  );
  const source = known(report.remote) ? "here and on " + report.remote + " as last fetched" : "here (no remote)";
  document.getElementById("summary").textContent = visible(
    report.workflows.length + " workflow(s) " + source + "; main branch " + report.main_branch
  );
}

// A workflow's timeline (docs/board.md, "A workflow's timeline"), shown when the address
// ends in #timeline=NAME (or #timeline=NAME@COMMIT, to point at one transition).
function timelineTarget() {
  const hash = window.location.hash;
  if (!hash.startsWith("#timeline=")) return null;
  const [name, commit] = hash.slice("#timeline=".length).split("@");
  try {
    return { name: decodeURIComponent(name), commit: commit || null };
  } catch (e) {
    return null;
  }
}

function when(seconds) {
  return new Date(seconds * 1000).toISOString().replace("T", " ").slice(0, 19) + " UTC";
}

function timelineEntry(report, e) {
  const item = el("li", "entry " + e.event);
  item.id = "t-" + e.commit;
  item.setAttribute("data-commit", e.commit);
  const head = el("p", "entry-head");
  head.append(el("time", "", when(e.time)));
  head.append(el("span", "event", " " + e.event + " "));
  head.append(el("span", "states", (e.from || "-") + " \u2192 " + (e.to || "-")));
  if (known(e.step)) head.append(el("span", "step", " step " + e.step));
  head.append(el("code", "commit", " " + e.commit.slice(0, 12)));
  item.append(head);
  if (e.summary) item.append(el("p", "summary", e.summary));
  if (known(e.human)) item.append(el("p", "human", "answered by a human: " + e.human));
  const t = e.test;
  if (known(t)) {
    const verdict = el("p", "verdict " + (t.met ? "met" : "unmet"));
    verdict.textContent = visible(
      t.kind + " run, expected " + t.expectation + ": " + t.command + " \u2192 " + t.exit +
        (t.met ? " (as expected)" : " (not as expected)") +
        (known(t.gates_passed) ? "; gates " + (t.gates_passed ? "passed" : "failed") : "")
    );
    item.append(verdict);
    if (t.tests.length) item.append(el("p", "tests", "tests: " + t.tests.join(", ")));
    if (known(t.not_a_test)) item.append(el("p", "note", "no test that failed: " + t.not_a_test));
    if (t.output_tail) item.append(el("pre", "output", t.output_tail));
  }
  if (known(e.debugging)) {
    item.append(el("p", "debugging", "debugging attempt " + e.debugging.attempt + ", tier " + e.debugging.tier));
  }
  if (known(e.review)) {
    const r = e.review;
    item.append(el("p", "review", "review round " + r.round + (r.ran ? "" : " (no review command ran)") + ": " + r.findings.length + " finding(s)"));
    const ul = el("ul", "findings");
    for (const f of r.findings) {
      const where = known(f.file) ? f.file + (known(f.line) ? ":" + f.line : "") + ": " : "";
      ul.append(el("li", f.blocking ? "blocking" : "", f.priority + (f.blocking ? " (blocking) " : " ") + where + f.issue + (known(f.suggestion) ? " (suggestion: " + f.suggestion + ")" : "")));
    }
    item.append(ul);
  }
  if (known(e.text)) item.append(el("pre", "text", e.text));
  if (known(e.squashed)) item.append(el("p", "squashed", "squashed into " + e.squashed));
  if (known(e.merged)) item.append(el("p", "merged", "main after the merge: " + e.merged));
  const f = e.final_check;
  if (known(f)) {
    item.append(el("p", "final-check", "final check: " + f.verification + (f.final_checks_refused ? "; refused " + f.final_checks_refused + " time(s) before" : "")));
    const ul = el("ul", "red-proofs");
    for (const p of f.red_tests) {
      ul.append(el("li", "", "step " + p.step + ": " + p.command + " \u2014 base " + p.base + ", final " + p.final + "; evidence: " + (known(p.evidence) ? p.evidence : ABSENT) + (p.tests.length ? "; tests: " + p.tests.join(", ") : "")));
    }
    item.append(ul);
  }
  for (const a of e.attestations) {
    const detail = known(a.verifier) ? " by " + a.verifier : known(a.why) ? ": " + a.why : known(a.reasons) ? ": " + a.reasons.join("; ") : "";
    const label = a.by === "local" ? "local" : a.by + ", " + a.source;
    const signed = a.signed ? ", signed" : ", not signed by a listed verifier";
    item.append(el("p", "attestation " + a.status + (a.signed ? " signed" : " unsigned"), "attestation (" + label + ") on " + a.commit.slice(0, 12) + ": " + a.status.toUpperCase() + signed + detail));
  }
  for (const link of e.links) {
    const a = el("a", "link", link.rel + " " + link.commit.slice(0, 12));
    a.setAttribute("href", "#timeline=" + encodeURIComponent(report.workflow) + "@" + link.commit);
    const p = el("p", "links");
    p.append(a);
    item.append(p);
  }
  return item;
}

async function showTimeline() {
  const view = document.getElementById("timeline");
  const target = timelineTarget();
  if (!target) {
    view.hidden = true;
    view.replaceChildren();
    return;
  }
  view.hidden = false;
  const answer = await fetch("/workflow/" + encodeURIComponent(target.name) + ".json", { cache: "no-store" });
  if (!answer.ok) {
    view.replaceChildren(el("h2", "", "Timeline of " + target.name), el("p", "note", await answer.text()));
    return;
  }
  const report = await answer.json();
  const heading = el("h2", "", "Timeline of " + report.workflow + " (" + report.total + " transitions" + (report.truncated ? ", the newest " + report.entries.length + " shown" : "") + ")");
  const close = el("a", "close", "close");
  close.setAttribute("href", "#");
  const list = el("ol", "entries");
  list.append(...report.entries.map((e) => timelineEntry(report, e)));
  view.replaceChildren(heading, close, list);
  if (target.commit) {
    const focus = document.getElementById("t-" + target.commit);
    if (focus) {
      focus.classList.add("focus");
      focus.scrollIntoView();
    }
  }
}

window.addEventListener("hashchange", () => {
  showTimeline().catch((e) => connection("cannot read the timeline: " + visible(e.message), true));
});

function connection(text, lost) {
  const node = document.getElementById("connection");
  node.textContent = text;
  node.className = lost ? "connection lost" : "connection";
}

let lastTips = null;

async function poll() {
  try {
    // A hidden tab asks nothing: the server reads git only when someone looks.
    if (!document.hidden) {
      const tips = await fetch("/tips", { cache: "no-store" });
      if (!tips.ok) throw new Error(await tips.text());
      const now = (await tips.json()).tips;
      if (now !== lastTips) {
        const board = await fetch("/board.json", { cache: "no-store" });
        if (!board.ok) throw new Error(await board.text());
        render(await board.json());
        await showTimeline();
        lastTips = now;
      }
      connection("up to date at " + new Date().toLocaleTimeString(), false);
    }
  } catch (e) {
    connection("cannot read the board: " + visible(e.message), true);
  } finally {
    setTimeout(poll, 1000);
  }
}

poll();
