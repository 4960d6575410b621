//! `board --serve`: the board as a live web page, served read-only on a loopback address
//! (docs/board.md). It is one more way of showing the board, as the table and `--json` are,
//! so it lives with them: `/board.json` is the `board --json` text, and the page (plain
//! HTML, CSS and a script, embedded in the binary) draws it. Nothing here writes.
//!
//! Every string in the board came from a repository or a remote, so it is hostile: the
//! server never puts one into HTML (the page is static), the script builds the DOM with
//! `textContent` only, and a strict Content-Security-Policy forbids anything else. A request
//! whose `Host` is not this server's loopback name is refused: a web page on another site
//! cannot reach the board by pointing its own DNS name at 127.0.0.1 (DNS rebinding).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use tiny_http::{Header, Request, Response, Server, StatusCode};

use super::render::{error_text, report_json};
use super::{CommandError, ErrorKind, Exit, Failure, Ui};
use crate::engine::{self, Session};

const PAGE: &str = include_str!("board_page/index.html");
const SCRIPT: &str = include_str!("board_page/app.js");
const STYLE: &str = include_str!("board_page/app.css");

/// Nothing but this server's own script, style and JSON: no inline script, no other origin,
/// no framing, no forms.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                   connect-src 'self'; img-src 'self'; base-uri 'none'; \
                   form-action 'none'; frame-ancestors 'none'";

/// What a request may be answered with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Asset {
    Page,
    Script,
    Style,
    /// The whole board, as `board --json` prints it.
    Board,
    /// The fingerprint of the refs the board is made of: the page polls it, and fetches the
    /// board again only when it changed.
    Tips,
}

/// How a request is answered, decided from its method, path and `Host` alone.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Answer {
    Serve(Asset),
    /// `/workflow/<name>.json`: that workflow's timeline (`board --timeline NAME --json`).
    Timeline(String),
    /// 421: the `Host` is not this server's (a rebound DNS name, or none).
    WrongHost,
    /// 405: only GET and HEAD; nothing here changes anything.
    WrongMethod,
    NotFound,
}

/// Decides how to answer `method` on `url` sent to `host`; `hosts` are the names this server
/// answers to (`127.0.0.1:PORT`, `localhost:PORT`).
fn route(method: &str, url: &str, host: Option<&str>, hosts: &[String]) -> Answer {
    if !host.is_some_and(|host| hosts.iter().any(|h| h.eq_ignore_ascii_case(host.trim()))) {
        return Answer::WrongHost;
    }
    if method != "GET" && method != "HEAD" {
        return Answer::WrongMethod;
    }
    // The query (a cache-buster, say) does not change what is served.
    let path = url.split(['?', '#']).next().unwrap_or_default();
    match path {
        "/" | "/index.html" => Answer::Serve(Asset::Page),
        "/app.js" => Answer::Serve(Asset::Script),
        "/app.css" => Answer::Serve(Asset::Style),
        "/board.json" => Answer::Serve(Asset::Board),
        "/tips" => Answer::Serve(Asset::Tips),
        _ => match path
            .strip_prefix("/workflow/")
            .and_then(|rest| rest.strip_suffix(".json"))
            .and_then(percent_decoded)
        {
            Some(name) if !name.is_empty() => Answer::Timeline(name),
            _ => Answer::NotFound,
        },
    }
}

