//! `hf://` names through the built binary, against the project's Hub
//! stand-in (tests/hub/server.mjs, run with node): a sharded model whose
//! shards are redirected to the CDN origin (which refuses any Authorization
//! header, so a token sent there fails the test), the `model.safetensors`
//! fallback, a file in a subfolder, a `refs/pr/N` revision, a 404 naming
//! the files tried, and a gated repository with and without a token.
#![cfg(feature = "http")]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use safetensors_nano::Dtype;
use safetensors_nano_test_support::python::repo;
use safetensors_nano_test_support::tensors::{write, Owned};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_safetensors-nano");
const TOKEN: &str = "hf_test_gated_token";

/// The stand-in, serving `root` until dropped.
struct Hub {
    child: Child,
    endpoint: String,
}

impl Hub {
    fn start(root: &Path) -> Hub {
        let mut child = Command::new("node")
            .arg(repo().join("tests/hub/server.mjs"))
            .arg(root)
            .args(["--gated", &format!("org/gated={TOKEN}")])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("node (scripts/setup.sh installs it)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let origins: Value = serde_json::from_str(&line).expect("the stand-in's origins");
        Hub {
            child,
            endpoint: origins["endpoint"].as_str().unwrap().to_owned(),
        }
    }

    /// The CLI with `HF_ENDPOINT` set to the stand-in, and no token unless given.
    fn cli(&self, args: &[&str], token: Option<&str>) -> Output {
        let mut c = Command::new(BIN);
        c.args(args)
            .env("HF_ENDPOINT", &self.endpoint)
            .env("HF_HOME", "/nonexistent/hf-home")
            .env_remove("HF_TOKEN");
        if let Some(token) = token {
            c.env("HF_TOKEN", token);
        }
        c.output().expect("run the CLI")
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn local(args: &[&str]) -> String {
    ok(&Command::new(BIN).args(args).output().unwrap())
}

fn model(tensors: usize) -> Vec<u8> {
    let mut t = vec![
        Owned::seeded("embed".into(), Dtype::F32, vec![64, 64], 1),
        Owned::seeded("big".into(), Dtype::U8, vec![3 << 20], 2),
        Owned::seeded("norm".into(), Dtype::BF16, vec![64], 3),
    ];
    t.truncate(tensors);
    write(&t, Some(&[("format".into(), "pt".into())])).unwrap()
}

fn put(root: &Path, rel: &str, bytes: &[u8]) -> PathBuf {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, bytes).unwrap();
    path
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Repositories: org/sharded (an index and its shards), org/single (one
/// file, and another at refs/pr/1), org/diffusers (a file in unet/),
/// org/gated, org/empty (no weights).
fn repos(root: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let single = put(root, "org/single/model.safetensors", &model(3));
    let pr = put(
        root,
        "org/single@refs%2Fpr%2F1/model.safetensors",
        &model(2),
    );
    put(
        root,
        "org/diffusers/unet/diffusion_pytorch_model.safetensors",
        &model(3),
    );
    put(root, "org/gated/model.safetensors", &model(3));
    put(root, "org/empty/README.md", b"# nothing here\n");
    local(&[
        "split",
        s(&single),
        "-o",
        s(&root.join("org/sharded")),
        "--max-shard-size",
        "1MB",
    ]);
    (
        single,
        pr,
        root.join("org/sharded/model.safetensors.index.json"),
    )
}

#[test]
fn hub_names_read_like_the_files_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let (single, pr, index) = repos(dir.path());
    let hub = Hub::start(dir.path());

    // A sharded model, its shards through the CDN redirect; with a token
    // set, which the CDN would refuse (400) if it were sent there.
    let remote = ok(&hub.cli(&["inspect", "--json", "hf://org/sharded"], Some(TOKEN)));
    assert_eq!(
        remote,
        local(&["inspect", "--json", "--no-hash", s(&index)])
    );
    let doc: Value = serde_json::from_str(&remote).unwrap();
    assert_eq!(doc["shards"].as_array().unwrap().len(), 2, "{doc}");
    assert_eq!(
        ok(&hub.cli(&["inspect", "--json", "--hash", "hf://org/sharded"], None)),
        local(&["inspect", "--json", s(&index)])
    );
    let v = ok(&hub.cli(&["verify", "--hash", "hf://org/sharded"], Some(TOKEN)));
    assert!(v.starts_with("hf://org/sharded: ok, 3 tensors in"), "{v}");

    // No index: model.safetensors.
    assert_eq!(
        ok(&hub.cli(&["inspect", "--json", "--hash", "hf://org/single"], None)),
        local(&["inspect", "--json", s(&single)])
    );
    // A file in a subfolder, named.
    assert_eq!(
        ok(&hub.cli(
            &[
                "inspect",
                "--json",
                "hf://org/diffusers/unet/diffusion_pytorch_model.safetensors"
            ],
            None
        )),
        local(&["inspect", "--json", "--no-hash", s(&single)])
    );
    // A revision with `/`, with and without a file.
    let at_pr = local(&["inspect", "--json", "--no-hash", s(&pr)]);
    for name in [
        "hf://org/single@refs/pr/1",
        "hf://org/single@refs/pr/1/model.safetensors",
        "hf://org/single@refs%2Fpr%2F1",
    ] {
        assert_eq!(
            ok(&hub.cli(&["inspect", "--json", name], None)),
            at_pr,
            "{name}"
        );
    }
    // diff across revisions.
    let d = ok(&hub.cli(
        &["diff", "hf://org/single", "hf://org/single@refs/pr/1"],
        None,
    ));
    assert!(d.contains("0 added, 1 removed, 0 changed"), "{d}");
}

#[test]
fn hub_errors_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    repos(dir.path());
    let hub = Hub::start(dir.path());

    // Neither an index nor model.safetensors: both named.
    let out = hub.cli(&["inspect", "hf://org/empty"], None);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/org/empty/resolve/main/model.safetensors.index.json")
            && err.contains("/org/empty/resolve/main/model.safetensors")
            && err.contains("EntryNotFound"),
        "{err}"
    );
    let out = hub.cli(
        &["inspect", "--json", "hf://org/single/nope.safetensors"],
        None,
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["kind"], "HubNotFound", "{doc}");

    // Gated: 401 without a token, a clear message; with HF_TOKEN or --token it opens.
    let out = hub.cli(&["inspect", "hf://org/gated"], None);
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(
        &hub.cli(&["inspect", "--json", "hf://org/gated"], None)
            .stdout,
    )
    .unwrap();
    assert_eq!(doc["error"]["kind"], "HubUnauthorized", "{doc}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("gated or private") && err.contains("HF_TOKEN") && err.contains("401"),
        "{err}"
    );
    let out = hub.cli(&["verify", "--json", "hf://org/gated"], Some("hf_wrong"));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["ok"], false);
    let problem = doc["problems"][0].as_str().unwrap();
    assert!(
        problem.contains("403")
            && problem.contains("the token sent (HF_TOKEN or --token) has no access"),
        "{problem}"
    );
    ok(&hub.cli(&["inspect", "--hash", "hf://org/gated"], Some(TOKEN)));
    ok(&hub.cli(&["inspect", "--token", TOKEN, "hf://org/gated"], None));

    // Not a name.
    let out = hub.cli(&["inspect", "hf://just-a-name"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hf://org/name"));
}

#[test]
fn a_remote_sharded_model_shows_a_bar_over_its_shards() {
    let dir = tempfile::tempdir().unwrap();
    repos(dir.path());
    let hub = Hub::start(dir.path());
    let tty = Command::new("script")
        .args([
            "-qfec",
            &format!("{BIN} inspect hf://org/sharded"),
            "/dev/null",
        ])
        .env("TERM", "xterm")
        .env("HF_ENDPOINT", &hub.endpoint)
        .env("HF_HOME", "/nonexistent/hf-home")
        .env_remove("HF_TOKEN")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&tty.stdout);
    assert!(tty.status.success(), "{shown}");
    assert!(shown.contains("shards ["), "{shown:?}");
    assert!(shown.contains("/2"), "{shown:?}");
}
