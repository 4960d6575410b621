//! `git orchestrate board --serve` (docs/board.md): the real binary serving a real
//! repository, read over plain HTTP/1.1 from a client written here. The JSON is the
//! `board --json` object; the page is static and locked down; only loopback, only reads,
//! only this server's own `Host`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::Duration;

use pretty_assertions::assert_eq;

use crate::support::{BIN, Run, TestRepo};

/// The board's clock in these tests, so that two reads of it agree.
const NOW: &str = "1767226200";

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                   connect-src 'self'; img-src 'self'; base-uri 'none'; \
                   form-action 'none'; frame-ancestors 'none'";

/// A running `board --serve`, killed when dropped (a failed assertion included).
struct Served {
    child: Child,
    port: u16,
    url: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn command(repo: &TestRepo, args: &[&str]) -> std::process::Command {
    let mut all = vec!["board"];
    all.extend_from_slice(args);
    let mut cmd = repo.command(BIN, &all);
    cmd.current_dir(&repo.path)
        .env("GIT_ORCHESTRATE_NOW", NOW)
        .env("USER", "tester")
        .stdin(Stdio::null());
    cmd
}

/// `board ARGS` run to its end.
fn board(repo: &TestRepo, args: &[&str]) -> Run {
    Run::from(command(repo, args).output().expect("run board"))
}

/// Starts `board --serve ARGS` and waits (up to 30 s) for the URL it prints.
fn serve(repo: &TestRepo, args: &[&str]) -> Served {
    let mut all = vec!["--serve"];
    all.extend_from_slice(args);
    let mut child = command(repo, &all)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn board --serve");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let mut served = Served {
        child,
        port: 0,
        url: String::new(),
    };
    let line = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("board --serve printed no URL within 30 s");
    let url = line
        .trim_end()
        .strip_prefix("board: serving ")
        .unwrap_or_else(|| panic!("not the URL line: {line:?}"))
        .to_string();
    let port = url
        .strip_prefix("http://127.0.0.1:")
        .and_then(|rest| rest.strip_suffix('/'))
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("not a loopback URL: {url}"));
    served.port = port;
    served.url = url;
    served
}

/// An HTTP answer: its status, headers (names lower-cased) and body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// `METHOD PATH` sent to the server on `port` with `Host: HOST`, over a connection of its
/// own that the server closes after answering.
fn http(port: u16, method: &str, path: &str, host: &str) -> Answer {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    )
    .expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the answer");
    let text = String::from_utf8(raw).expect("UTF-8 answer");
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Answer {
        status,
        headers,
        body: body.to_string(),
    }
}

fn get(served: &Served, path: &str) -> Answer {
    http(
        served.port,
        "GET",
        path,
        &format!("127.0.0.1:{}", served.port),
    )
}

