//! Sharded checkpoints through the built binary: `split` writes what the
//! Hub's tools write (checked by the Python package), `merge` gives back the
//! original bytes, and `inspect`/`verify` take the index, checking it
//! against the shards (every problem one line, exit 1).
//!
//! Needs `$REPO/tests/.venv` (scripts/setup.sh python) for the reference
//! files. Without it the tests are skipped with a message, unless `CI` is
//! set: then they fail.

use safetensors_nano_test_support::python::{run as run_python, venv};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_safetensors-nano");
const INDEX: &str = "model.safetensors.index.json";

/// A checkpoint from the reference: 12 tensors of 4 KiB to 64 KiB.
fn reference_file(python: &Path, path: &Path) {
    let script = r#"
import sys, numpy as np
from safetensors.numpy import save_file
rng = np.random.default_rng(3)
t = {f"layers.{i}.weight": rng.standard_normal((32, 32 * (1 + i % 4))).astype(np.float32) for i in range(10)}
t["embed"] = rng.standard_normal((128, 128)).astype(np.float16)
t["step"] = np.array([5], dtype=np.int64)
save_file(t, sys.argv[1], metadata={"format": "pt"})
"#;
    run_python(python, &["-c", script, path.to_str().unwrap()]);
}

/// The reference file in `dir` and its split into 50 KB shards (three) in
/// `dir/shards`: (the file, the shards' folder).
fn reference_split(python: &Path, dir: &Path) -> (PathBuf, PathBuf) {
    let original = dir.join("model.safetensors");
    reference_file(python, &original);
    let shards = dir.join("shards");
    let split = run(&[
        "split",
        s(&original),
        "-o",
        s(&shards),
        "--max-shard-size",
        "50KB",
    ]);
    assert!(split.status.success());
    (original, shards)
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn split_writes_hub_shards_and_merge_gives_back_the_original_bytes() {
    let Some(python) = venv() else { return };
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("model.safetensors");
    reference_file(&python, &original);
    for (size, bytes) in [("40KB", 40_000u64), ("64KiB", 65_536), ("20000", 20_000)] {
        let shards = dir.path().join(format!("shards-{size}"));
        let out = run(&[
            "split",
            s(&original),
            "-o",
            s(&shards),
            "--max-shard-size",
            size,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let said = run_python(
            &python,
            &[
                concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/check_split.py"),
                s(&original),
                s(&shards),
                &bytes.to_string(),
            ],
        );
        let n: usize = said.trim().strip_prefix("ok ").unwrap().parse().unwrap();
        assert!(n > 1, "{size}: {n} shards");
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(
            stdout.contains(&format!("12 tensors in {n} shards")),
            "{stdout}"
        );

        // merge INDEX and merge SHARDS...: the original, byte for byte.
        let index = shards.join(INDEX);
        let merged = dir.path().join("merged.safetensors");
        let out = run(&["merge", s(&index), "-o", s(&merged), "--quiet"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty());
        assert_eq!(
            std::fs::read(&merged).unwrap(),
            std::fs::read(&original).unwrap()
        );
        let mut files: Vec<PathBuf> = (1..=n)
            .map(|i| shards.join(format!("model-{i:05}-of-{n:05}.safetensors")))
            .collect();
        files.reverse(); // Order does not matter: the writer sorts (W1).
        let mut args = vec!["merge"];
        args.extend(files.iter().map(|p| s(p)));
        args.extend(["-o", s(&merged)]);
        assert!(run(&args).status.success());
        assert_eq!(
            std::fs::read(&merged).unwrap(),
            std::fs::read(&original).unwrap()
        );

        // verify and inspect take the index.
        let out = run(&["verify", s(&index)]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = run(&["inspect", "--json", s(&index)]);
        assert!(out.status.success());
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["ok"], true);
        assert_eq!(v["tensors"].as_array().unwrap().len(), 12);
        assert_eq!(v["shards"].as_array().unwrap().len(), n);
        assert_eq!(v["metadata"]["format"], "pt");
    }
    // A limit larger than the file: one `model.safetensors`, no index (as the Hub).
    let one = dir.path().join("one");
    assert!(run(&[
        "split",
        s(&original),
        "-o",
        s(&one),
        "--max-shard-size",
        "5GB"
    ])
    .status
    .success());
    let names: Vec<_> = std::fs::read_dir(&one)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["model.safetensors"]);
    assert_eq!(
        std::fs::read(one.join("model.safetensors")).unwrap(),
        std::fs::read(&original).unwrap()
    );
}

#[test]
fn inspect_of_an_index_shows_the_same_tensors_as_the_file() {
    let Some(python) = venv() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (original, shards) = reference_split(&python, dir.path());
    let one: Value =
        serde_json::from_slice(&run(&["inspect", "--json", s(&original)]).stdout).unwrap();
    let all: Value =
        serde_json::from_slice(&run(&["inspect", "--json", s(&shards.join(INDEX))]).stdout)
            .unwrap();
    let key = |t: &Value| {
        (
            t["name"].to_string(),
            t["dtype"].to_string(),
            t["shape"].to_string(),
            t["sha256"].to_string(),
        )
    };
    let mut a: Vec<_> = one["tensors"].as_array().unwrap().iter().map(key).collect();
    let mut b: Vec<_> = all["tensors"].as_array().unwrap().iter().map(key).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    let table = String::from_utf8(run(&["inspect", s(&shards.join(INDEX))]).stdout).unwrap();
    assert!(
        table.contains("12 tensors in 3 shards")
            && table.contains("model-00002-of-00003.safetensors"),
        "{table}"
    );
}

/// Rewrites the index JSON with `f`.
fn edit_index(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn verify_reports_every_disagreement_between_index_and_shards() {
    let Some(python) = venv() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_, shards) = reference_split(&python, dir.path());
    let index = shards.join(INDEX);
    let good = std::fs::read(&index).unwrap();
    let s1 = "model-00001-of-00003.safetensors";
    let s2 = "model-00002-of-00003.safetensors";
    let first_in = |shard: &str| -> String {
        let v: Value = serde_json::from_slice(&good).unwrap();
        v["weight_map"]
            .as_object()
            .unwrap()
            .iter()
            .find(|(_, s)| *s == shard)
            .unwrap()
            .0
            .clone()
    };
    let (t1, t2) = (first_in(s1), first_in(s2));
    type Change = Box<dyn FnOnce(&mut Value)>;
    let cases: Vec<(Change, Vec<String>)> = vec![
        (
            Box::new(|v: &mut Value| v["metadata"]["total_size"] = 7.into()),
            vec!["index states total_size 7, but the shards' tensors hold".into()],
        ),
        (
            Box::new({
                let t1 = t1.clone();
                move |v: &mut Value| {
                    v["weight_map"].as_object_mut().unwrap().remove(&t1);
                }
            }),
            vec![format!("tensor {t1:?} in {s1} is not in the index")],
        ),
        (
            Box::new(|v: &mut Value| v["weight_map"]["ghost"] = s2.into()),
            vec![format!(
                "tensor \"ghost\" is indexed in {s2}, but no shard holds it"
            )],
        ),
        (
            Box::new({
                let t1 = t1.clone();
                move |v: &mut Value| v["weight_map"][&t1] = s2.into()
            }),
            vec![format!(
                "tensor {t1:?} is indexed in {s2}, but it is in {s1}"
            )],
        ),
        (
            Box::new({
                let t2 = t2.clone();
                move |v: &mut Value| {
                    v["weight_map"][&t2] = "model-00009-of-00009.safetensors".into()
                }
            }),
            vec!["shard model-00009-of-00009.safetensors is named by the index but missing".into()],
        ),
        (
            Box::new(|v: &mut Value| v["weight_map"]["x"] = "../model.safetensors".into()),
            vec!["shards must be plain file names beside the index".into()],
        ),
        (
            Box::new(|v: &mut Value| {
                v.as_object_mut().unwrap().remove("weight_map");
            }),
            vec!["no \"weight_map\"".into()],
        ),
    ];
    for (i, (change, expected)) in cases.into_iter().enumerate() {
        std::fs::write(&index, &good).unwrap();
        edit_index(&index, change);
        let out = run(&["verify", s(&index)]);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "case {i}: {stderr}");
        for e in &expected {
            assert!(
                stderr.contains(e.as_str()),
                "case {i}: want {e:?} in {stderr}"
            );
        }
        assert!(
            stderr
                .lines()
                .all(|l| l.starts_with(&format!("{}: ", index.display()))),
            "{stderr}"
        );
        // inspect and merge refuse it too; merge writes nothing.
        let out = run(&["inspect", "--json", s(&index)]);
        assert_eq!(out.status.code(), Some(1), "case {i}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["ok"], false);
        let merged = dir.path().join("merged.safetensors");
        assert_eq!(
            run(&["merge", s(&index), "-o", s(&merged)]).status.code(),
            Some(1)
        );
        assert!(!merged.exists());
    }
    // Not JSON at all: the offset of the error.
    std::fs::write(&index, b"{\"weight_map\": {\"a\": 1}}").unwrap();
    let v: Value = serde_json::from_slice(&run(&["inspect", "--json", s(&index)]).stdout).unwrap();
    assert_eq!(v["error"]["kind"], "IndexInvalid");
    assert_eq!(v["error"]["offset"], 21);
}

#[test]
fn merge_refuses_a_tensor_in_two_inputs_and_writes_nothing() {
    let Some(python) = venv() else { return };
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("model.safetensors");
    reference_file(&python, &original);
    let copy = dir.path().join("copy.safetensors");
    std::fs::copy(&original, &copy).unwrap();
    let merged = dir.path().join("merged.safetensors");
    let out = run(&["merge", s(&original), s(&copy), "-o", s(&merged)]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the same tensor is in two inputs"),
        "{stderr}"
    );
    assert!(!merged.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[test]
fn split_on_a_full_disk_leaves_no_shard_no_index_and_no_temporary_file() {
    let Some(python) = venv() else { return };
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("model.safetensors");
    reference_file(&python, &original);
    let shards = dir.path().join("shards");
    std::fs::create_dir(&shards).unwrap();
    // 25 KB per file allowed: the first shards (20 KB of data at most) fit,
    // the one holding the 32 KiB tensor alone, written later, does not.
    let out = Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; exec prlimit --fsize=25000 -- \"$@\"")
        .arg("sh")
        .args([
            BIN,
            "split",
            s(&original),
            "-o",
            s(&shards),
            "--max-shard-size",
            "20KB",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("File too large"), "{stderr}");
    assert_eq!(std::fs::read_dir(&shards).unwrap().count(), 0);
}

#[test]
fn hostile_inputs_to_split_and_merge_are_exit_1_with_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let header = br#"{"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#;
    let mut valid = (header.len() as u64).to_le_bytes().to_vec();
    valid.extend_from_slice(header);
    valid.extend_from_slice(&[0; 16]);
    let good = dir.path().join("good.safetensors");
    std::fs::write(&good, &valid).unwrap();
    let cut = dir.path().join("cut.safetensors");
    std::fs::write(&cut, &valid[..valid.len() - 1]).unwrap();
    let shards = dir.path().join("shards");
    let out = run(&["split", s(&cut), "-o", s(&shards), "--max-shard-size", "8"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}: byte buffer is 15 bytes but the header describes 16",
            cut.display()
        )),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(&shards).map_or(0, |d| d.count()), 0);
    let merged = dir.path().join("merged.safetensors");
    let out = run(&["merge", s(&good), s(&cut), "-o", s(&merged)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&cut.display().to_string()), "{stderr}");
    assert!(!merged.exists());
    // An index whose shard is hostile: named in the message, nothing written.
    std::fs::create_dir_all(&shards).unwrap();
    std::fs::copy(&cut, shards.join("model-00001-of-00001.safetensors")).unwrap();
    std::fs::write(
        shards.join(INDEX),
        br#"{"metadata": {"total_size": 16}, "weight_map": {"x": "model-00001-of-00001.safetensors"}}"#,
    )
    .unwrap();
    let out = run(&["merge", s(&shards.join(INDEX)), "-o", s(&merged)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("model-00001-of-00001.safetensors: byte buffer is 15 bytes"),
        "{stderr}"
    );
    assert!(!merged.exists());
    let out = run(&["verify", s(&shards.join(INDEX))]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).lines().count(),
        1,
        "one problem, not a missing tensor too"
    );
}

#[test]
fn an_unreadable_shard_hides_only_its_own_missing_tensors() {
    let dir = tempfile::tempdir().unwrap();
    // `a.st` is valid but lacks `gone`; `a.st2` (its name begins with
    // `a.st`) is not a safetensors file.
    let header = br#"{"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#;
    let mut a = (header.len() as u64).to_le_bytes().to_vec();
    a.extend(header);
    a.push(7);
    std::fs::write(dir.path().join("a.st"), a).unwrap();
    std::fs::write(dir.path().join("a.st2"), b"not a safetensors file").unwrap();
    let index = dir.path().join(INDEX);
    std::fs::write(
        &index,
        r#"{"weight_map": {"x": "a.st", "gone": "a.st", "y": "a.st2"}}"#,
    )
    .unwrap();
    let out = run(&["verify", s(&index)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("a.st2"), "{stderr}");
    assert!(
        stderr.contains(r#"tensor "gone" is indexed in a.st, but no shard holds it"#),
        "{stderr}"
    );
    // The unreadable shard's own tensor is not listed as missing.
    assert!(!stderr.contains(r#"tensor "y""#), "{stderr}");
}

#[test]
fn verify_finds_unnamed_shards_beside_the_index_and_lists_findings_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let header = br#"{"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#;
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend(header);
    file.push(7);
    let one = "model-00001-of-00002.safetensors";
    // A leftover shard named like the index's, which the index does not
    // name; a file named otherwise is not a shard of it.
    let stray = "model-00003-of-00003.safetensors";
    for name in [one, stray, "consolidated.safetensors"] {
        std::fs::write(dir.path().join(name), &file).unwrap();
    }
    let index = dir.path().join(INDEX);
    std::fs::write(
        &index,
        format!(r#"{{"metadata": {{"total_size": 1}}, "weight_map": {{"x": "{one}"}}}}"#),
    )
    .unwrap();
    let out = run(&["verify", "--json", s(&index)]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let doc = &v;
    assert_eq!(doc["checkedShards"], serde_json::json!([one, stray]));
    assert_eq!(
        doc["findings"],
        serde_json::json!([
            {"kind": "duplicate", "tensor": "x", "shard": 1, "at": 0, "first": 0},
            {"kind": "unnamedShard", "shard": 1},
        ])
    );
    assert_eq!(
        doc["problems"],
        serde_json::json!([
            format!(r#"tensor "x" is in both {one} and {stray}"#),
            format!("shard {stray} is not named by the index"),
        ])
    );
}

#[test]
fn an_index_over_the_entry_limit_is_index_too_large() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join(INDEX);
    // 2,000,001 entries (the default limit is 2,000,000), short names.
    let mut json = String::from(r#"{"weight_map": {"#);
    for i in 0..2_000_001u32 {
        if i > 0 {
            json.push(',');
        }
        json.push_str(&format!("\"{i:x}\":\"a\""));
    }
    json.push_str("}}");
    std::fs::write(&index, json).unwrap();
    let out = run(&["inspect", "--json", s(&index)]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["kind"], "IndexTooLarge", "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("more than 2000000 entries (IndexLimits::entries)"),
        "{message}"
    );
}

#[test]
fn diff_edit_and_split_read_a_sharded_model_as_one() {
    let Some(python) = venv() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (original, shards) = reference_split(&python, dir.path());
    let index = shards.join(INDEX);

    // diff: the shards' tensors by name against the file's, values equal.
    let out = run(&[
        "diff",
        "--json",
        "--values",
        "--exit-code",
        s(&original),
        s(&index),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(d["same"], 12, "{d}");
    assert_eq!(d["values"].as_array().unwrap().len(), 12, "{d}");

    // edit of the index: one file, byte for byte the edit of the original
    // (which the edit tests check against the reference writer).
    let from_index = dir.path().join("from-index.safetensors");
    let from_file = dir.path().join("from-file.safetensors");
    for (input, out) in [(&index, &from_index), (&original, &from_file)] {
        let edit = run(&[
            "edit",
            "-q",
            s(input),
            s(out),
            "--drop",
            "^step$",
            "--convert",
            "F32:BF16",
        ]);
        assert!(
            edit.status.success(),
            "{}",
            String::from_utf8_lossy(&edit.stderr)
        );
    }
    assert_eq!(
        std::fs::read(&from_index).unwrap(),
        std::fs::read(&from_file).unwrap()
    );
    let out = run(&["diff", "--json", "--exit-code", s(&index), s(&from_index)]);
    assert_eq!(out.status.code(), Some(1));
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(d["removed"][0]["name"], "step", "{d}");
    assert_eq!(d["changed"].as_array().unwrap().len(), 10, "{d}");

    // split of the index (sharded again), then merge: the original bytes.
    let again = dir.path().join("again");
    let split = run(&[
        "split",
        "-q",
        s(&index),
        "-o",
        s(&again),
        "--max-shard-size",
        "100KB",
    ]);
    assert!(
        split.status.success(),
        "{}",
        String::from_utf8_lossy(&split.stderr)
    );
    let merged = dir.path().join("merged.safetensors");
    let merge = run(&["merge", "-q", s(&again.join(INDEX)), "-o", s(&merged)]);
    assert!(
        merge.status.success(),
        "{}",
        String::from_utf8_lossy(&merge.stderr)
    );
    assert_eq!(
        std::fs::read(&merged).unwrap(),
        std::fs::read(&original).unwrap()
    );
}
