//! A small HTTP server for the CLI's remote tests, on 127.0.0.1 and an
//! ephemeral port: files by path (from memory, or made up on the fly for
//! multi-GiB ones), Range and If-Range with an ETag, or no ranges at all,
//! a redirect to another server, a 401 without the right token. Every
//! request is logged with its headers, and the bytes it served counted.

use std::collections::HashMap;
use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};
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
    let range = logged
        .header("Range")
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.split_once('-'))
        .and_then(|(a, b)| {
            let a: u64 = a.parse().ok()?;
            let b: u64 = if b.is_empty() {
                size.checked_sub(1)?
            } else {
                b.parse().ok()?
            };
            Some((a, b.min(size.checked_sub(1)?)))
        })
        .filter(|(a, b)| a <= b);
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
