//! `edit IN OUT` run as a program, as the `rewrite` example's tests ran it:
//! canonical re-writes byte-identical to the reference writer, subsets,
//! renames, dtype conversion, and typed errors with no OUT file.

use std::process::Command;

use half::{bf16, f16};
use proptest::prelude::*;
use safetensors_nano::{Dtype, ErrorKind};
use safetensors_nano_test_support::reference::serialize;
use safetensors_nano_test_support::tensors::{dir_entries, Owned};

const BIN: &str = env!("CARGO_BIN_EXE_safetensors-nano");

/// What a successful `edit` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rewritten {
    written: u64,
    dropped: u64,
    renamed: u64,
    converted: u64,
    file_len: u64,
}

/// A failed `edit`: its exit status and standard error.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Failed {
    code: Option<i32>,
    stderr: String,
}

/// Runs `safetensors-nano edit ARGS` and reads its summary line,
/// `OUT: W tensors (D dropped, R renamed, C converted), B bytes`.
fn rewrite<S: AsRef<std::ffi::OsStr>>(
    args: impl IntoIterator<Item = S>,
) -> Result<Rewritten, Failed> {
    let out = Command::new(BIN).arg("edit").args(args).output().unwrap();
    if !out.status.success() {
        return Err(Failed {
            code: out.status.code(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        });
    }
    let stdout = String::from_utf8(out.stdout).unwrap();
    let (_, summary) = stdout.rsplit_once(": ").expect("OUT: summary");
    let numbers: Vec<u64> = summary
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    match numbers[..] {
        [written, dropped, renamed, converted, file_len] => Ok(Rewritten {
            written,
            dropped,
            renamed,
            converted,
            file_len,
        }),
        _ => panic!("edit printed {stdout:?}"),
    }
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// A file with the given header JSON (raw, unpadded) and data.
fn raw_file(json: &str, data: &[u8]) -> Vec<u8> {
    let mut file = (json.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(json.as_bytes());
    file.extend_from_slice(data);
    file
}

fn tensor_strategy() -> impl Strategy<Value = Vec<Owned>> {
    proptest::collection::btree_map(
        prop_oneof!["[a-z.]{1,10}", "[\"\\\\\\x01é😀a]{0,4}"]
            .prop_filter("reserved", |n| n != "__metadata__"),
        (
            proptest::sample::select(Dtype::ALL.to_vec()),
            proptest::collection::vec(0u64..5, 0..3),
            any::<u64>(),
        ),
        0..8,
    )
    .prop_map(|map| {
        map.into_iter()
            .map(|(name, (dtype, mut shape, seed))| {
                if shape.iter().product::<u64>() * u64::from(dtype.bits()) % 8 != 0 {
                    shape.push(4);
                }
                Owned::seeded(name, dtype, shape, seed)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// A file the reference wrote comes back byte for byte.
    #[test]
    fn reference_files_come_back_identical(
        tensors in tensor_strategy(),
        metadata in proptest::option::of(proptest::collection::btree_map("[a-z]{0,4}", any::<String>(), 0..2)),
    ) {
        let metadata: Option<Vec<(String, String)>> = metadata.map(|m| m.into_iter().collect());
        prop_assume!(!(tensors.is_empty() && metadata.as_ref().is_some_and(|m| m.is_empty())));
        let file = serialize(&tensors, metadata.as_deref());
        let dir = tempfile::tempdir().unwrap();
        let (input, output) = (dir.path().join("in"), dir.path().join("out"));
        std::fs::write(&input, &file).unwrap();
        let summary = rewrite([&input, &output]).unwrap();
        prop_assert_eq!(summary.written, tensors.len() as u64);
        prop_assert_eq!(std::fs::read(&output).unwrap(), file);
    }
}

#[test]
fn non_canonical_input_becomes_the_reference_layout() {
    // Header order, data order and padding all differ from the canonical
    // ones; JSON whitespace and escapes too.
    let a: Vec<u8> = [1.5f32, -2.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let b = [7u8, 8, 9];
    let c: Vec<u8> = [3i64].iter().flat_map(|v| v.to_le_bytes()).collect();
    let json = r#" { "b" : {"shape":[3],"dtype":"U8","data_offsets":[0,3]},
        "__metadata__": {"format":"pt"},
        "\u0061": {"dtype":"\u0046\u0033\u0032","shape":[2],"data_offsets":[3,11], "extra": [1, {"x": null}]},
        "c": {"dtype":"I64","shape":[],"data_offsets":[11,19]} }"#;
    let mut data = b.to_vec();
    data.extend_from_slice(&a);
    data.extend_from_slice(&c);
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (
        dir.path().join("in.safetensors"),
        dir.path().join("out.safetensors"),
    );
    std::fs::write(&input, raw_file(json, &data)).unwrap();
    rewrite([&input, &output]).unwrap();
    let expected = serialize(
        &[
            Owned::new("a", Dtype::F32, &[2], &a),
            Owned::new("b", Dtype::U8, &[3], &b),
            Owned::new("c", Dtype::I64, &[], &c),
        ],
        Some(&[("format".to_owned(), "pt".to_owned())]),
    );
    assert_eq!(std::fs::read(&output).unwrap(), expected);
}

#[test]
fn keep_drop_rename_and_convert() {
    let w: Vec<f32> = vec![
        1.0,
        1.0 + 1.0 / 256.0,
        1.0 + 3.0 / 256.0,
        -3.3,
        65520.0,
        1e-8,
    ];
    let w_bytes: Vec<u8> = w.iter().flat_map(|v| v.to_le_bytes()).collect();
    let b: Vec<f64> = vec![0.1, 1.0 + 1.0 / 2048.0 + 1.0 / (1u64 << 42) as f64];
    let b_bytes: Vec<u8> = b.iter().flat_map(|v| v.to_le_bytes()).collect();
    let tensors = [
        Owned::new("model.layers.0.w", Dtype::F32, &[2, 3], &w_bytes),
        Owned::new("model.layers.0.b", Dtype::F64, &[2], &b_bytes),
        Owned::new("model.layers.1.w", Dtype::F32, &[2, 3], &w_bytes),
        Owned::new("model.step", Dtype::I64, &[], &[1, 0, 0, 0, 0, 0, 0, 0]),
        Owned::new("optimizer.m", Dtype::F32, &[1], &[0, 0, 0, 0]),
    ];
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("in"), dir.path().join("out"));
    std::fs::write(&input, serialize(&tensors, None)).unwrap();
    let summary = rewrite(args(&[
        input.to_str().unwrap(),
        output.to_str().unwrap(),
        "--keep",
        r"^model\.",
        "--drop",
        r"\.1\.",
        "--rename",
        r"^model\.layers\.(\d+)\.=blk$1.",
        "--rename",
        r"^model\.=",
        "--convert",
        "F32:BF16",
        "--convert",
        "F64:F16",
    ]))
    .unwrap();
    assert_eq!(
        summary,
        Rewritten {
            written: 3,
            dropped: 2,
            renamed: 3,
            converted: 2,
            file_len: summary.file_len
        }
    );
    let out = std::fs::read(&output).unwrap();
    assert_eq!(out.len() as u64, summary.file_len);
    let st = safetensors::SafeTensors::deserialize(&out).unwrap();
    let mut names: Vec<String> = st.names().into_iter().map(str::to_owned).collect();
    names.sort();
    assert_eq!(names, ["blk0.b", "blk0.w", "step"]);
    let bw = st.tensor("blk0.w").unwrap();
    assert_eq!(bw.dtype(), safetensors::Dtype::BF16);
    assert_eq!(bw.shape(), &[2, 3]);
    let expected: Vec<u8> = w
        .iter()
        .flat_map(|&v| bf16::from_f32(v).to_le_bytes())
        .collect();
    assert_eq!(bw.data(), &expected[..]);
    // ties to even: 1 + 2^-8 → 1.0, 1 + 3·2^-8 → 1 + 2^-6
    assert_eq!(&bw.data()[2..6], &[0x80, 0x3f, 0x82, 0x3f]);
    let bb = st.tensor("blk0.b").unwrap();
    assert_eq!(bb.dtype(), safetensors::Dtype::F16);
    let got: Vec<f16> = bb
        .data()
        .chunks(2)
        .map(|c| f16::from_le_bytes([c[0], c[1]]))
        .collect();
    assert_eq!(got[0], f16::from_f32(0.1)); // 0.1f64 → f16 directly equals via f32 here
    assert_eq!(got[1].to_bits(), 0x3c01); // just above a tie: rounds up (no double rounding)
    assert_eq!(st.tensor("step").unwrap().data(), &[1, 0, 0, 0, 0, 0, 0, 0]);
    // the output is canonical: our writer gives it back unchanged
    let again = dir.path().join("again");
    rewrite([&output, &again]).unwrap();
    assert_eq!(std::fs::read(&again).unwrap(), out);
}

#[test]
fn invalid_input_is_a_typed_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("out.safetensors");
    let good = serialize(&[Owned::new("x", Dtype::U16, &[2], &[1, 2, 3, 4])], None);
    let mut trailing = good.clone();
    trailing.push(0);
    let cases: Vec<(&str, Vec<u8>, ErrorKind)> = vec![
        ("empty", vec![], ErrorKind::HeaderTooSmall { len: 0 }),
        (
            "short",
            b"\x08\0\0".to_vec(),
            ErrorKind::HeaderTooSmall { len: 3 },
        ),
        (
            "truncated header",
            good[..20].to_vec(),
            ErrorKind::InvalidHeaderLength {
                header_len: 56,
                file_len: 20,
            },
        ),
        (
            "truncated data",
            good[..good.len() - 1].to_vec(),
            ErrorKind::MetadataIncompleteBuffer {
                expected: 4,
                found: 3,
            },
        ),
        (
            "trailing byte",
            trailing,
            ErrorKind::MetadataIncompleteBuffer {
                expected: 4,
                found: 5,
            },
        ),
        (
            "bad dtype",
            raw_file(
                r#"{"x":{"dtype":"F33","shape":[],"data_offsets":[0,4]}}"#,
                &[0; 4],
            ),
            ErrorKind::UnknownDtype,
        ),
        (
            "duplicate name",
            raw_file(
                r#"{"x":{"dtype":"U8","shape":[],"data_offsets":[0,1]},"x":{"dtype":"U8","shape":[],"data_offsets":[1,2]}}"#,
                &[0; 2],
            ),
            ErrorKind::DuplicateTensorName,
        ),
    ];
    std::fs::write(&output, b"previous").unwrap();
    for (label, bytes, kind) in cases {
        let input = dir.path().join(format!("{label}.in"));
        std::fs::write(&input, &bytes).unwrap();
        // The exit status and the typed error's message, naming the input.
        let expected = format!("safetensors-nano: {}: {kind}", input.display());
        match rewrite([&input, &output]) {
            Err(Failed {
                code: Some(1),
                stderr,
            }) if stderr.starts_with(&expected) => {}
            other => panic!("{label}: {other:?}, expected {expected:?}"),
        }
        std::fs::remove_file(&input).unwrap();
        assert_eq!(dir_entries(dir.path()), ["out.safetensors"], "{label}");
        assert_eq!(std::fs::read(&output).unwrap(), b"previous", "{label}");
    }
    let nope = dir.path().join("nope");
    let not_found = std::fs::File::open(&nope).unwrap_err();
    assert_eq!(not_found.kind(), std::io::ErrorKind::NotFound);
    assert_eq!(
        rewrite([&nope, &output]),
        Err(Failed {
            code: Some(1),
            stderr: format!(
                "safetensors-nano: {}: cannot open: {not_found}\n",
                nope.display()
            )
        })
    );
}

#[test]
fn renames_that_collide_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("in"), dir.path().join("out"));
    let tensors = [
        Owned::new("a.weight", Dtype::F32, &[1], &[0; 4]),
        Owned::new("b.weight", Dtype::F16, &[1], &[0; 2]),
    ];
    std::fs::write(&input, serialize(&tensors, None)).unwrap();
    let i = input.to_str().unwrap();
    let o = output.to_str().unwrap();
    // The exit status, and a message naming the tensor and what is wrong.
    for (rename, wrong) in [
        (
            r"^[ab]\.=x.",
            "two tensors would be named \"x.weight\"".to_owned(),
        ),
        (
            r"^a\.weight$=__metadata__",
            format!("tensor \"__metadata__\": {}", ErrorKind::ReservedName),
        ),
    ] {
        match rewrite(args(&[i, o, "--rename", rename])) {
            Err(Failed {
                code: Some(1),
                stderr,
            }) if stderr.starts_with(&format!("safetensors-nano: {}: ", input.display()))
                && stderr.contains(&wrong) => {}
            other => panic!("{rename}: {other:?}"),
        }
    }
    assert_eq!(dir_entries(dir.path()), ["in"]);
}

#[test]
fn usage_errors() {
    for bad in [
        &[][..],
        &["only-one"],
        &["a", "b", "c"],
        &["a", "b", "--keep"],
        &["a", "b", "--keep", "("],
        &["a", "b", "--rename", "no-equals"],
        &["a", "b", "--convert", "F32"],
        &["a", "b", "--convert", "I32:F16"],
        &["a", "b", "--convert", "F32:U8"],
        &["a", "b", "--convert", "F32:F16", "--convert", "F32:BF16"],
        &["a", "b", "--frobnicate"],
    ] {
        assert!(
            matches!(rewrite(args(bad)), Err(Failed { code: Some(2), .. })),
            "{bad:?}"
        );
    }
}
