//! `inspect`, `verify` and `diff` of http:// URLs through the built binary,
//! against a server in the test (tests/server) that logs every request:
//! the same output as for the file on disk, headers read by ranges (one
//! request for most files, two for a header past the first one), a server
//! without ranges dropped after the header, a file replaced meanwhile
//! refused, the token only for the Hub endpoint's origin, and errors.
#![cfg(feature = "http")]

mod server;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use safetensors_nano::Dtype;
use safetensors_nano_test_support::tensors::{write, Owned};
use serde_json::Value;
use server::{Behaviour, Body, BreakingServer, TestServer};

const BIN: &str = env!("CARGO_BIN_EXE_safetensors-nano");

/// The CLI with no Hub settings from the environment.
fn cli(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .env_remove("HF_TOKEN")
        .env_remove("HF_ENDPOINT")
        .env("HF_HOME", "/nonexistent/hf-home");
    c
}

fn run(args: &[&str]) -> Output {
    cli(args).output().expect("run the CLI")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

/// Tensors of several dtypes, one larger than the first request (256 KiB)
/// and than the hashing buffer (1 MiB).
fn sample() -> Vec<u8> {
    let tensors = vec![
        Owned::seeded("embed".into(), Dtype::F32, vec![16, 8], 1),
        Owned::seeded("big".into(), Dtype::U8, vec![3 << 20], 2),
        Owned::seeded("bias".into(), Dtype::BF16, vec![5], 3),
        Owned::seeded("step".into(), Dtype::I64, vec![], 4),
    ];
    write(&tensors, Some(&[("format".into(), "pt".into())])).unwrap()
}

/// A header with `n` tiny tensors, followed by zeros: (header bytes, file length).
fn many_tensors(n: u64) -> (Vec<u8>, u64) {
    let entries: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#""t{i:06}":{{"dtype":"U8","shape":[1],"data_offsets":[{i},{}]}}"#,
                i + 1
            )
        })
        .collect();
    let json = format!("{{{}}}", entries.join(","));
    let mut head = (json.len() as u64).to_le_bytes().to_vec();
    head.extend_from_slice(json.as_bytes());
    let len = head.len() as u64 + n;
    (head, len)
}

fn local(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn inspect_json_of_a_url_equals_the_file_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = sample();
    let path = local(dir.path(), "m.safetensors", &bytes);
    let server = TestServer::start(Behaviour::default());
    server.put_bytes("/m.safetensors", bytes.clone());
    let url = server.url("/m.safetensors");

    // URLs are not hashed unless asked: the same as --no-hash on disk.
    assert_eq!(
        ok(&run(&["inspect", "--json", &url])),
        ok(&run(&["inspect", "--json", "--no-hash", &path]))
    );
    let log = server.log();
    assert_eq!(log.len(), 1, "one request for a small header: {log:?}");
    assert_eq!(log[0].header("Range"), Some("bytes=0-262143"));
    assert!(server.pulled.load(Ordering::Relaxed) <= 256 << 10);

    // --hash streams the data: the same digests as on disk.
    let before = server.log().len();
    assert_eq!(
        ok(&run(&["inspect", "--json", "--hash", &url])),
        ok(&run(&["inspect", "--json", &path]))
    );
    let log = server.log();
    assert!(
        log[before + 1..]
            .iter()
            .all(|r| r.header("If-Range").is_some()),
        "every later request pinned: {log:?}"
    );

    // The table names the URL.
    let table = ok(&run(&["inspect", &url]));
    assert!(table.starts_with(&format!("{url}: 4 tensors")), "{table}");

    // verify and diff --values too.
    let v = json(&run(&["verify", "--json", "--hash", &url]));
    let local_v = json(&run(&["verify", "--json", "--hash", &path]));
    assert_eq!(v["sha256"], local_v["sha256"]);
    assert_eq!(v["bytes"], bytes.len() as u64);
    let d = json(&run(&["diff", "--json", "--values", &path, &url]));
    assert_eq!(d["ok"], true);
    for t in d["values"].as_array().unwrap() {
        assert_eq!(t["changed"], 0, "{t}");
    }
}

