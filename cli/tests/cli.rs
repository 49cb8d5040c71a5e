//! The `safetensors-nano` binary run as a user would: `inspect` against
//! independent facts (the reference crate's reading of files from our writer
//! and from the reference, SHA-256 digests, the adversarial suite's recorded
//! verdicts), `verify`, exit codes, `--help`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use safetensors_nano::Dtype;
use safetensors_nano_test_support::reference;
use safetensors_nano_test_support::tensors::{header, write, Owned};
use safetensors_nano_test_support::verdicts;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const BIN: &str = env!("CARGO_BIN_EXE_safetensors-nano");

fn run<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> Output {
    Command::new(BIN).args(args).output().expect("run the CLI")
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("UTF-8 output")
}

/// Tensors of several dtypes, a scalar, an empty one, an escaped name, and
/// one larger than the hashing buffer (1 MiB).
fn tensors() -> Vec<Owned> {
    vec![
        Owned::seeded("model.embed.weight".into(), Dtype::F32, vec![3, 4], 1),
        Owned::seeded("b.bias".into(), Dtype::BF16, vec![5], 2),
        Owned::seeded("scalar".into(), Dtype::F64, vec![], 3),
        Owned::seeded("empty".into(), Dtype::I64, vec![0, 3], 4),
        Owned::seeded("naïve \"quoted\"\n".into(), Dtype::U8, vec![2], 5),
        Owned::seeded("big".into(), Dtype::U8, vec![3, 1 << 20, 1], 6),
        Owned::seeded("odd".into(), Dtype::I16, vec![7, 3], 7),
    ]
}

fn metadata() -> Vec<(String, String)> {
    vec![
        ("format".into(), "pt".into()),
        ("note".into(), "é \"q\"".into()),
    ]
}

fn ours() -> Vec<u8> {
    write(&tensors(), Some(&metadata())).expect("our writer")
}

fn put(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write a test file");
    path
}

/// `inspect ARGS FILE`.
fn inspect(path: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("inspect")
        .args(args)
        .arg(path)
        .output()
        .expect("run the CLI")
}

fn json_of(out: &Output) -> Value {
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "one JSON line: {stdout}");
    serde_json::from_str(&stdout).expect("a JSON document")
}

