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
  if (text !== undefined) node.textContent = visible(text);
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

// A word as a shell reads it back: plain when it is safe, else single-quoted.
function shellWord(word) {
  return /^[A-Za-z0-9._\/@:=+-]+$/.test(word) ? word : "'" + word.replace(/'/g, "'\\''") + "'";
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
  // The debugging attempt is a TDD workflow's; a ticket reports none.
  field(dl, "attempts", row.kind === "tdd" ? row.attempt : null);
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
    .filter((row) => row.state === "HALTED")
    .map((row) => {
      const item = el("li");
      item.append(el("span", "", (known(row.pr_title) ? row.pr_title : row.workflow) + ": "));
      item.append(el("code", "", "git orchestrate --workflow " + shellWord(row.workflow) + " resume"));
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
  cell(tr, f.attempts);
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
