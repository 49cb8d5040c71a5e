//! A small HTTP server for the CLI's remote tests, on 127.0.0.1 and an
//! ephemeral port: files by path (from memory, or made up on the fly for
//! multi-GiB ones), Range and If-Range with an ETag, or no ranges at all,
//! a redirect to another server, a 401 without the right token, 503s.
//! Every request is logged with its headers, and the bytes it served
//! counted. [`BreakingServer`] breaks its answers off mid-body.

use std::collections::HashMap;
use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tiny_http::{Header, Response, Server};

/// A file's contents: bytes, or a header followed by zeros up to `len`.
#[derive(Clone)]
pub enum Body {
    Bytes(Arc<Vec<u8>>),
    Zeros { head: Arc<Vec<u8>>, len: u64 },
}

impl Body {
    fn len(&self) -> u64 {
        match self {
            Body::Bytes(b) => b.len() as u64,
            Body::Zeros { len, .. } => *len,
        }
    }
}

/// The bytes `start..end` of a body, counting what the server pulls.
struct Part {
    body: Body,
    pos: u64,
    end: u64,
    pulled: Arc<AtomicU64>,
}

impl Read for Part {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (self.end - self.pos).min(buf.len() as u64) as usize;
        for (i, b) in buf[..n].iter_mut().enumerate() {
            let at = self.pos + i as u64;
            *b = match &self.body {
                Body::Bytes(v) => v[at as usize],
                Body::Zeros { head, .. } => head.get(at as usize).copied().unwrap_or(0),
            };
        }
        self.pos += n as u64;
        self.pulled.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Logged {
    pub path: String,
    pub headers: Vec<(String, String)>,
}

impl Logged {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// How the server behaves.
#[derive(Default)]
pub struct Behaviour {
    /// Answer every request with 200 and the whole file.
    pub no_ranges: bool,
    /// Paths (prefixes) redirected (302) to this base URL, the rest of the path kept.
    pub redirect: Option<(String, String)>,
    /// Paths (prefixes) that need `Authorization: Bearer TOKEN`.
    pub gated: Option<(String, String)>,
    /// Redirects sign their URL (`?sig=N`), each signature good for one
    /// request (403 after), as an expired CDN URL.
    pub one_use_signatures: bool,
    /// The first this many requests are answered 503 Service Unavailable.
    pub fail_first: usize,
}

pub struct TestServer {
    pub base: String,
    files: Arc<Mutex<HashMap<String, (Body, String)>>>,
    log: Arc<Mutex<Vec<Logged>>>,
    pub pulled: Arc<AtomicU64>,
    server: Arc<Server>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.server.unblock();
    }
}

impl TestServer {
    pub fn start(behaviour: Behaviour) -> TestServer {
        let server = Arc::new(Server::http("127.0.0.1:0").expect("bind 127.0.0.1:0"));
        let base = format!("http://{}", server.server_addr());
        let files: Arc<Mutex<HashMap<String, (Body, String)>>> = Arc::default();
        let log: Arc<Mutex<Vec<Logged>>> = Arc::default();
        let pulled = Arc::new(AtomicU64::new(0));
        let state = State {
            files: files.clone(),
            log: log.clone(),
            pulled: pulled.clone(),
            behaviour: Arc::new(behaviour),
            signatures: Arc::default(),
            requests: Arc::default(),
        };
        {
            let server = server.clone();
            std::thread::spawn(move || {
                for request in server.incoming_requests() {
                    let state = state.clone();
                    std::thread::spawn(move || answer(request, &state));
                }
            });
        }
        TestServer {
            base,
            files,
            log,
            pulled,
            server,
        }
    }

    /// Serves `body` at `path` (starting with `/`), with ETag `etag`.
    pub fn put(&self, path: &str, body: Body, etag: &str) {
        self.files
            .lock()
            .unwrap()
            .insert(path.to_owned(), (body, etag.to_owned()));
    }