#[test]
fn board_serve_serves_the_board_json_and_a_locked_down_page() {
    let repo = TestRepo::at_first_step();
    let served = serve(&repo, &["--port", "0"]);

    let served_board = get(&served, "/board.json");
    assert_eq!(served_board.status, 200, "{}", served_board.body);
    assert_eq!(
        served_board.header("content-type"),
        Some("application/json; charset=utf-8")
    );
    let printed = board(&repo, &["--json"]);
    printed.expect(0);
    assert_eq!(
        served_board.json(),
        printed.json(),
        "the page's data is board --json"
    );
    assert_eq!(served_board.json()["workflows"][0]["workflow"], "main");

    let page = http(
        served.port,
        "GET",
        "/",
        &format!("localhost:{}", served.port),
    );
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(page.header("content-security-policy"), Some(CSP));
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    assert!(
        page.body.contains(r#"<script src="/app.js""#),
        "{}",
        page.body
    );

    let script = get(&served, "/app.js");
    assert_eq!(script.status, 200);
    assert_eq!(
        script.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    assert!(script.body.contains("textContent"));
    assert!(
        !script.body.contains("innerHTML"),
        "data never becomes markup"
    );
    assert_eq!(
        get(&served, "/app.css").header("content-type"),
        Some("text/css; charset=utf-8")
    );

    // Nothing changes anything; nothing else is served; nobody else's name is answered.
    let post = http(
        served.port,
        "POST",
        "/board.json",
        &format!("127.0.0.1:{}", served.port),
    );
    assert_eq!(post.status, 405);
    assert_eq!(post.header("allow"), Some("GET, HEAD"));
    assert_eq!(get(&served, "/.git/config").status, 404);
    let rebound = http(served.port, "GET", "/board.json", "attacker.example");
    assert_eq!(rebound.status, 421);
    assert!(!rebound.body.contains("main"), "{}", rebound.body);
    let head = http(
        served.port,
        "HEAD",
        "/",
        &format!("127.0.0.1:{}", served.port),
    );
    assert_eq!((head.status, head.body.as_str()), (200, ""));

    // The tips stay while no ref moves, and change when one does.
    let tips = get(&served, "/tips").json()["tips"].clone();
    assert!(tips.as_str().is_some_and(|t| t.len() == 64), "{tips}");
    assert_eq!(get(&served, "/tips").json()["tips"], tips);
    repo.git(&["branch", "another"]);
    assert_ne!(get(&served, "/tips").json()["tips"], tips);
    repo.git(&["update-ref", "-d", "refs/heads/another"]);
    assert_eq!(get(&served, "/tips").json()["tips"], tips);
    repo.run(&["status", "--json"]).expect(0);
    assert_eq!(
        get(&served, "/tips").json()["tips"],
        tips,
        "a read moves nothing"
    );
}

#[test]
fn board_serve_binds_loopback_only_and_one_server_per_port() {
    let repo = TestRepo::new();
    for bind in ["0.0.0.0", "192.0.2.1", "::"] {
        let refused = board(&repo, &["--serve", "--bind", bind]);
        refused.expect(2);
        assert!(
            refused.stderr.contains("not a loopback address"),
            "{}",
            refused.stderr
        );
    }

    // What keeps the board from being read is said at once, not as an error page later.
    let unknown = board(&repo, &["--serve", "--remote", "nosuch"]);
    unknown.expect(2);
    assert!(unknown.stderr.contains("nosuch"), "{}", unknown.stderr);
    assert!(!unknown.stdout.contains("serving"), "{}", unknown.stdout);

    let first = serve(&repo, &["--bind", "localhost"]);
    let port = first.port.to_string();
    let second = board(&repo, &["--serve", "--port", &port]);
    assert_ne!(second.code, 0, "{}", second.stderr);
    assert!(
        second
            .stderr
            .contains(&format!("cannot listen on 127.0.0.1:{port}")),
        "{}",
        second.stderr
    );
    // The first one still answers.
    assert_eq!(get(&first, "/board.json").status, 200);
}

/// A PR title that is markup and quotes (a plan may not hold a bidi override; a master
/// plan's heading may: see [`HOSTILE_HEADING`]).
const HOSTILE: &str = "<script>alert(1)</script>\"'";

/// A master plan heading nobody took: markup, quotes and a right-to-left override.
const HOSTILE_HEADING: &str = "PR 2: <script>alert(1)</script>\"'\u{202e}";

/// A repository whose workflow plans the PR titled [`HOSTILE`], with [`HOSTILE_HEADING`]
/// free in its master plan.
fn hostile_repo() -> TestRepo {
    hostile_repo_with(crate::support::CONFIG)
}

/// [`hostile_repo`] with `config` as its `.orchestrate.toml`.
fn hostile_repo_with(config: &str) -> TestRepo {
    let repo = TestRepo::with_config(config);
    repo.write(
        "docs/plan.md",
        &format!("# Plan\n## PR 1: {HOSTILE}\n## {HOSTILE_HEADING}\n"),
    );
    repo.commit_all("a hostile master plan");
    let plan = serde_json::json!({
        "masterPlanPath": "docs/plan.md",
        "prTitle": HOSTILE,
        "summary": "s",
        "verificationPlan": "v",
        "tasks": [{"taskName": "t", "status": "TODO", "tdd_steps": [
            {"type": "RED", "description": "test </dd><img src=x onerror=alert(2)>", "status": "TODO"},
            {"type": "GREEN", "description": "make it", "status": "TODO"}]}]
    });
    repo.submit_plan(&plan.to_string()).expect(0);
    repo
}

#[test]
fn board_serve_carries_hostile_titles_verbatim_as_data() {
    let repo = hostile_repo();
    let served = serve(&repo, &[]);
    let report = get(&served, "/board.json").json();
    assert_eq!(report["workflows"][0]["pr_title"], HOSTILE);
    assert_eq!(report["unclaimed"][0]["heading"], HOSTILE_HEADING);
    // The page itself holds no data at all: it is the same bytes whatever the repository.
    let page = get(&served, "/");
    assert!(!page.body.contains("alert"), "{}", page.body);
    let script = get(&served, "/app.js").body;
    assert!(!script.contains("innerHTML"));
    assert!(!script.contains("insertAdjacentHTML"));
    assert!(!script.contains("document.write"));
}

/// Debian's Chromium, which `.ci/run` installs: missing, the test fails, saying so.
fn chromium() -> std::path::PathBuf {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .chain([std::path::PathBuf::from("/usr/bin")])
        .map(|dir| dir.join("chromium"))
        .find(|candidate| candidate.is_file());
    found.unwrap_or_else(|| {
        panic!("chromium is not installed: `apt-get install -y chromium` (.ci/run installs it)")
    })
}

/// The DOM of `url` once its script has run, as headless Chromium dumps it.
fn dump_dom(url: &str) -> String {
    let profile = tempfile::tempdir().expect("a profile directory");
    let mut child = std::process::Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=3000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(url)
        .env("HOME", profile.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut dom = String::new();
        let _ = stdout.read_to_string(&mut dom);
        dom
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not dump {url} within 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let dom = reader.join().expect("the DOM");
    assert!(status.success(), "chromium failed ({status}): {dom}");
    dom
}

/// The part of `dom` from the lane `key`'s opening tag to its end.
fn lane<'a>(dom: &'a str, key: &str) -> &'a str {
    let start = dom
        .find(&format!(r#"data-lane="{key}""#))
        .unwrap_or_else(|| panic!("no lane {key}: {dom}"));
    let rest = &dom[start..];
    &rest[..rest.find("</section>").unwrap_or(rest.len())]
}

#[test]
fn board_serve_page_in_headless_chromium_shows_cards_and_hostile_text_as_text() {
    // Answers must be signed: the gate shows the signing commands too.
    let repo = hostile_repo_with(&format!(
        "{}\n[human]\nrequire = \"signature\"\n",
        crate::support::CONFIG
    ));
    repo.run(&["get-task"]).expect(0);
    repo.run(&[
        "submit-work",
        "--summary",
        "stuck",
        "--contradiction",
        "the plan contradicts the tests",
    ])
    .expect(10);
    // A ticket beside it, its title markup too, its developer at work.
    repo.run(&[
        "--workflow",
        "tk",
        "ticket",
        "new",
        "--title",
        "Ship <b>it</b>",
    ])
    .expect(0);
    repo.run(&[
        "--workflow",
        "tk",
        "assign",
        "--mode",
        "implementation",
        "--goal",
        "write add.sh",
        "--acceptance-criteria",
        "add.sh prints 5",
        "--file-to-modify",
        "add.sh",
    ])
    .expect(0);
    let served = serve(&repo, &[]);
    let dom = dump_dom(&served.url);

    // The one HALTED workflow is a card in the halted lane, its title the hostile text as
    // text; the other lanes are there and empty.
    let halted = lane(&dom, "halted");
    assert!(halted.contains("Halted (1)"), "{halted}");
    assert!(
        halted.contains(r#"<article class="card halted" data-workflow="main">"#),
        "{halted}"
    );
    assert!(
        halted.contains(r#"<h3 class="title">&lt;script&gt;alert(1)&lt;/script&gt;"'</h3>"#),
        "{halted}"
    );
    // The ticket's developer at work is in the TDD lane.
    let tdd = lane(&dom, "tdd");
    assert!(tdd.contains("TDD (1)"), "{tdd}");
    assert!(
        tdd.contains(r#"<article class="card tdd" data-workflow="tk"><h3 class="title">Ship &lt;b&gt;it&lt;/b&gt;</h3>"#),
        "{tdd}"
    );
    assert!(tdd.contains("<dd>tk · ticket</dd>"), "{tdd}");
    assert!(tdd.contains("<dd>DEVELOPER</dd>"), "{tdd}");
    assert!(
        tdd.contains(r#"<dt>debugging attempt</dt><dd class="absent">not reported</dd>"#),
        "a ticket has no debugging attempts: {tdd}"
    );
    for (key, title) in [
        ("planning", "Planning"),
        ("review", "Review"),
        ("idle", "Idle"),
    ] {
        assert!(lane(&dom, key).contains(&format!("{title} (0)")), "{dom}");
    }
    assert!(halted.contains("<dd>HALTED</dd>"), "{halted}");
    // Driven by hand: a wall time (every commit at one time here: 0s), no turns, no tokens,
    // no cost, on the card and in the ledger table, as "not reported".
    assert!(
        halted.contains(
            r#"<dt>wall time</dt><dd>0s</dd><dt>turns</dt><dd class="absent">not reported</dd><dt>tokens</dt><dd class="absent">not reported</dd><dt>cost</dt><dd class="absent">not reported</dd>"#
        ),
        "{halted}"
    );
    let ledger = dom
        .split(r#"<tbody id="ledger-rows">"#)
        .nth(1)
        .and_then(|rest| rest.split("</tbody>").next())
        .expect("the ledger table");
    assert!(
        ledger.contains(
            r#"<tr class="workflow" data-workflow="main"><th>main: &lt;script&gt;alert(1)&lt;/script&gt;"'</th><td>0s</td><td>0</td><td class="absent">not reported</td><td class="absent">not reported</td><td class="absent">not reported</td>"#
        ),
        "{ledger}"
    );
    assert!(
        ledger.contains(r#"<tr class="workflow" data-workflow="tk">"#),
        "{ledger}"
    );
    assert!(
        halted.contains("<dd>1.1 RED: test &lt;/dd&gt;&lt;img src=x onerror=alert(2)&gt;</dd>"),
        "{halted}"
    );

    // The gate it waits at, with the exact command, and how to sign the answer.
    assert!(
        dom.contains(concat!(
            r#"<code class="command">git orchestrate --workflow main resume</code>"#,
            r#"<p class="sign-why">a signature is required ([human] require = "signature"); KEY is your SSH key:</p>"#,
            r#"<code class="sign-command">git orchestrate --workflow main resume --sign-key KEY</code>"#,
            r#"<p class="sign-why">or sign elsewhere:</p>"#,
            r#"<code class="sign-elsewhere">git orchestrate --workflow main resume --print-payload &gt; answer</code>"#,
            r#"<code class="sign-elsewhere">ssh-keygen -Y sign -n git-orchestrate -f KEY answer</code>"#,
            r#"<code class="sign-elsewhere">git orchestrate --workflow main resume --signature answer.sig</code>"#,
        )),
        "{dom}"
    );
    // The card's debugging attempt is the step's, now; the ledger's failed attempts are
    // summed over the steps: two names for two figures.
    assert!(
        halted.contains("<dt>debugging attempt</dt><dd>none</dd>"),
        "{halted}"
    );
    assert!(dom.contains("<th>failed attempts</th>"), "{dom}");
    // The free PR's heading: markup as text, the bidi override written out.
    assert!(
        dom.contains(r#"PR 2: &lt;script&gt;alert(1)&lt;/script&gt;"'\u{202e}</li>"#),
        "{dom}"
    );
    assert!(
        !dom.contains('\u{202e}'),
        "no raw override reaches the page"
    );
    // The only script element is the page's own; no markup came from the data.
    assert_eq!(dom.matches("<script").count(), 1, "{dom}");
    assert!(!dom.contains("<img"), "{dom}");
    assert!(
        dom.contains("2 workflow(s) here (no remote); main branch main"),
        "{dom}"
    );
}

/// Counts of what the browser asked through a [`Proxy`], and whether it may go on.
#[derive(Default)]
struct Seen {
    boards: usize,
    released: bool,
}

/// A proxy between the browser and the server: each request forwarded on a connection of
/// its own, its `Host` made the server's. It holds every `/tips` after the first
/// `/board.json` until released, so the test can move a ref between two polls; Chromium's
/// virtual clock stands still while a request is pending, so the page waits without a race.
struct Proxy {
    port: u16,
    seen: std::sync::Arc<(std::sync::Mutex<Seen>, std::sync::Condvar)>,
}

impl Proxy {
    fn start(server: u16) -> Proxy {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().expect("its address").port();
        let seen = std::sync::Arc::new((
            std::sync::Mutex::new(Seen::default()),
            std::sync::Condvar::new(),
        ));
        let shared = seen.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let seen = shared.clone();
                std::thread::spawn(move || forward(client, server, &seen));
            }
        });
        Proxy { port, seen }
    }

    /// Waits (up to 60 s) until the browser has fetched the board `n` times.
    fn wait_for_boards(&self, n: usize) {
        let (lock, changed) = &*self.seen;
        let seen = lock.lock().expect("lock");
        let (seen, timeout) = changed
            .wait_timeout_while(seen, Duration::from_secs(60), |s| s.boards < n)
            .expect("lock");
        assert!(
            !timeout.timed_out(),
            "the page fetched the board {} times",
            seen.boards
        );
    }

    fn release(&self) {
        let (lock, changed) = &*self.seen;
        lock.lock().expect("lock").released = true;
        changed.notify_all();
    }
}

fn forward(
    mut client: TcpStream,
    server: u16,
    seen: &(std::sync::Mutex<Seen>, std::sync::Condvar),
) {
    let mut reader = BufReader::new(client.try_clone().expect("clone the socket"));
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) if line == "\r\n" => break,
            Ok(_) => head.push(line.trim_end().to_string()),
        }
    }
    let Some(request_line) = head.first().cloned() else {
        return;
    };
    let path = request_line
        .split(' ')
        .nth(1)
        .unwrap_or_default()
        .to_string();
    let (lock, changed) = seen;
    if path.starts_with("/tips") {
        let guard = lock.lock().expect("lock");
        let _held = changed
            .wait_while(guard, |s| s.boards >= 1 && !s.released)
            .expect("lock");
    }
    let mut request =
        format!("{request_line}\r\nHost: 127.0.0.1:{server}\r\nConnection: close\r\n");
    for line in &head[1..] {
        let name = line
            .split(':')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        if name != "host" && name != "connection" {
            request.push_str(line);
            request.push_str("\r\n");
        }
    }
    request.push_str("\r\n");
    let mut upstream = TcpStream::connect(("127.0.0.1", server)).expect("reach the server");
    upstream.write_all(request.as_bytes()).expect("forward");
    let mut answer = Vec::new();
    let _ = upstream.read_to_end(&mut answer);
    let _ = client.write_all(&answer);
    let _ = client.shutdown(std::net::Shutdown::Both);
    if path.starts_with("/board.json") {
        lock.lock().expect("lock").boards += 1;
        changed.notify_all();
    }
}

#[test]
fn board_serve_page_follows_a_ref_that_moves_without_a_reload() {
    let repo = hostile_repo();
    repo.run(&["get-task"]).expect(0);
    let served = serve(&repo, &[]);
    let proxy = Proxy::start(served.port);
    let url = format!("http://127.0.0.1:{}/", proxy.port);
    let browser = std::thread::spawn(move || dump_dom(&url));

    // The page has drawn the board once, the workflow at work; then it halts.
    proxy.wait_for_boards(1);
    repo.run(&[
        "submit-work",
        "--summary",
        "stuck",
        "--contradiction",
        "the plan contradicts the tests",
    ])
    .expect(10);
    proxy.release();
    let dom = browser.join().expect("the DOM");

    assert!(lane(&dom, "tdd").contains("TDD (0)"), "{dom}");
    let halted = lane(&dom, "halted");
    assert!(halted.contains("Halted (1)"), "{dom}");
    assert!(halted.contains(r#"data-workflow="main""#), "{halted}");
    assert!(
        dom.contains(r#"<code class="command">git orchestrate --workflow main resume</code>"#),
        "{dom}"
    );
}

/// The (source, status) of each attestation a timeline entry lists.
fn check_entry_attestations(entry: &serde_json::Value) -> Vec<(String, String)> {
    entry["attestations"]
        .as_array()
        .expect("attestations")
        .iter()
        .map(|a| {
            (
                a["source"].as_str().unwrap_or_default().to_string(),
                a["status"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The repository `git orchestrate demo` leaves: one PR driven through RED, GREEN,
/// debugging, a scope reduction, an escalation and its answer, two review rounds, the squash
/// and the merge.
fn demo_repo() -> TestRepo {
    let mut repo = TestRepo::empty();
    let dir = repo.path.join("demo");
    repo.run(&["demo", "--dir", dir.to_str().expect("a UTF-8 path")])
        .expect(0);
    repo.path = dir;
    repo
}

#[test]
fn board_serve_timeline_in_headless_chromium_shows_every_transition_and_what_it_recorded() {
    let repo = demo_repo();
    // Two attestation notes on the squashed commit, as a clone may hold them: an unsigned
    // statement in this clone's notes, and markup that is no statement in the remote's.
    let squashed = board(&repo, &["--timeline", "main", "--json"]).json()["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .find_map(|e| e["squashed"].as_str().map(str::to_string))
        .expect("a squash");
    let statement = serde_json::json!({
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "commit", "digest": {"gitCommit": squashed}}],
        "predicateType": "https://slsa.dev/verification_summary/v1",
        "predicate": {"verificationResult": "PASSED"}
    });
    repo.git(&[
        "notes",
        "--ref=orchestrator-attest",
        "add",
        "-m",
        &statement.to_string(),
        &squashed,
    ]);
    repo.git(&[
        "notes",
        "--ref=remotes/origin/orchestrator-attest",
        "add",
        "-m",
        "<script>alert(3)</script>",
        &squashed,
    ]);
    let cli = board(&repo, &["--timeline", "main", "--json"]);
    cli.expect(0);
    let timeline = cli.json();
    let entries = timeline["entries"].as_array().expect("entries").clone();
    let served = serve(&repo, &[]);
    // The endpoint is `board --timeline --json`, byte for byte.
    assert_eq!(get(&served, "/workflow/main.json").body, cli.stdout);
    assert_eq!(get(&served, "/workflow/nosuch.json").status, 500);

    let first = |want: &dyn Fn(&serde_json::Value) -> bool| {
        entries
            .iter()
            .find(|e| want(e))
            .cloned()
            .unwrap_or_else(|| panic!("no such entry: {timeline}"))
    };
    let resume = first(&|e| e["event"] == "resume");
    let commit = |e: &serde_json::Value| e["commit"].as_str().expect("commit").to_string();
    let dom = dump_dom(&format!("{}#timeline=main@{}", served.url, commit(&resume)));
    let view = dom
        .split(r#"<section id="timeline" class="timeline""#)
        .nth(1)
        .and_then(|rest| rest.split("</section>").next())
        .expect("the timeline section");

    assert!(
        view.contains(&format!(
            "<h2>Timeline of main ({} transitions)</h2>",
            entries.len()
        )),
        "{view}"
    );
    // Every transition, in order, each with its time.
    let mut at = 0;
    for e in &entries {
        let id = format!(r#"id="t-{}""#, commit(e));
        let found = view[at..]
            .find(&id)
            .unwrap_or_else(|| panic!("{id} missing or out of order: {view}"));
        at += found;
    }
    // The transition the address points at is marked.
    assert!(
        view.contains(&format!(
            r#"<li class="entry resume focus" id="t-{}""#,
            commit(&resume)
        )),
        "{view}"
    );
    // A RED run's verdict, a failure's debugging attempt and tier, and the link back to it.
    assert!(
        view.contains("RED run, expected FAIL: sh tests/test_add.sh → exit 1 (as expected)"),
        "{view}"
    );
    let failure = first(&|e| e["to"] == "DEBUGGING" && e["from"] == "EXECUTING_TDD");
    assert!(
        view.contains(r#"<p class="debugging">debugging attempt 1, tier hypothesize</p>"#),
        "{view}"
    );
    assert!(
        view.contains(&format!(
            r##"<a class="link" href="#timeline=main@{}">debugging-since {}</a>"##,
            commit(&failure),
            &commit(&failure)[..12]
        )),
        "{view}"
    );
    // The human's guidance, kept in lines; a review's findings; the final check.
    assert!(
        view.contains("neg the SECOND operand: sub A B = add A (neg B). Your tries negated $1."),
        "{view}"
    );
    assert!(
        view.contains(
            "P3 lib/calc.sh: sub and neg have no usage comment (suggestion: document them like add)"
        ),
        "{view}"
    );
    let squash = first(&|e| e["event"] == "squash");
    let check = &squash["final_check"];
    assert!(
        view.contains(&format!(
            r#"<p class="final-check">final check: {}</p>"#,
            check["verification"].as_str().expect("verification")
        )),
        "{view}"
    );
    assert!(
        view.contains(
            "step 1.1: sh tests/test_add.sh — base exit 1, final exit 0; evidence: exit code only"
        ),
        "{view}"
    );
    // Each attestation note, judged as `verify` judges it: neither is signed by a listed
    // verifier, so neither counts, and the markup is no statement.
    let short = &squashed[..12];
    assert_eq!(
        check_entry_attestations(&squash),
        [
            ("local".to_string(), "unauthenticated".to_string()),
            ("origin".to_string(), "unauthenticated".to_string())
        ]
    );
    assert!(
        view.contains(&format!(
            r#"<p class="attestation unauthenticated unsigned">attestation (local) on {short}: UNAUTHENTICATED, not signed by a listed verifier: an unsigned PASSED verdict: whoever can write this clone's notes could have written it</p>"#
        )),
        "{view}"
    );
    assert!(
        view.contains(&format!(
            r#"<p class="attestation unauthenticated unsigned">attestation (server, origin) on {short}: UNAUTHENTICATED, not signed by a listed verifier: the note is not a statement: "#
        )),
        "{view}"
    );
    assert_eq!(dom.matches("<script").count(), 1, "{dom}");
}