#[test]
fn a_sharded_checkpoint_by_url_equals_it_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let original = local(dir.path(), "m.safetensors", &sample());
    let shards = dir.path().join("shards");
    ok(&run(&[
        "split",
        &original,
        "-o",
        shards.to_str().unwrap(),
        "--max-shard-size",
        "1MB",
    ]));
    let server = TestServer::start(Behaviour::default());
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&shards).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        server.put_bytes(
            &format!("/a/{name}"),
            std::fs::read(shards.join(&name)).unwrap(),
        );
        names.push(name);
    }
    assert!(names.len() >= 3, "{names:?}");
    let index = shards.join("model.safetensors.index.json");
    let index = index.to_str().unwrap();
    let url = server.url("/a/model.safetensors.index.json");
    assert_eq!(
        ok(&run(&["inspect", "--json", &url])),
        ok(&run(&["inspect", "--json", "--no-hash", index]))
    );
    assert_eq!(
        ok(&run(&["inspect", "--json", "--hash", &url])),
        ok(&run(&["inspect", "--json", index]))
    );
    let v = json(&run(&["verify", "--json", &url]));
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["shards"], names.len() - 1);

    // diff and edit read the sharded model by URL as one model, by ranges:
    // the same as from disk.
    let d = json(&run(&[
        "diff",
        "--json",
        "--values",
        "--exit-code",
        &original,
        &url,
    ]));
    assert_eq!(d["same"], 4, "{d}");
    assert!(
        d["values"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["changed"] == 0),
        "{d}"
    );
    let edited_remote = dir.path().join("remote-edit.safetensors");
    let edited_local = dir.path().join("local-edit.safetensors");
    for (input, out) in [
        (url.as_str(), &edited_remote),
        (original.as_str(), &edited_local),
    ] {
        ok(&run(&[
            "edit",
            "-q",
            input,
            out.to_str().unwrap(),
            "--drop",
            "^big$",
        ]));
    }
    assert_eq!(
        std::fs::read(&edited_remote).unwrap(),
        std::fs::read(&edited_local).unwrap()
    );

    // The same from a server without ranges.
    let plain = TestServer::start(Behaviour {
        no_ranges: true,
        ..Behaviour::default()
    });
    for name in &names {
        plain.put_bytes(
            &format!("/a/{name}"),
            std::fs::read(shards.join(name)).unwrap(),
        );
    }
    assert_eq!(
        ok(&run(&[
            "inspect",
            "--json",
            &plain.url("/a/model.safetensors.index.json")
        ])),
        ok(&run(&["inspect", "--json", "--no-hash", index]))
    );

    // A shard missing: a problem naming it, the others still checked.
    let gone = names.iter().find(|n| n.ends_with(".safetensors")).unwrap();
    server
        .files_handle()
        .lock()
        .unwrap()
        .remove(&format!("/a/{gone}"));
    let out = run(&["verify", "--json", &url]);
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{v}");
    let problem = problems[0].as_str().unwrap();
    assert!(
        problem.contains(gone.as_str()) && problem.contains("missing"),
        "{problem}"
    );
    // The same finding as the package's checkShards: a shard that answers 404 is missing.
    let findings = v["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{v}");
    assert_eq!(findings[0]["kind"], "missingShard", "{v}");
    assert_eq!(findings[0]["file"], gone.as_str(), "{v}");
}

#[test]
fn a_header_past_the_first_request_takes_one_more_range() {
    let (head, len) = many_tensors(30_000);
    assert!(head.len() > 256 << 10);
    let server = TestServer::start(Behaviour::default());
    server.put(
        "/many.safetensors",
        Body::Zeros {
            head: Arc::new(head.clone()),
            len,
        },
        "\"v1\"",
    );
    let out = run(&["inspect", "--json", &server.url("/many.safetensors")]);
    let doc = json(&out);
    assert_eq!(doc["tensors"].as_array().unwrap().len(), 30_000);
    let log = server.log();
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(
        log[1].header("Range"),
        Some(format!("bytes=262144-{}", head.len() - 1).as_str())
    );
    assert_eq!(log[1].header("If-Range"), Some("\"v1\""));
}