/// A URL path segment's text: `%XX` escapes decoded; `None` when one is malformed or the
/// result is not UTF-8 (no such workflow).
fn percent_decoded(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The address `--bind` names, refused unless it is a loopback one: the board shows paths,
/// user names and titles that are nobody else's business, and has no authentication.
fn bind_address(bind: &str) -> Result<IpAddr, Failure> {
    let ip = if bind.eq_ignore_ascii_case("localhost") {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        bind.parse::<IpAddr>().map_err(|_| {
            CommandError::usage(format!(
                "--bind {bind:?} is not an IP address: board --serve binds to a loopback address only"
            ))
            .hint("Leave --bind out (127.0.0.1), or give another loopback address such as ::1.")
        })
        .map_err(Failure::from)?
    };
    if !ip.is_loopback() {
        return Err(Failure::from(CommandError::usage(format!(
            "--bind {ip} is not a loopback address: board --serve binds to a loopback address only, as the board has no authentication"
        ))
        .hint("Leave --bind out (127.0.0.1). To look from another machine, forward a port over ssh (ssh -L).")));
    }
    Ok(ip)
}

/// The `Host` values a browser sends to `addr`.
fn host_names(addr: SocketAddr) -> Vec<String> {
    let port = addr.port();
    let mut hosts = vec![addr.to_string(), format!("localhost:{port}")];
    if addr.ip() == IpAddr::V4(Ipv4Addr::LOCALHOST) {
        hosts.push(format!("127.0.0.1:{port}"));
    }
    hosts
}

/// Serves the board until the process is ended. `open` opens a fresh session for each
/// request that reads the repository, so each answer is what `board` would say now; a
/// request for the page itself reads nothing, and nothing reads git while nobody asks.
/// `bind` and `port` are `--bind` and `--port`, `remote` is `--remote`.
pub fn serve(
    open: &dyn Fn() -> Result<Session, Failure>,
    remote: Option<&str>,
    (bind, port): (Option<&str>, u16),
    ui: &mut Ui,
) -> Result<Exit, Failure> {
    let ip = bind_address(bind.unwrap_or("127.0.0.1"))?;
    // Whatever keeps the board from being read (not a repository, an unknown remote) is said
    // now, not as an error page later.
    engine::board(&open()?, remote)?;
    let wanted = SocketAddr::new(ip, port);
    let server = Server::http(wanted).map_err(|e| {
        CommandError::new(
            ErrorKind::Io,
            format!("board --serve cannot listen on {wanted} (port {port}): {e}"),
        )
        .hint("Another program (another `board --serve`?) may hold that port: pick another with --port, or --port 0 for any free one.")
    })?;
    let addr = server.server_addr().to_ip().unwrap_or(wanted);
    let url = format!("http://{addr}/");
    if ui.json {
        ui.json_object(serde_json::json!({ "url": url }))?;
    } else {
        ui.text(&format!("board: serving {url}"))?;
    }
    let hosts = host_names(addr);
    for request in server.incoming_requests() {
        answer(request, open, remote, &hosts);
    }
    Ok(Exit::Success)
}

/// Answers one request. A client that went away is no error of the server's.
fn answer(
    request: Request,
    open: &dyn Fn() -> Result<Session, Failure>,
    remote: Option<&str>,
    hosts: &[String],
) {
    let host = request
        .headers()
        .iter()
        .find(|h| h.field.equiv("Host"))
        .map(|h| h.value.as_str());
    let decision = route(request.method().as_str(), request.url(), host, hosts);
    let (status, content_type, body) = match &decision {
        Answer::WrongHost => (
            421,
            TEXT,
            "this board answers to 127.0.0.1 and localhost only\n".to_string(),
        ),
        Answer::WrongMethod => (
            405,
            TEXT,
            "the board is read-only: GET or HEAD\n".to_string(),
        ),
        Answer::NotFound => (404, TEXT, "not found\n".to_string()),
        Answer::Serve(asset) => content(*asset, open, remote),
        Answer::Timeline(name) => read(|| {
            let report = engine::timeline(&open()?, name, remote)?;
            Ok(report_json(&report)?)
        }),
    };
    let mut response = Response::from_data(body.into_bytes()).with_status_code(StatusCode(status));
    let allow = (decision == Answer::WrongMethod).then_some(("Allow", "GET, HEAD"));
    for (name, value) in HEADERS
        .into_iter()
        .chain([("Content-Type", content_type)])
        .chain(allow)
    {
        if let Some(header) = header(name, value) {
            response.add_header(header);
        }
    }
    let _ = request.respond(response);
}

const TEXT: &str = "text/plain; charset=utf-8";
const JSON: &str = "application/json; charset=utf-8";

/// Sent with every answer: no sniffing a type the server did not name, no caching of a
/// board that moves, no framing, no referrer to anyone.
const HEADERS: [(&str, &str); 5] = [
    ("Content-Security-Policy", CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("Cache-Control", "no-store"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "no-referrer"),
];

/// A header from the constants above: ASCII, so it always builds (a test holds that).
fn header(name: &str, value: &str) -> Option<Header> {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
}

/// An asset's status, type and body; a board that cannot be read is a 500 saying why.
fn content(
    asset: Asset,
    open: &dyn Fn() -> Result<Session, Failure>,
    remote: Option<&str>,
) -> (u16, &'static str, String) {
    match asset {
        Asset::Page => (200, "text/html; charset=utf-8", PAGE.to_string()),
        Asset::Script => (200, "text/javascript; charset=utf-8", SCRIPT.to_string()),
        Asset::Style => (200, "text/css; charset=utf-8", STYLE.to_string()),
        Asset::Board => read(|| {
            let report = engine::board(&open()?, remote)?;
            Ok(report_json(&report)?)
        }),
        Asset::Tips => read(|| {
            let tips = engine::board_fingerprint(&open()?)?;
            Ok(serde_json::json!({ "tips": tips }).to_string())
        }),
    }
}

/// A read of the repository as an answer: its JSON, or a 500 with the error as the command
/// line would print it (plain text, which nosniff keeps from being taken for markup).
fn read(f: impl FnOnce() -> Result<String, Failure>) -> (u16, &'static str, String) {
    match f() {
        Ok(json) => (200, JSON, json),
        Err(Failure::Command(e)) => (500, TEXT, error_text(&e, false)),
        Err(Failure::Output(e)) => (500, TEXT, format!("error: {e}\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn hosts() -> Vec<String> {
        host_names(SocketAddr::from(([127, 0, 0, 1], 8080)))
    }

    #[test]
    fn only_reads_of_known_paths_on_this_servers_own_name_are_served() {
        let h = hosts();
        let cases = [
            (
                "GET",
                "/",
                Some("127.0.0.1:8080"),
                Answer::Serve(Asset::Page),
            ),
            (
                "HEAD",
                "/",
                Some("LOCALHOST:8080"),
                Answer::Serve(Asset::Page),
            ),
            (
                "GET",
                "/app.js",
                Some("localhost:8080"),
                Answer::Serve(Asset::Script),
            ),
            (
                "GET",
                "/app.css",
                Some("localhost:8080"),
                Answer::Serve(Asset::Style),
            ),
            (
                "GET",
                "/board.json?x=1",
                Some("localhost:8080"),
                Answer::Serve(Asset::Board),
            ),
            (
                "GET",
                "/tips",
                Some("localhost:8080"),
                Answer::Serve(Asset::Tips),
            ),
            (
                "GET",
                "/../etc/passwd",
                Some("localhost:8080"),
                Answer::NotFound,
            ),
            (
                "POST",
                "/board.json",
                Some("localhost:8080"),
                Answer::WrongMethod,
            ),
            ("DELETE", "/", Some("localhost:8080"), Answer::WrongMethod),
            ("GET", "/", Some("evil.example:8080"), Answer::WrongHost),
            ("GET", "/", Some("127.0.0.1:8081"), Answer::WrongHost),
            ("GET", "/", Some("127.0.0.1"), Answer::WrongHost),
            ("POST", "/", None, Answer::WrongHost),
            (
                "GET",
                "/workflow/a%20b.json?x",
                Some("localhost:8080"),
                Answer::Timeline("a b".into()),
            ),
            (
                "GET",
                "/workflow/.json",
                Some("localhost:8080"),
                Answer::NotFound,
            ),
            (
                "GET",
                "/workflow/%zz.json",
                Some("localhost:8080"),
                Answer::NotFound,
            ),
            (
                "GET",
                "/workflow/%ff.json",
                Some("localhost:8080"),
                Answer::NotFound,
            ),
        ];
        for (method, url, host, want) in cases {
            assert_eq!(
                route(method, url, host, &h),
                want,
                "{method} {url} {host:?}"
            );
        }
    }

    #[test]
    fn only_loopback_addresses_are_bound() {
        assert_eq!(
            bind_address("127.0.0.1").ok(),
            Some(IpAddr::V4(Ipv4Addr::LOCALHOST))
        );
        assert_eq!(
            bind_address("localhost").ok(),
            Some(IpAddr::V4(Ipv4Addr::LOCALHOST))
        );
        assert!(bind_address("::1").is_ok());
        for refused in ["0.0.0.0", "::", "192.168.1.2", "example.com", ""] {
            let Err(Failure::Command(err)) = bind_address(refused) else {
                panic!("{refused} is bound");
            };
            assert_eq!(err.exit(), Exit::Usage, "{refused}");
            assert!(err.message.contains("loopback"), "{}", err.message);
        }
    }

    #[test]
    fn every_header_builds() {
        for (name, value) in HEADERS {
            let header = header(name, value).expect(name);
            assert_eq!(header.field.as_str().as_str(), name);
        }
    }

    #[test]
    fn the_script_never_writes_markup() {
        for word in [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
        ] {
            assert!(!SCRIPT.contains(word), "app.js uses {word}");
        }
        assert!(
            !PAGE.contains("<script>"),
            "no inline script: the CSP forbids it"
        );
        assert!(
            !PAGE.contains("style="),
            "no inline style: the CSP forbids it"
        );
    }
}
