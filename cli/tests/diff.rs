//! `diff` through the built binary, on files the Python reference wrote:
//! names, dtypes and shapes, and `--values` against numpy's computation in
//! float64.
//!
//! Needs `$REPO/tests/.venv` (scripts/setup.sh python). Without it the tests
//! are skipped with a message, unless `CI` is set: then they fail.

use safetensors_nano_test_support::python::venv;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_safetensors-nano");

/// Writes A and B with the reference; numpy's expected `values`.
fn files(python: &Path, dir: &Path) -> (PathBuf, PathBuf, Value) {
    let (a, b) = (dir.join("base.safetensors"), dir.join("tuned.safetensors"));
    let out = Command::new(python)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/python/diff_expected.py"
        ))
        .args([&a, &b])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (a, b, serde_json::from_slice(&out.stdout).unwrap())
}

fn close(x: f64, y: f64) -> bool {
    (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1e-300)
}

#[test]
fn diff_values_match_numpy() {
    let Some(python) = venv() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (a, b, expected) = files(&python, dir.path());
    let out = Command::new(BIN)
        .args(["diff", "--values", "--json"])
        .args([&a, &b])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["ok"], true);
    let names = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(&got["added"]), ["new"]);
    assert_eq!(names(&got["removed"]), ["gone"]);
    assert_eq!(names(&got["changed"]), ["cast", "reshaped"]);
    assert_eq!(got["changed"][0]["b"]["dtype"], "BF16");
    assert_eq!(got["changed"][1]["b"]["shape"], serde_json::json!([4, 6]));
    assert_eq!(got["same"], 7);
    let (got, want) = (
        got["values"].as_array().unwrap(),
        expected["values"].as_array().unwrap(),
    );
    assert_eq!(
        names(&Value::Array(got.clone())),
        names(&Value::Array(want.clone()))
    );
    for (g, w) in got.iter().zip(want) {
        let name = &w["name"];
        assert_eq!(g["elements"], w["elements"], "{name}");
        assert_eq!(g["changed"], w["changed"], "{name}");
        assert!(
            close(
                g["max_abs_diff"].as_f64().unwrap(),
                w["max_abs_diff"].as_f64().unwrap()
            ),
            "{name}: {g} vs {w}"
        );
        match (g["rel_l2"].as_f64(), w["rel_l2"].as_f64()) {
            (Some(x), Some(y)) => assert!(close(x, y), "{name}: {g} vs {w}"),
            (x, y) => assert_eq!(x, y, "{name}"),
        }
    }
    // The numbers are not trivial: some tensors changed, one did not.
    assert!(got.iter().any(|g| g["name"] == "same" && g["changed"] == 0));
    assert!(got
        .iter()
        .any(|g| g["name"] == "w.f32" && g["changed"].as_u64().unwrap() > 10_000));
}

#[test]
fn diff_table_and_errors() {
    let Some(python) = venv() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (a, b, _) = files(&python, dir.path());
    let out = Command::new(BIN)
        .arg("diff")
        .args([&a, &b])
        .output()
        .unwrap();
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("1 added, 1 removed, 2 changed, 7 same dtype and shape"),
        "{table}"
    );
    assert!(table.contains("  + new  F32 [3]"), "{table}");
    assert!(table.contains("  - gone  F32 [2]"), "{table}");
    assert!(
        table.contains("  ~ cast  F32 [10, 3] -> BF16 [10, 3]"),
        "{table}"
    );
    // A file against itself: nothing changed.
    let out = Command::new(BIN)
        .args(["diff", "--values"])
        .args([&a, &a])
        .output()
        .unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("0 added, 0 removed, 0 changed, 10 same"),
        "{table}"
    );
    assert!(table.lines().skip(2).all(|l| l.contains(" 0/")), "{table}");
    // A hostile B: exit 1, a message naming it; --json gives the error document.
    let bad = dir.path().join("bad.safetensors");
    std::fs::write(&bad, b"\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":").unwrap();
    let out = Command::new(BIN)
        .arg("diff")
        .args([&a, &bad])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(&format!("safetensors-nano: {}: ", bad.display())),
        "{stderr}"
    );
    let out = Command::new(BIN)
        .args(["diff", "--json"])
        .args([&a, &bad])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
}

