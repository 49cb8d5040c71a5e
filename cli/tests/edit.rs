//! `edit` run as a user would, on a file the Python reference wrote: its
//! output is byte for byte what `safetensors.numpy.save_file` writes for the
//! same tensors (kept, dropped, renamed, converted with numpy / ml_dtypes),
//! and loads back there with the same values; errors leave no output.
//!
//! Needs `$REPO/tests/.venv` (scripts/setup.sh python). Without it the tests
//! are skipped with a message, unless `CI` is set: then they fail.

use safetensors_nano_test_support::python::{run as run_python, venv};
use std::path::Path;
use std::process::{Command, Output};

use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_safetensors-nano");

/// A checkpoint written by the reference: several dtypes, a scalar, an
/// empty tensor, one larger than the copy buffer, and `format` metadata.
fn reference_file(python: &Path, path: &Path) {
    let script = r#"
import sys, numpy as np, ml_dtypes
from safetensors.numpy import save_file
rng = np.random.default_rng(7)
save_file({
    "model.embed.weight": rng.standard_normal((300, 1024)).astype(np.float32) * 1e3,
    "model.layers.0.weight": rng.standard_normal((17, 5)).astype(np.float32),
    "model.layers.0.bias": np.array([1.0, -0.0, np.inf, -np.inf, np.nan, 3.0000001, 1e-40], dtype=np.float32),
    "model.norm.scale": rng.standard_normal(9).astype(np.float64),
    "model.half": rng.standard_normal((4, 4)).astype(np.float16),
    "model.bf": rng.standard_normal(6).astype(np.float32).astype(ml_dtypes.bfloat16),
    "lm_head.weight": rng.standard_normal((8, 3)).astype(np.float32),
    "step": np.array(12, dtype=np.int64),
    "empty": np.zeros((0, 3), dtype=np.float32),
    "mask": np.array([1, 0, 1], dtype=np.uint8),
}, sys.argv[1], metadata={"format": "pt"})
"#;
    run_python(python, &["-c", script, path.to_str().unwrap()]);
}

fn edit(args: &[&str]) -> Output {
    Command::new(BIN).arg("edit").args(args).output().unwrap()
}

#[test]
fn edit_output_is_what_the_reference_writes_for_the_same_tensors() {
    let Some(python) = venv() else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.safetensors");
    reference_file(&python, &input);
    // (options, keep, drop, rename, convert) as the Python side applies them.
    type Case<'a> = (
        &'a [&'a str],
        &'a [&'a str],
        &'a [&'a str],
        &'a [[&'a str; 2]],
        &'a [[&'a str; 2]],
    );
    let cases: &[Case] = &[
        (&[], &[], &[], &[], &[]),
        (
            &["--drop", "^lm_head", "--convert", "F32:BF16"],
            &[],
            &["^lm_head"],
            &[],
            &[["F32", "BF16"]],
        ),
        (
            &[
                "--keep",
                "^model\\.",
                "--drop",
                "bias$",
                "--rename",
                "^model\\.(.*)$=$1",
                "--rename",
                "weight=w",
                "--convert",
                "F64:F16",
                "--convert",
                "F16:F32",
            ],
            &["^model\\."],
            &["bias$"],
            &[["^model\\.(.*)$", "$1"], ["weight", "w"]],
            &[["F64", "F16"], ["F16", "F32"]],
        ),
        (
            &["--convert", "BF16:F32", "--convert", "F32:F16"],
            &[],
            &[],
            &[],
            &[["BF16", "F32"], ["F32", "F16"]],
        ),
        (&["--keep", "^nothing$"], &["^nothing$"], &[], &[], &[]),
    ];
    let mut manifest = Vec::new();
    for (i, (args, keep, drop, rename, convert)) in cases.iter().enumerate() {
        let out = dir.path().join(format!("out{i}.safetensors"));
        let mut all = vec![input.to_str().unwrap(), out.to_str().unwrap(), "--quiet"];
        all.extend_from_slice(args);
        let run = edit(&all);
        assert!(
            run.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(
            run.stdout.is_empty() && run.stderr.is_empty(),
            "--quiet prints nothing"
        );
        manifest.push(
            json!({"out": out, "keep": keep, "drop": drop, "rename": rename, "convert": convert}),
        );
    }
    // With no options the reference's own file comes back unchanged.
    assert_eq!(
        std::fs::read(&input).unwrap(),
        std::fs::read(dir.path().join("out0.safetensors")).unwrap()
    );
    let manifest_path = dir.path().join("manifest.json");
    std::fs::write(
        &manifest_path,
        json!({"input": input, "cases": manifest}).to_string(),
    )
    .unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/edit_expected.py");
    let said = run_python(&python, &[script, manifest_path.to_str().unwrap()]);
    assert_eq!(said.trim(), format!("ok {}", cases.len()));
}