/// `inspect` of a valid file, checked against facts found without our
/// parser: the reference crate's reading of the same bytes (names, dtypes,
/// shapes, offsets, metadata), the length prefix, and SHA-256 digests of
/// each tensor's bytes. `--no-hash` and the table say the same.
fn check_inspect(path: &Path, bytes: &[u8]) {
    let header_size = u64::from_le_bytes(bytes[..8].try_into().unwrap());
    let data = &bytes[8 + header_size as usize..];
    let (_, facts) = safetensors::SafeTensors::read_metadata(bytes).expect("a valid file");
    let mut names = facts.offset_keys();
    names.sort_by_key(|n| facts.info(n).unwrap().data_offsets);
    let expected: Vec<Value> = names
        .iter()
        .map(|name| {
            let info = facts.info(name).unwrap();
            let (b, e) = info.data_offsets;
            let digest: String = Sha256::digest(&data[b..e])
                .iter()
                .map(|x| format!("{x:02x}"))
                .collect();
            json!({
                "name": name,
                "dtype": format!("{:?}", info.dtype),
                "shape": info.shape,
                "data_offsets": [b, e],
                "sha256": digest,
            })
        })
        .collect();
    let metadata = facts.metadata().as_ref().map(|m| {
        m.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect::<serde_json::Map<_, _>>()
    });

    let out = inspect(path, &["--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty());
    let doc = json_of(&out);
    let keys: Vec<&str> = doc
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["ok", "header_size", "metadata", "tensors", "summary"]
    );
    assert_eq!(doc["ok"], true);
    // The summary, from the reference's reading: elements and bytes per dtype.
    let mut dtypes = serde_json::Map::new();
    let (mut parameters, mut total_bytes) = (0u64, 0u64);
    for name in &names {
        let info = facts.info(name).unwrap();
        let elements: u64 = info.shape.iter().map(|&d| d as u64).product();
        let bytes = (info.data_offsets.1 - info.data_offsets.0) as u64;
        let entry = dtypes
            .entry(format!("{:?}", info.dtype))
            .or_insert_with(|| json!({"parameters": 0, "bytes": 0}));
        entry["parameters"] = json!(entry["parameters"].as_u64().unwrap() + elements);
        entry["bytes"] = json!(entry["bytes"].as_u64().unwrap() + bytes);
        parameters += elements;
        total_bytes += bytes;
    }
    assert_eq!(
        doc["summary"],
        json!({"dtypes": dtypes, "parameters": parameters, "bytes": total_bytes})
    );
    assert_eq!(doc["header_size"], header_size);
    assert_eq!(doc["metadata"], json!(metadata));
    assert_eq!(doc["tensors"], Value::Array(expected.clone()));

    let out = inspect(path, &["--json", "--no-hash"]);
    assert_eq!(out.status.code(), Some(0));
    let mut unhashed = expected.clone();
    for t in &mut unhashed {
        t.as_object_mut().unwrap().remove("sha256");
    }
    assert_eq!(json_of(&out)["tensors"], Value::Array(unhashed));

    // The table: a summary line, the metadata, a row per tensor (offsets, then
    // the digest's first 16 digits; no digest with --no-hash).
    for (args, hashed) in [(&[][..], true), (&["--no-hash"], false)] {
        let out = inspect(path, args);
        assert_eq!(out.status.code(), Some(0));
        let table = text(&out.stdout);
        assert!(
            table.starts_with(&format!(
                "{}: {} tensors, header {header_size} bytes, data {} bytes\n",
                path.display(),
                names.len(),
                data.len()
            )),
            "{table}"
        );
        for (k, v) in metadata.iter().flatten() {
            assert!(table.contains(&format!("  metadata {k} = {}\n", v.as_str().unwrap())));
        }
        assert_eq!(table.contains("  sha256\n"), hashed, "{table}");
        for t in &expected {
            let offsets = format!("[{}, {}]", t["data_offsets"][0], t["data_offsets"][1]);
            let row_end = if hashed {
                format!("{offsets}  {}\n", &t["sha256"].as_str().unwrap()[..16])
            } else {
                format!("{offsets}\n")
            };
            assert!(table.contains(&row_end), "{row_end:?} in {table}");
        }
    }
}

#[test]
fn inspect_our_files() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = ours();
    let path = put(dir.path(), "ours.safetensors", &bytes);
    check_inspect(&path, &bytes);
    let doc = json_of(&inspect(&path, &["--json"]));
    assert_eq!(doc["metadata"]["note"], "é \"q\"");
    assert_eq!(doc["tensors"].as_array().unwrap().len(), tensors().len());
    let table = text(&run([Path::new("inspect"), &path]).stdout);
    assert!(
        table.starts_with(&format!("{}: 7 tensors, header ", path.display())),
        "{table}"
    );
    assert!(table.contains("  metadata format = pt\n"), "{table}");
}

#[test]
fn inspect_reference_files() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = reference::serialize(&tensors(), Some(&metadata()));
    let path = put(dir.path(), "reference.safetensors", &bytes);
    check_inspect(&path, &bytes);
    let bytes = reference::serialize(&tensors()[..3], None);
    let none = put(dir.path(), "no-metadata.safetensors", &bytes);
    check_inspect(&none, &bytes);
    assert_eq!(
        json_of(&inspect(&none, &["--json"]))["metadata"],
        Value::Null
    );
}