    pub fn put_bytes(&self, path: &str, bytes: Vec<u8>) {
        let etag = format!("\"{}-{}\"", bytes.len(), path.len());
        self.put(path, Body::Bytes(Arc::new(bytes)), &etag);
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn log(&self) -> Vec<Logged> {
        self.log.lock().unwrap().clone()
    }

    pub fn log_handle(&self) -> Arc<Mutex<Vec<Logged>>> {
        self.log.clone()
    }

    pub fn files_handle(&self) -> Arc<Mutex<HashMap<String, (Body, String)>>> {
        self.files.clone()
    }
}

/// The first and last byte a `Range` header (`bytes=A-B` or `bytes=A-`)
/// asks for of a body of `size` bytes, B cut to its last byte; None when
/// it asks for none of them.
fn byte_range(value: &str, size: u64) -> Option<(u64, u64)> {
    let (a, b) = value.strip_prefix("bytes=")?.split_once('-')?;
    let a: u64 = a.parse().ok()?;
    let last = size.checked_sub(1)?;
    let b: u64 = if b.is_empty() { last } else { b.parse().ok()? };
    Some((a, b.min(last))).filter(|(a, b)| a <= b)
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).unwrap()
}

/// What a request's thread shares with the server.
#[derive(Clone)]
struct State {
    files: Arc<Mutex<HashMap<String, (Body, String)>>>,
    log: Arc<Mutex<Vec<Logged>>>,
    pulled: Arc<AtomicU64>,
    behaviour: Arc<Behaviour>,
    /// The last signature made, and those not used yet.
    signatures: Arc<Mutex<(u64, Vec<u64>)>>,
    /// Requests so far.
    requests: Arc<AtomicUsize>,
}

fn answer(request: tiny_http::Request, state: &State) {
    let (files, log, pulled, behaviour) =
        (&state.files, &state.log, &state.pulled, &state.behaviour);
    let logged = Logged {
        path: request.url().to_owned(),
        headers: request
            .headers()
            .iter()
            .map(|h| (h.field.as_str().to_string(), h.value.as_str().to_owned()))
            .collect(),
    };
    let path = logged.path.split('?').next().unwrap_or_default().to_owned();
    // Looked up before the request is logged: a test that replaces a file
    // once a request is logged replaces it for the later ones only.
    let file = files.lock().unwrap().get(&path).cloned();
    log.lock().unwrap().push(logged.clone());
    if state.requests.fetch_add(1, Ordering::SeqCst) < behaviour.fail_first {
        let _ = request.respond(Response::empty(503));
        return;
    }
    if let Some((prefix, token)) = &behaviour.gated {
        if path.starts_with(prefix.as_str())
            && logged.header("Authorization") != Some(&format!("Bearer {token}"))
        {
            let _ = request
                .respond(Response::empty(401).with_header(header("X-Error-Code", "GatedRepo")));
            return;
        }
    }
    if let Some((prefix, to)) = &behaviour.redirect {
        if path.starts_with(prefix.as_str()) {
            let mut signatures = state.signatures.lock().unwrap();
            signatures.0 += 1;
            let sig = signatures.0;
            signatures.1.push(sig);
            let location = format!("{to}{}?sig={sig}", &path[prefix.len()..]);
            let _ =
                request.respond(Response::empty(302).with_header(header("Location", &location)));
            return;
        }
    }
    if behaviour.one_use_signatures && logged.path.contains("?sig=") {
        let sig: u64 = logged.path.rsplit("?sig=").next().unwrap().parse().unwrap();
        let mut signatures = state.signatures.lock().unwrap();
        let Some(i) = signatures.1.iter().position(|&s| s == sig) else {
            let _ = request.respond(Response::empty(403));
            return;
        };
        signatures.1.remove(i);
    }
    let Some((body, etag)) = file else {
        let _ = request
            .respond(Response::empty(404).with_header(header("X-Error-Code", "EntryNotFound")));
        return;
    };
    let size = body.len();
    let range = logged.header("Range").and_then(|r| byte_range(r, size));
    let if_range_ok = logged.header("If-Range").is_none_or(|v| v == etag);
    let etag_header = header("ETag", &etag);
    let (status, start, end, extra) = match range {
        Some((a, b)) if !behaviour.no_ranges && if_range_ok => (
            206,
            a,
            b + 1,
            Some(header("Content-Range", &format!("bytes {a}-{b}/{size}"))),
        ),
        _ => (200, 0, size, None),
    };
    let part = Part {
        body,
        pos: start,
        end,
        pulled: pulled.clone(),
    };
    let mut headers = vec![etag_header];
    headers.extend(extra);
    if !behaviour.no_ranges {
        headers.push(header("Accept-Ranges", "bytes"));
    }
    // Content-Length, not chunked, whatever the size: as a static server does.
    let response = Response::new(
        status.into(),
        headers,
        part,
        Some((end - start) as usize),
        None,
    )
    .with_chunked_threshold(usize::MAX);
    let _ = request.respond(response);
}

/// A server of one file whose answers break off, as a dropped download
/// does: each of the first `cuts` answers to a range from byte `from` on
/// sends `bytes` of its body (when it is longer), then closes the
/// connection (tiny_http keeps a connection open after an answer fails, so
/// this one is written by hand). Ranges only (206, with an ETag); the
/// Range of each request is logged.
pub struct BreakingServer {
    pub base: String,
    pub ranges: Arc<Mutex<Vec<String>>>,
}

impl BreakingServer {
    pub fn start(file: Vec<u8>, from: u64, bytes: u64, cuts: usize) -> BreakingServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let base = format!("http://{}", listener.local_addr().unwrap());
        let ranges: Arc<Mutex<Vec<String>>> = Arc::default();
        let file = Arc::new(file);
        let cutting = Arc::new(Cutting {
            from,
            bytes,
            cuts,
            made: AtomicUsize::new(0),
        });
        {
            let ranges = ranges.clone();
            std::thread::spawn(move || {
                for stream in listener.incoming().flatten() {
                    let (file, ranges, cutting) = (file.clone(), ranges.clone(), cutting.clone());
                    std::thread::spawn(move || {
                        let _ = serve_breaking(stream, &file, &cutting, &ranges);
                    });
                }
            });
        }
        BreakingServer { base, ranges }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

/// Which answers a [`BreakingServer`] cuts, and how many it has cut.
struct Cutting {
    from: u64,
    bytes: u64,
    cuts: usize,
    made: AtomicUsize,
}

/// Answers the requests of one connection (see [`BreakingServer`]).
fn serve_breaking(
    stream: std::net::TcpStream,
    file: &[u8],
    cutting: &Cutting,
    ranges: &Mutex<Vec<String>>,
) -> io::Result<()> {
    use std::io::{BufRead, Write};
    let mut reader = io::BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    let size = file.len() as u64;
    loop {
        let mut range = None;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((name, value)) = l.split_once(':') {
                if name.eq_ignore_ascii_case("Range") {
                    range = Some(value.trim().to_owned());
                }
            }
        }
        let range = range.unwrap_or_default();
        ranges.lock().unwrap().push(range.clone());
        let (a, b) = byte_range(&range, size).expect("a Range request");
        let length = b + 1 - a;
        let cut = a >= cutting.from
            && length > cutting.bytes
            && cutting.made.fetch_add(1, Ordering::SeqCst) < cutting.cuts;
        let send = if cut { cutting.bytes } else { length };
        write!(
            writer,
            "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {a}-{b}/{size}\r\n\
             Content-Length: {length}\r\nETag: \"v1\"\r\nAccept-Ranges: bytes\r\n\r\n"
        )?;
        writer.write_all(&file[a as usize..(a + send) as usize])?;
        writer.flush()?;
        if send < length {
            return writer.shutdown(std::net::Shutdown::Both);
        }
    }
}