/// A 2 GiB file: one U8 tensor after a small header.
fn two_gib() -> Body {
    let data = 2u64 << 30;
    let json = format!(r#"{{"big":{{"dtype":"U8","shape":[{data}],"data_offsets":[0,{data}]}}}}"#);
    let mut head = (json.len() as u64).to_le_bytes().to_vec();
    head.extend_from_slice(json.as_bytes());
    let len = head.len() as u64 + data;
    Body::Zeros {
        head: Arc::new(head),
        len,
    }
}

#[test]
fn a_server_without_ranges_gives_the_header_and_is_dropped() {
    let server = TestServer::start(Behaviour {
        no_ranges: true,
        ..Behaviour::default()
    });
    let body = two_gib();
    let Body::Zeros { len, .. } = &body else {
        unreachable!()
    };
    let len = *len;
    server.put("/big.safetensors", body, "\"big\"");
    let url = server.url("/big.safetensors");
    let v = json(&run(&["verify", "--json", &url]));
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["bytes"], len);
    let doc = json(&run(&["inspect", "--json", &url]));
    assert_eq!(doc["tensors"][0]["shape"][0], 2u64 << 30);
    // Let the server notice the closed connections.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let pulled = server.pulled.load(Ordering::Relaxed);
    assert!(pulled < 8 << 20, "{pulled} bytes served for two headers");
}

#[test]
fn hashing_from_a_server_without_ranges_streams_one_body() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = sample();
    let path = local(dir.path(), "m.safetensors", &bytes);
    let server = TestServer::start(Behaviour {
        no_ranges: true,
        ..Behaviour::default()
    });
    server.put_bytes("/m.safetensors", bytes);
    let url = server.url("/m.safetensors");
    assert_eq!(
        ok(&run(&["inspect", "--json", "--hash", &url])),
        ok(&run(&["inspect", "--json", &path]))
    );
    assert_eq!(server.log().len(), 1, "{:?}", server.log());
}

#[test]
fn python_http_server_which_ignores_range_works() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = sample();
    let path = local(dir.path(), "m.safetensors", &bytes);
    let mut child = Command::new("python3")
        .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("python3");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    let port = line
        .split("port ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("python prints its port")
        .to_owned();
    let url = format!("http://127.0.0.1:{port}/m.safetensors");
    let remote = run(&["inspect", "--json", "--hash", &url]);
    let missing = run(&[
        "inspect",
        &format!("http://127.0.0.1:{port}/none.safetensors"),
    ]);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(ok(&remote), ok(&run(&["inspect", "--json", &path])));
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("not found"));
}

#[test]
fn a_file_replaced_while_read_is_refused() {
    let bytes = sample();
    let server = TestServer::start(Behaviour::default());
    server.put(
        "/m.safetensors",
        Body::Bytes(Arc::new(bytes.clone())),
        "\"v1\"",
    );
    let mut other = bytes;
    let last = other.len() - 1;
    other[last] ^= 1;
    // The header comes from v1; the data requests (If-Range "v1") find v2.
    let watcher = ReplaceAfterFirst::new(&server, other);
    let out = run(&["inspect", "--json", "--hash", &server.url("/m.safetensors")]);
    watcher.stop();
    let doc = json(&out);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(doc["error"]["kind"], "SourceChanged", "{doc}");
    assert!(doc["error"]["message"]
        .as_str()
        .unwrap()
        .contains("changed since it was opened"));
    assert!(server.log().len() >= 2);
}