/// Every whole-file input of the adversarial suite: the verdict
/// `tests/adversarial/verdicts.txt` records (accepted with its tensor and
/// metadata counts, or the error kind at its offset), exit 0 or 1, never a
/// panic; the table's exit status and message agree.
#[test]
fn inspect_adversarial_files_as_the_verdicts_say() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/adversarial");
    let bin = std::fs::read(root.join("cases.bin")).expect("cases.bin");
    let verdicts = std::fs::read_to_string(root.join("verdicts.txt")).expect("verdicts.txt");
    let cases = verdicts::cases(&bin).expect("a cases.bin");
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for (i, (case, line)) in cases.zip(verdicts.lines()).enumerate() {
        let path = put(dir.path(), &format!("case{i}.safetensors"), case.input);
        let out = inspect(&path, &["--json", "--no-hash"]);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{}: {:?} {}",
            case.name,
            out.status,
            text(&out.stderr)
        );
        assert!(out.stderr.is_empty(), "{}", case.name);
        let doc = json_of(&out);
        let table = inspect(&path, &[]);
        assert_eq!(table.status.code(), out.status.code(), "{}", case.name);
        assert!(!text(&table.stderr).contains("panicked"), "{}", case.name);
        if doc["ok"] == false {
            let message = doc["error"]["message"].as_str().unwrap();
            assert_eq!(
                text(&table.stderr),
                format!("{}: {message}\n", path.display()),
                "{}",
                case.name
            );
        }
        // The verdicts of whole files parsed with the default header limit
        // and a table large enough (the CLI sizes its table to the header).
        let (name, verdict) = line.split_once(' ').unwrap();
        assert_eq!(name, case.name);
        if case.mode != verdicts::Mode::File
            || case.limit != 0
            || verdict.starts_with("err CapacityExceeded")
        {
            continue;
        }
        let words: Vec<&str> = verdict.split(' ').collect();
        match words[..] {
            ["ok", tensors, meta, _] => {
                assert_eq!(doc["ok"], true, "{}: {doc}", case.name);
                let n = doc["tensors"].as_array().unwrap().len();
                assert_eq!(tensors, format!("tensors={n}"), "{}", case.name);
                let pairs = doc["metadata"]
                    .as_object()
                    .map_or("-".to_owned(), |m| m.len().to_string());
                assert_eq!(meta, format!("meta={pairs}"), "{}", case.name);
            }
            ["err", kind, at] => {
                assert_eq!(doc["ok"], false, "{}: {doc}", case.name);
                assert_eq!(doc["error"]["kind"], kind, "{}: {doc}", case.name);
                let offset = doc["error"]["offset"]
                    .as_u64()
                    .map_or("-".to_owned(), |o| o.to_string());
                assert_eq!(at, format!("at={offset}"), "{}: {doc}", case.name);
            }
            _ => panic!("{line}"),
        }
        checked += 1;
    }
    assert!(checked > 100, "only {checked} verdicts checked");
}

#[test]
fn inspect_json_error_shape_on_a_hostile_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = ours();
    // A tensor's shape replaced by a string: the header is still the same length.
    let header = header(&bytes).to_owned();
    let at = header
        .find("\"shape\":[3,4]")
        .expect("the F32 tensor's shape")
        + 8;
    bytes[8 + at..8 + at + 5].copy_from_slice(b"\"3,4\"");
    let path = put(dir.path(), "hostile.safetensors", &bytes);
    let out = inspect(&path, &["--json"]);
    assert_eq!(out.status.code(), Some(1));
    let doc = json_of(&out);
    assert_eq!(doc["ok"], false);
    let err = doc["error"].as_object().expect("an error object");
    let keys: Vec<&str> = err.keys().map(String::as_str).collect();
    assert_eq!(keys, ["kind", "message", "offset", "tensor"]);
    assert!(err["kind"].is_string() && err["message"].is_string());
    assert!(err["offset"].is_u64(), "{doc}");
    assert_eq!(err["tensor"], "model.embed.weight");
    assert!(out.stderr.is_empty());

    // A header length far past the limit, and a file of 3 bytes.
    let huge = put(dir.path(), "huge.safetensors", &u64::MAX.to_le_bytes());
    assert_eq!(
        json_of(&inspect(&huge, &["--json"]))["error"]["kind"],
        "HeaderTooLarge"
    );
    let tiny = put(dir.path(), "tiny.safetensors", b"abc");
    assert_eq!(
        json_of(&inspect(&tiny, &["--json"]))["error"]["kind"],
        "HeaderTooSmall"
    );
}

