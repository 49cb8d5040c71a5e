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

/// Runs the cases' `edit` commands on `input` (each into `out{i}`) and has
/// edit_expected.py check each output against the reference; a case is its
/// options and what the Python side is to apply (beside keep, drop,
/// rename and convert, all empty here).
fn check_against_reference(
    python: &Path,
    dir: &Path,
    input: &Path,
    cases: &[(Vec<String>, serde_json::Value)],
) {
    let mut manifest = Vec::new();
    for (i, (args, expect)) in cases.iter().enumerate() {
        let out = dir.join(format!("meta{i}.safetensors"));
        let run = Command::new(BIN)
            .arg("edit")
            .args([input, &out])
            .arg("--quiet")
            .args(args)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let mut case = json!({"out": out, "keep": [], "drop": [], "rename": [], "convert": []});
        for (k, v) in expect.as_object().unwrap() {
            case[k] = v.clone();
        }
        manifest.push(case);
    }
    let manifest_path = dir.join("manifest-meta.json");
    std::fs::write(
        &manifest_path,
        json!({"input": input, "cases": manifest}).to_string(),
    )
    .unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/edit_expected.py");
    let said = run_python(python, &[script, manifest_path.to_str().unwrap()]);
    assert_eq!(said.trim(), format!("ok {}", cases.len()));
}

#[test]
fn metadata_edits_are_what_the_reference_writes_with_that_metadata() {
    let Some(python) = venv() else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.safetensors");
    reference_file(&python, &input); // metadata {"format": "pt"}
    let strings = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let odd = "a=b \"quoted\" \\ é 😀\n\t\u{1}";
    let cases = vec![
        // Replaced, a value holding `=` and characters JSON escapes.
        (
            strings(&["--set-metadata", &format!("format={odd}")]),
            json!({"set": [["format", odd]]}),
        ),
        // One dropped, one set: still one key.
        (
            strings(&[
                "--drop-metadata",
                "format",
                "--set-metadata",
                "source=https://example.org/x?a=1",
            ]),
            json!({"drop_metadata": ["format"], "set": [["source", "https://example.org/x?a=1"]]}),
        ),
        // Every key dropped: `{}`, as the reference writes metadata={}.
        (
            strings(&["--drop-metadata", "format"]),
            json!({"drop_metadata": ["format"]}),
        ),
        // A key the file lacks: no change.
        (
            strings(&["--drop-metadata", "absent"]),
            json!({"drop_metadata": ["absent"]}),
        ),
        // No metadata at all.
        (strings(&["--clear-metadata"]), json!({"clear": true})),
        // Several keys, an empty key and value, with tensor edits too.
        (
            strings(&[
                "--set-metadata",
                "b=2",
                "--set-metadata",
                "=empty key",
                "--set-metadata",
                "a=",
                "--drop",
                "^lm_head",
                "--convert",
                "F32:BF16",
            ]),
            json!({"set": [["b", "2"], ["", "empty key"], ["a", ""]], "drop": ["^lm_head"], "convert": [["F32", "BF16"]]}),
        ),
    ];
    check_against_reference(&python, dir.path(), &input, &cases);
    // A file without metadata gets it.
    let bare = dir.path().join("bare.safetensors");
    let script = "import sys, numpy as np\nfrom safetensors.numpy import save_file\nsave_file({'w': np.arange(6, dtype=np.float32).reshape(2, 3)}, sys.argv[1])";
    run_python(&python, &["-c", script, bare.to_str().unwrap()]);
    let cases = vec![
        (
            strings(&["--set-metadata", "format=pt"]),
            json!({"input": bare, "set": [["format", "pt"]]}),
        ),
        (
            strings(&["--drop-metadata", "format"]),
            json!({"input": bare, "drop_metadata": ["format"]}),
        ),
    ];
    check_against_reference(&python, dir.path(), &bare, &cases);
}

#[test]
fn metadata_edits_are_counted_and_bad_ones_are_usage_errors() {
    let Some(python) = venv() else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.safetensors");
    reference_file(&python, &input);
    let out = dir.path().join("out.safetensors");
    let (i, o) = (input.to_str().unwrap(), out.to_str().unwrap());
    let run = edit(&[
        i,
        o,
        "--set-metadata",
        "a=1",
        "--set-metadata",
        "format=pt",
        "--drop-metadata",
        "typo",
    ]);
    assert!(run.status.success());
    let len = std::fs::metadata(&out).unwrap().len();
    assert_eq!(
        String::from_utf8(run.stdout).unwrap(),
        format!(
            "{}: 10 tensors (0 dropped, 0 renamed, 0 converted), 2 metadata keys (1 set, 0 dropped), {len} bytes\n",
            out.display()
        )
    );
    std::fs::remove_file(&out).unwrap();
    for (bad, says) in [
        (
            &["--set-metadata", "a=1", "--drop-metadata", "a"][..],
            "both set",
        ),
        (
            &["--set-metadata", "a=1", "--set-metadata", "a=2"],
            "given twice",
        ),
        (&["--set-metadata", "__metadata__=x"], "--clear-metadata"),
        (&["--drop-metadata", "__metadata__"], "holds the metadata"),
        (&["--set-metadata", "novalue"], "expected KEY=VALUE"),
        (
            &["--clear-metadata", "--drop-metadata", "a"],
            "cannot be used",
        ),
    ] {
        let run = edit(&[&[i, o], bad].concat());
        let stderr = String::from_utf8(run.stderr).unwrap();
        assert_eq!(run.status.code(), Some(2), "{bad:?}: {stderr}");
        assert!(stderr.contains(says), "{bad:?}: {stderr}");
        assert!(!out.exists(), "{bad:?}");
    }
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

/// A metadata-only edit still streams: 256 MiB of tensor data go through a
/// process whose address space is capped at 64 MiB (prlimit --as), so the
/// data cannot be held whole.
#[cfg(target_os = "linux")]
#[test]
fn a_metadata_edit_streams_in_bounded_memory() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.safetensors");
    let elements: u64 = 64 << 20;
    let header = format!(
        r#"{{"__metadata__":{{"format":"pt"}},"w":{{"dtype":"F32","shape":[{elements}],"data_offsets":[0,{}]}}}}"#,
        elements * 4
    );
    let padded = header.len().div_ceil(8) * 8;
    let mut file = std::fs::File::create(&input).unwrap();
    file.write_all(&(padded as u64).to_le_bytes()).unwrap();
    file.write_all(header.as_bytes()).unwrap();
    file.write_all(&vec![b' '; padded - header.len()]).unwrap();
    // Sparse: the length set, no data blocks on disk.
    file.set_len(8 + padded as u64 + elements * 4).unwrap();
    let out = dir.path().join("out.safetensors");
    let run = Command::new("prlimit")
        .arg(format!("--as={}", 64 << 20))
        .arg("--")
        .arg(BIN)
        .args(["edit", "--quiet", "--set-metadata", "note=streamed"])
        .args([&input, &out])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let mut head = vec![0; 128];
    std::io::Read::read_exact(&mut std::fs::File::open(&out).unwrap(), &mut head).unwrap();
    let n = u64::from_le_bytes(head[..8].try_into().unwrap());
    assert!(String::from_utf8_lossy(&head[8..])
        .starts_with(r#"{"__metadata__":{"format":"pt","note":"streamed"},"w":"#));
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 8 + n + elements * 4);
}