#[test]
fn edit_reports_what_it_did() {
    let Some(python) = venv() else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.safetensors");
    reference_file(&python, &input);
    let out = dir.path().join("out.safetensors");
    let run = edit(&[
        input.to_str().unwrap(),
        out.to_str().unwrap(),
        "--drop",
        "^lm_head",
        "--rename",
        "weight=w",
        "--convert",
        "F32:BF16",
    ]);
    assert!(run.status.success());
    let len = std::fs::metadata(&out).unwrap().len();
    assert_eq!(
        String::from_utf8(run.stdout).unwrap(),
        format!(
            "{}: 9 tensors (1 dropped, 2 renamed, 4 converted), {len} bytes\n",
            out.display()
        )
    );
}

fn no_output(dir: &Path, input: &Path) {
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p != input)
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn duplicate_names_after_rename_are_refused_before_writing() {
    let Some(python) = venv() else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.safetensors");
    reference_file(&python, &input);
    let out = dir.path().join("out.safetensors");
    let run = edit(&[
        input.to_str().unwrap(),
        out.to_str().unwrap(),
        "--rename",
        "\\.(weight|bias)$=.p",
    ]);
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8(run.stderr).unwrap();
    assert!(
        stderr.contains("two tensors would be named \"model.layers.0.p\"")
            && stderr.contains("--rename"),
        "{stderr}"
    );
    no_output(dir.path(), &input);
}

#[test]
fn hostile_input_is_exit_1_with_a_message_and_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.safetensors");
    let header = br#"{"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#;
    let mut valid = (header.len() as u64).to_le_bytes().to_vec();
    valid.extend_from_slice(header);
    valid.extend_from_slice(&[0; 16]);
    let cases: [(&str, Vec<u8>, &str); 4] = [
        (
            "truncated",
            valid[..valid.len() - 3].to_vec(),
            "header describes 16",
        ),
        ("short", b"\x02\x00".to_vec(), "8-byte length prefix"),
        (
            "huge-header",
            u64::MAX.to_le_bytes().to_vec(),
            "over the limit",
        ),
        (
            "bad-json",
            [&8u64.to_le_bytes()[..], b"{\"x\":1} "].concat(),
            "tensor entry is not an object at header byte 5 (tensor \"x\")",
        ),
    ];
    for (name, bytes, says) in &cases {
        let input = dir.path().join(name);
        std::fs::write(&input, bytes).unwrap();
        let run = edit(&[
            input.to_str().unwrap(),
            out.to_str().unwrap(),
            "--convert",
            "F32:BF16",
        ]);
        let stderr = String::from_utf8(run.stderr).unwrap();
        assert_eq!(run.status.code(), Some(1), "{name}: {stderr}");
        assert!(
            stderr.starts_with(&format!("safetensors-nano: {}: ", input.display()))
                && stderr.contains(says),
            "{stderr}"
        );
        assert!(!out.exists(), "{name}");
        std::fs::remove_file(&input).unwrap();
    }
    no_output(dir.path(), Path::new(""));
    // A missing input, and usage errors (exit 2, clap's).
    let run = edit(&["nope.safetensors", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1));
    for bad in [
        &["a", "b", "--convert", "I32:F16"][..],
        &["a", "b", "--convert", "F32:U8"],
        &["a", "b", "--rename", "x"],
        &["a", "b", "--keep", "("],
        &["a"],
    ] {
        assert_eq!(edit(bad).status.code(), Some(2), "{bad:?}");
    }
}