/// Several files: one JSON line each, in order (JSON Lines), exit 1 when
/// any is rejected; tables one after another.
#[test]
fn inspect_several_files() {
    let dir = tempfile::tempdir().unwrap();
    let good = put(dir.path(), "good.safetensors", &ours());
    let bad = put(dir.path(), "bad.safetensors", b"abc");
    let out = run([
        Path::new("inspect"),
        Path::new("--json"),
        Path::new("--no-hash"),
        &good,
        &bad,
        &good,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let alone = json_of(&inspect(&good, &["--json", "--no-hash"]));
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0], alone);
    assert_eq!(lines[1]["error"]["kind"], "HeaderTooSmall");
    assert_eq!(lines[2], alone);
    let out = run([Path::new("inspect"), &good, &good]);
    assert_eq!(out.status.code(), Some(0));
    let table = text(&out.stdout);
    assert_eq!(
        table
            .matches(&format!("{}: 7 tensors", good.display()))
            .count(),
        2
    );
    assert!(text(&run(["inspect", "--help"]).stdout).contains("JSON Lines"));
}

#[test]
fn inspect_json_on_a_missing_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = run([
        Path::new("inspect"),
        Path::new("--json"),
        &dir.path().join("absent"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["ok"], false);
    assert_eq!(doc["error"]["kind"], "Io");
}

#[test]
fn verify_good_truncated_trailing_and_several() {
    let dir = tempfile::tempdir().unwrap();
    let good = ours();
    let ok = put(dir.path(), "good.safetensors", &good);
    let short = put(dir.path(), "short.safetensors", &good[..good.len() - 1]);
    let mut long_bytes = good.clone();
    long_bytes.push(0);
    let long = put(dir.path(), "long.safetensors", &long_bytes);

    let out = run([Path::new("verify"), &ok]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("{}: ok, 7 tensors, {} bytes\n", ok.display(), good.len())
    );
    assert!(out.stderr.is_empty());

    let data = good.len() - 8 - header(&good).len();
    for (path, found) in [(&short, data - 1), (&long, data + 1)] {
        let out = run([Path::new("verify"), path]);
        assert_eq!(out.status.code(), Some(1));
        assert!(out.stdout.is_empty());
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(&format!("{}: ", path.display())), "{err}");
        assert!(
            err.ends_with(&format!(
                ": byte buffer is {found} bytes but the header describes {data}\n"
            )),
            "{err}"
        );
    }

    // Several files: every one checked, one stderr line per bad file.
    let out = run([Path::new("verify"), &ok, &short, &ok, &long]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout).lines().count(), 2);
    let err = text(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(lines[0].starts_with(&format!("{}: ", short.display())));
    assert!(lines[1].starts_with(&format!("{}: ", long.display())));
}

#[test]
fn verify_names_the_tensor_and_the_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = ours();
    let header = header(&bytes).to_owned();
    let at = header.find("\"dtype\":\"BF16\"").expect("the BF16 tensor") + 9;
    bytes[8 + at..8 + at + 4].copy_from_slice(b"XF16");
    let bad = put(dir.path(), "bad-dtype.safetensors", &bytes);
    let absent = dir.path().join("absent.safetensors");
    let out = run([Path::new("verify"), &bad, &absent]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with(&format!("{}: ", bad.display())),
        "{err}"
    );
    assert!(lines[0].contains("(tensor \"b.bias\")"), "{err}");
    assert!(
        lines[1].starts_with(&format!("{}: cannot open: ", absent.display())),
        "{err}"
    );
}

#[test]
fn verify_hash_prints_the_digests_inspect_prints() {
    let dir = tempfile::tempdir().unwrap();
    let path = put(dir.path(), "ours.safetensors", &ours());
    let out = run([Path::new("verify"), Path::new("--hash"), &path]);
    assert_eq!(out.status.code(), Some(0));
    let doc: Value =
        serde_json::from_slice(&run([Path::new("inspect"), Path::new("--json"), &path]).stdout)
            .unwrap();
    let mut expected = format!(
        "{}: ok, 7 tensors, {} bytes\n",
        path.display(),
        ours().len()
    );
    for t in doc["tensors"].as_array().unwrap() {
        expected += &format!(
            "  {}  {}\n",
            t["sha256"].as_str().unwrap(),
            t["name"].as_str().unwrap()
        );
    }
    assert_eq!(text(&out.stdout), expected);
}