/// Replaces `/m.safetensors` with `other` (ETag "v2") as soon as the
/// server has logged its first request.
struct ReplaceAfterFirst {
    done: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ReplaceAfterFirst {
    fn new(server: &TestServer, other: Vec<u8>) -> Self {
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let log = server.log_handle();
        let files = server.files_handle();
        let thread = std::thread::spawn({
            let done = done.clone();
            move || {
                while !done.load(Ordering::Relaxed) {
                    if !log.lock().unwrap().is_empty() {
                        files.lock().unwrap().insert(
                            "/m.safetensors".into(),
                            (Body::Bytes(Arc::new(other)), "\"v2\"".into()),
                        );
                        return;
                    }
                    std::thread::yield_now();
                }
            }
        });
        ReplaceAfterFirst {
            done,
            thread: Some(thread),
        }
    }

    fn stop(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

#[test]
fn the_token_goes_to_the_endpoint_origin_only() {
    let cdn = TestServer::start(Behaviour::default());
    let bytes = sample();
    cdn.put_bytes("/files/m.safetensors", bytes.clone());
    let endpoint = TestServer::start(Behaviour {
        redirect: Some(("/org/".into(), cdn.url("/files/"))),
        gated: Some(("/org/".into(), "secret".into())),
        ..Behaviour::default()
    });
    let url = endpoint.url("/org/m.safetensors");
    let with_token = |args: &[&str]| {
        cli(args)
            .env("HF_ENDPOINT", &endpoint.base)
            .env("HF_TOKEN", "secret")
            .output()
            .unwrap()
    };
    ok(&with_token(&["inspect", "--hash", &url]));
    assert!(endpoint
        .log()
        .iter()
        .all(|r| r.header("Authorization") == Some("Bearer secret")));
    let cdn_log = cdn.log();
    assert!(cdn_log.len() >= 2, "header, then data: {cdn_log:?}");
    assert!(
        cdn_log.iter().all(|r| r.header("Authorization").is_none()),
        "{cdn_log:?}"
    );
    // A URL on another origin than HF_ENDPOINT's gets no token either.
    ok(&with_token(&["inspect", &cdn.url("/files/m.safetensors")]));
    assert!(cdn
        .log()
        .iter()
        .all(|r| r.header("Authorization").is_none()));
    // Without the token the endpoint answers 401: the Hub's kind, with advice.
    let out = cli(&["inspect", "--json", &url])
        .env("HF_ENDPOINT", &endpoint.base)
        .output()
        .unwrap();
    let doc = json(&out);
    assert_eq!(doc["error"]["kind"], "HubUnauthorized", "{doc}");
    assert!(doc["error"]["message"]
        .as_str()
        .unwrap()
        .contains("set HF_TOKEN"));
    // The same answer from a server that is not the Hub: an HTTP error.
    let doc = json(&run(&["inspect", "--json", &url]));
    assert_eq!(doc["error"]["kind"], "Http", "{doc}");
}

#[test]
fn errors_are_typed_and_name_the_problem() {
    let server = TestServer::start(Behaviour::default());
    let missing = run(&["inspect", "--json", &server.url("/none.safetensors")]);
    assert_eq!(missing.status.code(), Some(1));
    // Not the Hub: an HTTP error, naming the URL.
    let doc = json(&missing);
    assert_eq!(doc["error"]["kind"], "Http");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("not found (HTTP 404") && message.contains("/none.safetensors"),
        "{message}"
    );
    // Nothing listens on a port just freed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = run(&["verify", &format!("http://127.0.0.1:{port}/m.safetensors")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("127.0.0.1"));
    let out = run(&["diff", "http://", "x.safetensors"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a valid URL"));
    // Not a safetensors file: the format error, as for a file on disk.
    server.put_bytes(
        "/bad.safetensors",
        b"\xff\xff\xff\xff\xff\xff\xff\x7fxx".to_vec(),
    );
    let bad = json(&run(&[
        "inspect",
        "--json",
        &server.url("/bad.safetensors"),
    ]));
    assert_eq!(bad["error"]["kind"], "HeaderTooLarge", "{bad}");
}

#[test]
fn an_expired_signed_url_is_asked_for_again() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = sample();
    let path = local(dir.path(), "m.safetensors", &bytes);
    // A redirect to a path on the same server (a relative Location),
    // signed for one request.
    let server = TestServer::start(Behaviour {
        one_use_signatures: true,
        redirect: Some(("/org/".into(), "/files/".into())),
        ..Behaviour::default()
    });
    server.put_bytes("/files/m.safetensors", bytes);
    let url = server.url("/org/m.safetensors");
    assert_eq!(
        ok(&run(&["inspect", "--json", "--hash", &url])),
        ok(&run(&["inspect", "--json", &path]))
    );
    let paths: Vec<String> = server.log().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        [
            "/org/m.safetensors",
            "/files/m.safetensors?sig=1",
            "/files/m.safetensors?sig=1",
            "/org/m.safetensors",
            "/files/m.safetensors?sig=2",
        ],
        "the header; the data: a 403, then the URL asked again"
    );
}

#[test]
fn transient_failures_are_tried_again_and_a_broken_body_resumes_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = sample();
    let path = local(dir.path(), "m.safetensors", &bytes);
    let on_disk = ok(&run(&["inspect", "--json", &path]));
    let last = bytes.len() - 1;

    // Two 503s: the first request is made three times.
    let server = TestServer::start(Behaviour {
        fail_first: 2,
        ..Behaviour::default()
    });
    server.put_bytes("/m.safetensors", bytes.clone());
    assert_eq!(
        ok(&run(&[
            "inspect",
            "--json",
            "--hash",
            &server.url("/m.safetensors")
        ])),
        on_disk
    );
    let ranges: Vec<String> = server
        .log()
        .iter()
        .map(|r| r.header("Range").unwrap().to_owned())
        .collect();
    let data = 256 << 10;
    assert_eq!(
        ranges,
        [
            "bytes=0-262143".to_owned(),
            "bytes=0-262143".to_owned(),
            "bytes=0-262143".to_owned(),
            format!("bytes={data}-{last}"),
        ]
    );

    // Two answers that break off after 1 MiB of their body: the data is
    // asked for again from where each stopped.
    let breaking = BreakingServer::start(bytes.clone(), data as u64, 1 << 20, 2);
    assert_eq!(
        ok(&run(&[
            "inspect",
            "--json",
            "--hash",
            &breaking.url("/m.safetensors")
        ])),
        on_disk
    );
    assert_eq!(
        *breaking.ranges.lock().unwrap(),
        [
            "bytes=0-262143".to_owned(),
            format!("bytes={data}-{last}"),
            format!("bytes={}-{last}", data + (1 << 20)),
            format!("bytes={}-{last}", data + (2 << 20)),
        ]
    );

    // A server that stays down, and ones whose every answer (or every
    // answer for the data) breaks off at once: three tries each, and an
    // error that says so.
    let down = TestServer::start(Behaviour {
        fail_first: usize::MAX,
        ..Behaviour::default()
    });
    down.put_bytes("/m.safetensors", bytes.clone());
    let doc = json(&run(&["inspect", "--json", &down.url("/m.safetensors")]));
    assert_eq!(doc["error"]["kind"], "Http", "{doc}");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("HTTP 503") && message.contains("(tried 3 times)"),
        "{message}"
    );
    assert_eq!(down.log().len(), 3);
    for (from, args, requests) in [
        (0, &["inspect", "--json"][..], 3),
        (data, &["inspect", "--json", "--hash"][..], 4),
    ] {
        let broken = BreakingServer::start(bytes.clone(), from as u64, 0, usize::MAX);
        let url = broken.url("/m.safetensors");
        let doc = json(&run(&[args, &[url.as_str()]].concat()));
        assert_eq!(doc["error"]["kind"], "Network", "{doc}");
        let message = doc["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(&url)
                && message.contains("the answer broke off")
                && message.ends_with("(tried 3 times)"),
            "{message}"
        );
        assert_eq!(broken.ranges.lock().unwrap().len(), requests);
    }
}

#[test]
fn a_header_past_the_first_request_resumes_where_its_answer_broke_off() {
    let dir = tempfile::tempdir().unwrap();
    let (head, len) = many_tensors(16_000);
    let mut bytes = head.clone();
    bytes.resize(len as usize, 0);
    let path = local(dir.path(), "m.safetensors", &bytes);
    assert!(head.len() > (256 << 10) + 2 * (300 << 10), "{}", head.len());
    // The rest of the header breaks off after 300 KiB, twice.
    let server = BreakingServer::start(bytes, 256 << 10, 300 << 10, 2);
    assert_eq!(
        ok(&run(&["inspect", "--json", &server.url("/m.safetensors")])),
        ok(&run(&["inspect", "--json", "--no-hash", &path]))
    );
    let end = head.len() - 1;
    let rest = 256 << 10;
    assert_eq!(
        *server.ranges.lock().unwrap(),
        [
            "bytes=0-262143".to_owned(),
            format!("bytes={rest}-{end}"),
            format!("bytes={}-{end}", rest + (300 << 10)),
            format!("bytes={}-{end}", rest + (600 << 10)),
        ]
    );
}