/// A file with one F32 tensor `w` holding `values`.
fn one_tensor(path: &Path, values: &[f32]) {
    let header = format!(
        r#"{{"w":{{"dtype":"F32","shape":[{}],"data_offsets":[0,{}]}}}}"#,
        values.len(),
        values.len() * 4
    );
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend(header.as_bytes());
    bytes.extend(values.iter().flat_map(|v| v.to_le_bytes()));
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn diff_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a.safetensors"),
        dir.path().join("b.safetensors"),
        dir.path().join("c.safetensors"),
    );
    one_tensor(&a, &[1.0, 2.0, 3.0]);
    one_tensor(&b, &[1.0, 2.5, 3.0]); // same layout, one value changed
    one_tensor(&c, &[1.0, 2.0]); // another shape
    let bad = dir.path().join("bad.safetensors");
    std::fs::write(&bad, b"\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":").unwrap();
    let status = |args: &[&str], x: &Path, y: &Path| {
        Command::new(BIN)
            .arg("diff")
            .args(args)
            .args([x, y])
            .output()
            .unwrap()
            .status
            .code()
    };
    // Without --exit-code a difference is no error.
    assert_eq!(status(&[], &a, &c), Some(0));
    assert_eq!(status(&["--exit-code"], &a, &a), Some(0));
    assert_eq!(status(&["--exit-code", "--values"], &a, &a), Some(0));
    assert_eq!(status(&["--exit-code"], &a, &c), Some(1));
    assert_eq!(status(&["--exit-code", "--json"], &a, &c), Some(1));
    // Values are compared only with --values.
    assert_eq!(status(&["--exit-code"], &a, &b), Some(0));
    assert_eq!(status(&["--exit-code", "--values"], &a, &b), Some(1));
    assert_eq!(
        status(&["--exit-code", "--values", "--json"], &a, &b),
        Some(1)
    );
    // A problem with a file: 2 with --exit-code (1 means "differ"), else 1.
    assert_eq!(status(&["--exit-code"], &a, &bad), Some(2));
    assert_eq!(status(&[], &a, &bad), Some(1));
    let help = Command::new(BIN).args(["diff", "--help"]).output().unwrap();
    assert!(String::from_utf8(help.stdout)
        .unwrap()
        .contains("--exit-code"));
}

/// A file with one tensor `w` of `dtype`, `n` elements, holding `data`.
fn raw_tensor(path: &Path, dtype: &str, n: usize, data: &[u8]) {
    let header = format!(
        r#"{{"w":{{"dtype":"{dtype}","shape":[{n}],"data_offsets":[0,{}]}}}}"#,
        data.len()
    );
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend(header.as_bytes());
    bytes.extend(data);
    std::fs::write(path, bytes).unwrap();
}

/// `diff --values --json A B`: the one tensor's values entry, and the table.
fn values_of(a: &Path, b: &Path) -> (Value, String) {
    let run = |json: bool| {
        let out = Command::new(BIN)
            .args(["diff", "--values"])
            .args(json.then_some("--json"))
            .args([a, b])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let doc: Value = serde_json::from_str(&run(true)).unwrap();
    (doc["values"][0].clone(), run(false))
}

#[test]
fn diff_values_a_change_to_or_from_inf_or_nan_is_an_infinite_difference() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.safetensors");
    one_tensor(&base, &[1.0, 2.0]);
    for other in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
        let b = dir.path().join("b.safetensors");
        one_tensor(&b, &[1.0, other]);
        for (x, y) in [(&base, &b), (&b, &base)] {
            let (v, table) = values_of(x, y);
            assert_eq!(v["changed"], 1, "{other}: {v}");
            // JSON has no infinity: null stands for it, as for rel_l2.
            assert_eq!(v["max_abs_diff"], Value::Null, "{other}: {v}");
            assert_eq!(v["rel_l2"], Value::Null, "{other}: {v}");
            let row = table.lines().last().unwrap();
            assert_eq!(
                row.split_whitespace().collect::<Vec<_>>(),
                ["w", "inf", "inf", "1/2"],
                "{table}"
            );
        }
    }
}

#[test]
fn diff_values_compares_64_bit_integers_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (
        dir.path().join("a.safetensors"),
        dir.path().join("b.safetensors"),
    );
    // 2^53 + 1 and 2^53 are one f64 apart only after rounding to 2^53.
    let ints = |v: &[i64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>();
    raw_tensor(&a, "I64", 2, &ints(&[9_007_199_254_740_993, i64::MIN]));
    raw_tensor(&b, "I64", 2, &ints(&[9_007_199_254_740_992, i64::MAX]));
    let (v, _) = values_of(&a, &b);
    assert_eq!(v["changed"], 2, "{v}");
    assert_eq!(
        v["max_abs_diff"], 18_446_744_073_709_551_615u64 as f64,
        "{v}"
    );
    let uints = |v: &[u64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>();
    raw_tensor(&a, "U64", 2, &uints(&[9_007_199_254_740_993, 5]));
    raw_tensor(&b, "U64", 2, &uints(&[9_007_199_254_740_992, 5]));
    let (v, _) = values_of(&a, &b);
    assert_eq!(v["changed"], 1, "{v}");
    assert_eq!(v["max_abs_diff"], 1.0, "{v}");
}