#[test]
fn quiet_prints_nothing_on_success() {
    let dir = tempfile::tempdir().unwrap();
    let path = put(dir.path(), "ours.safetensors", &ours());
    for args in [&["verify", "--quiet"][..], &["-q", "verify", "--hash"]] {
        let out = Command::new(BIN).args(args).arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(out.stderr.is_empty(), "{args:?}");
    }
    // Errors still reach stderr.
    let bad = put(dir.path(), "bad.safetensors", b"abc");
    let out = run([Path::new("verify"), Path::new("-q"), &bad]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(text(&out.stderr).lines().count(), 1);
    // inspect's report is its output: --quiet only hides the progress bar.
    let out = run([
        Path::new("inspect"),
        Path::new("-q"),
        Path::new("--json"),
        &path,
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty());
    assert!(serde_json::from_slice::<Value>(&out.stdout).is_ok());
}

#[test]
fn help_everywhere_and_usage_errors_exit_2() {
    for args in [
        &["--help"][..],
        &["-h"],
        &["inspect", "--help"],
        &["verify", "--help"],
        &["help", "inspect"],
        &["help", "verify"],
        &["diff", "--help"],
        &["edit", "--help"],
        &["merge", "--help"],
        &["split", "--help"],
        &["help", "split"],
        &["--version"],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
    let help = text(&run(["--help"]).stdout);
    for command in [
        "inspect",
        "verify",
        "diff",
        "edit",
        "merge",
        "split",
        "Exit status",
    ] {
        assert!(help.contains(command), "{command}: {help}");
    }
    for args in [
        &[][..],
        &["inspect"],
        &["verify"],
        &["inspect", "--bogus", "x"],
        &["diff", "a"],
        &["diff", "a", "b", "c"],
        &["edit", "a"],
        &[
            "edit",
            "a",
            "b",
            "--convert",
            "F32:F16",
            "--convert",
            "F32:BF16",
        ],
        &["merge", "a"],
        &["split", "a", "-o", "d"],
        &["split", "a", "-o", "d", "--max-shard-size", "5XB"],
        &["frobnicate"],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
}

/// A reader that stops early (`... | head`): no panic, nothing on stderr.
#[test]
fn a_closed_stdout_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let many: Vec<Owned> = (0..3000)
        .map(|i| Owned::seeded(format!("layer.{i}.weight"), Dtype::U8, vec![2], i))
        .collect();
    let path = put(dir.path(), "many.safetensors", &write(&many, None).unwrap());
    let mut child = Command::new(BIN)
        .arg("inspect")
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn verify_json_is_a_json_line_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = put(dir.path(), "good.safetensors", &ours());
    let bytes = ours();
    let cut = put(dir.path(), "cut.safetensors", &bytes[..bytes.len() - 1]);
    let out = run([
        Path::new("verify"),
        Path::new("--json"),
        Path::new("--hash"),
        &good,
        &cut,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    let files: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON document per line"))
        .collect();
    assert_eq!(files.len(), 2);
    assert_eq!(files[0]["file"], good.to_str().unwrap());
    assert_eq!(files[0]["ok"], true);
    assert_eq!(files[0]["tensors"], tensors().len());
    assert_eq!(files[0]["bytes"], bytes.len());
    // The digests are inspect's.
    let inspected: Value =
        serde_json::from_slice(&run([Path::new("inspect"), Path::new("--json"), &good]).stdout)
            .unwrap();
    for t in inspected["tensors"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        assert_eq!(files[0]["sha256"][name], t["sha256"], "{name}");
    }
    assert_eq!(files[1]["ok"], false);
    let problems = files[1]["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1);
    assert!(
        problems[0].as_str().unwrap().contains("header describes"),
        "{problems:?}"
    );
    let out = run([Path::new("verify"), Path::new("--json"), &good]);
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["ok"], true);
}

#[test]
fn version_is_the_crate_version() {
    let out = run(["--version"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout),
        format!("safetensors-nano {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn inspect_sums_parameters_and_bytes_per_dtype_sub_byte_ones_by_element() {
    let dir = tempfile::tempdir().unwrap();
    let tensors = vec![
        Owned::seeded("w4".into(), Dtype::F4, vec![4, 6], 1),
        Owned::seeded("w".into(), Dtype::F32, vec![3, 2], 2),
        Owned::seeded("b".into(), Dtype::F32, vec![2], 3),
        Owned::seeded("step".into(), Dtype::I64, vec![], 4),
    ];
    let path = put(
        dir.path(),
        "mixed.safetensors",
        &write(&tensors, None).unwrap(),
    );
    let doc = json_of(&inspect(&path, &["--json", "--no-hash"]));
    assert_eq!(
        doc["summary"],
        json!({
            "dtypes": {
                "F32": {"parameters": 8, "bytes": 32},
                "F4": {"parameters": 24, "bytes": 12},
                "I64": {"parameters": 1, "bytes": 8},
            },
            "parameters": 33,
            "bytes": 52,
        })
    );
    let table = text(&inspect(&path, &["--no-hash"]).stdout);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("dtype "))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec!["dtype", "parameters", "bytes"],
            vec!["F32", "8", "32"],
            vec!["F4", "24", "12"],
            vec!["I64", "1", "8"],
            vec!["total", "33", "52"],
        ],
        "{table}"
    );
}

#[test]
fn json_is_json_lines_with_ok_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let good = put(dir.path(), "good.safetensors", &ours());
    let missing = dir.path().join("missing.safetensors");
    let (good, missing) = (good.to_str().unwrap(), missing.to_str().unwrap());
    let edited = dir.path().join("edited.safetensors");
    let merged = dir.path().join("merged.safetensors");
    let shards = dir.path().join("shards");
    let (edited, merged, shards) = (
        edited.to_str().unwrap(),
        merged.to_str().unwrap(),
        shards.to_str().unwrap(),
    );
    for (args, lines, ok) in [
        (
            &["edit", "--json", good, edited, "--drop", "^b"][..],
            1,
            true,
        ),
        (&["edit", "--json", missing, edited], 1, false),
        (&["merge", "--json", good, "-o", merged], 1, true),
        (&["merge", "--json", missing, "-o", merged], 1, false),
        (
            &[
                "split",
                "--json",
                good,
                "-o",
                shards,
                "--max-shard-size",
                "1KB",
            ],
            1,
            true,
        ),
        (&["inspect", "--json", "--no-hash", good, good], 2, true),
        (&["inspect", "--json", missing], 1, false),
        (&["verify", "--json", good, good], 2, true),
        (&["verify", "--json", missing], 1, false),
        (&["diff", "--json", good, good], 1, true),
        (&["diff", "--json", good, missing], 1, false),
    ] {
        let out = run(args);
        let docs: Vec<Value> = text(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON document per line"))
            .collect();
        assert_eq!(docs.len(), lines, "{args:?}");
        for doc in &docs {
            assert_eq!(doc["ok"], ok, "{args:?}: {doc}");
            if !ok {
                // verify's verdict names its problems; every other failure is an error.
                let why = if args[0] == "verify" {
                    doc["problems"][0].is_string()
                } else {
                    doc["error"]["message"].is_string()
                };
                assert!(why, "{args:?}: {doc}");
            }
        }
        assert_eq!(out.status.code(), Some(if ok { 0 } else { 1 }), "{args:?}");
    }
    for command in ["inspect", "verify", "diff", "edit", "merge", "split"] {
        let help = text(&run([command, "--help"]).stdout);
        assert!(
            help.contains("JSON Lines") && help.contains("hf://"),
            "{command}: {help}"
        );
    }
}
