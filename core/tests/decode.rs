//! The float decoders against golden values from `ml_dtypes` and numpy
//! (`core/tests/data/dtype_tables.json`, written by
//! `tests/python/gen_dtype_tables.py`), through the public API only.

use std::path::{Path, PathBuf};
use std::process::Command;

use safetensors_nano::decode::{
    bytes_for, decode_f32_into, elements_in, f4_to_f32, f6_e2m3_to_f32, f6_e3m2_to_f32,
    f8_e4m3_to_f32, f8_e4m3fnuz_to_f32, f8_e5m2_to_f32, f8_e5m2fnuz_to_f32, f8_e8m0_to_f32,
};
use safetensors_nano::{Dtype, ErrorKind};
use serde_json::Value;

const GOLDEN: &str = include_str!("data/dtype_tables.json");

fn golden() -> Value {
    serde_json::from_str(GOLDEN).expect("dtype_tables.json is valid JSON")
}

/// A sub-16-bit float dtype, its per-value decoder and its number of codes.
type CodeType = (Dtype, fn(u8) -> f32, usize);

const CODE_TYPES: [CodeType; 8] = [
    (Dtype::F8_E5M2, f8_e5m2_to_f32, 256),
    (Dtype::F8_E4M3, f8_e4m3_to_f32, 256),
    (Dtype::F8_E8M0, f8_e8m0_to_f32, 256),
    (Dtype::F8_E4M3FNUZ, f8_e4m3fnuz_to_f32, 256),
    (Dtype::F8_E5M2FNUZ, f8_e5m2fnuz_to_f32, 256),
    (Dtype::F6_E2M3, f6_e2m3_to_f32, 64),
    (Dtype::F6_E3M2, f6_e3m2_to_f32, 64),
    (Dtype::F4, f4_to_f32, 16),
];

/// The f32 bit patterns ml_dtypes gives for every code of `dtype`.
fn code_table(json: &Value, dtype: Dtype) -> Vec<u32> {
    json["codes"][dtype.name()]
        .as_array()
        .unwrap_or_else(|| panic!("no table for {}", dtype.name()))
        .iter()
        .map(|v| u32::try_from(v.as_u64().expect("integer")).expect("u32"))
        .collect()
}

/// `[input code, f32 bits]` pairs of a sample list.
fn samples(json: &Value, name: &str) -> Vec<(u64, u32)> {
    json["samples"][name]
        .as_array()
        .unwrap_or_else(|| panic!("no samples for {name}"))
        .iter()
        .map(|pair| {
            let code = pair[0].as_u64().expect("code");
            let bits = u32::try_from(pair[1].as_u64().expect("bits")).expect("u32");
            (code, bits)
        })
        .collect()
}

/// Bit-exact, except that NaNs only need to agree on being NaN and on sign
/// (payloads differ legitimately between converters).
fn same_value(ours: f32, oracle_bits: u32) -> bool {
    let oracle = f32::from_bits(oracle_bits);
    if oracle.is_nan() {
        ours.is_nan() && ours.is_sign_negative() == oracle.is_sign_negative()
    } else {
        ours.to_bits() == oracle_bits
    }
}

/// `len` bytes in a buffer whose start has the given alignment remainder
/// modulo 8, so both the aligned and the unaligned paths get exercised.
fn placed(bytes: &[u8], misalign: usize) -> (Vec<u64>, usize) {
    let mut storage = vec![0u64; bytes.len() / 8 + 2];
    let buf: &mut [u8] = bytemuck::cast_slice_mut(&mut storage);
    buf[misalign..misalign + bytes.len()].copy_from_slice(bytes);
    (storage, misalign)
}

fn decode_at(dtype: Dtype, bytes: &[u8], misalign: usize) -> Vec<f32> {
    let (storage, start) = placed(bytes, misalign);
    let buf: &[u8] = bytemuck::cast_slice(&storage);
    let slice = &buf[start..start + bytes.len()];
    let n = elements_in(dtype, bytes.len() as u64).expect("whole elements") as usize;
    let mut out = vec![f32::from_bits(0xDEAD_BEEF); n];
    decode_f32_into(dtype, slice, &mut out).expect("decodes");
    out
}

#[test]
fn golden_file_is_complete() {
    let json = golden();
    for (dtype, _, count) in CODE_TYPES {
        assert_eq!(code_table(&json, dtype).len(), count, "{dtype}");
    }
    for name in ["F16", "BF16", "F64"] {
        assert!(samples(&json, name).len() >= 100, "{name}");
    }
}

#[test]
fn every_code_matches_ml_dtypes_bit_for_bit() {
    let json = golden();
    for (dtype, decode_one, count) in CODE_TYPES {
        let table = code_table(&json, dtype);
        for (code, &expected) in table.iter().enumerate().take(count) {
            let ours = decode_one(code as u8);
            // Exact even for NaN: we promise ml_dtypes' quiet NaN with the sign.
            assert_eq!(
                ours.to_bits(),
                expected,
                "{dtype} code {code:#04x}: ours {ours:?} ({:#010x}), ml_dtypes {:?} ({expected:#010x})",
                ours.to_bits(),
                f32::from_bits(expected),
            );
        }
    }
}

#[test]
fn sub_byte_helpers_ignore_the_unused_high_bits() {
    for code in 0..=255u8 {
        assert_eq!(f4_to_f32(code).to_bits(), f4_to_f32(code & 0x0F).to_bits());
        assert_eq!(
            f6_e2m3_to_f32(code).to_bits(),
            f6_e2m3_to_f32(code & 0x3F).to_bits()
        );
        assert_eq!(
            f6_e3m2_to_f32(code).to_bits(),
            f6_e3m2_to_f32(code & 0x3F).to_bits()
        );
    }
}

#[test]
fn fp8_bulk_decoding_matches_ml_dtypes() {
    let json = golden();
    let all: Vec<u8> = (0..=255).collect();
    for (dtype, _, count) in CODE_TYPES.iter().copied().filter(|c| c.2 == 256) {
        let table = code_table(&json, dtype);
        for misalign in [0, 1] {
            let out = decode_at(dtype, &all, misalign);
            assert_eq!(out.len(), count);
            for (code, (v, &expected)) in out.iter().zip(&table).enumerate() {
                assert_eq!(v.to_bits(), expected, "{dtype} code {code:#04x}");
            }
        }
    }
}

/// A sequence of codes of a `bits`-wide type that visits every code and every
/// code at every position of a packing group.
fn code_sequence(codes: u32, group: u32) -> Vec<u8> {
    let mut seq = Vec::new();
    for round in 0..group {
        for c in 0..codes {
            // An odd multiplier permutes 0..codes; shifting by the round puts
            // each code in every slot of a group.
            seq.push(((c * 7 + round * 13) % codes) as u8);
        }
        seq.push(round as u8 % codes as u8);
    }
    while seq.len() % group as usize != 0 {
        seq.push(0);
    }
    seq
}

#[test]
fn f4_packing_first_element_in_low_nibble() {
    let json = golden();
    let table = code_table(&json, Dtype::F4);
    // Every pair of codes, in both orders.
    let mut codes = Vec::new();
    for lo in 0..16u8 {
        for hi in 0..16u8 {
            codes.extend([lo, hi]);
        }
    }
    codes.extend(code_sequence(16, 2));
    let packed: Vec<u8> = codes.chunks(2).map(|p| p[0] | p[1] << 4).collect();
    assert_eq!(
        bytes_for(Dtype::F4, codes.len() as u64),
        Some(packed.len() as u64)
    );
    let out = decode_at(Dtype::F4, &packed, 3);
    assert_eq!(out.len(), codes.len());
    for (i, (&code, v)) in codes.iter().zip(&out).enumerate() {
        assert_eq!(
            v.to_bits(),
            table[code as usize],
            "element {i}, code {code:#x}"
        );
    }
}

/// Packs 6-bit codes as documented: each 3 bytes are a 24-bit little-endian
/// integer holding element i of the group at bits 6i..6i+5.
fn pack_f6(codes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for group in codes.chunks(4) {
        let word = group
            .iter()
            .enumerate()
            .fold(0u32, |w, (i, &c)| w | u32::from(c) << (6 * i));
        out.extend_from_slice(&word.to_le_bytes()[..3]);
    }
    out
}

#[test]
fn f6_packing_is_little_endian_six_bit_fields() {
    let json = golden();
    for dtype in [Dtype::F6_E2M3, Dtype::F6_E3M2] {
        let table = code_table(&json, dtype);
        let codes = code_sequence(64, 4);
        let packed = pack_f6(&codes);
        assert_eq!(packed.len() * 4, codes.len() * 3);
        for misalign in [0, 1, 2] {
            let out = decode_at(dtype, &packed, misalign);
            assert_eq!(out.len(), codes.len());
            for (i, (&code, v)) in codes.iter().zip(&out).enumerate() {
                assert_eq!(
                    v.to_bits(),
                    table[code as usize],
                    "{dtype} element {i}, code {code:#x}"
                );
            }
        }
    }
    // One hand-checked group: codes 1, 2, 3, 4 → 0b000100_000011_000010_000001.
    assert_eq!(pack_f6(&[1, 2, 3, 4]), [0x81, 0x30, 0x10]);
    let mut out = [0.0; 4];
    decode_f32_into(Dtype::F6_E3M2, &[0x81, 0x30, 0x10], &mut out).unwrap();
    assert_eq!(out, [0.0625, 0.125, 0.1875, 0.25]);
}

#[test]
fn chunked_decoding_equals_whole_decoding() {
    let codes = code_sequence(64, 4);
    let packed = pack_f6(&codes);
    let whole = decode_at(Dtype::F6_E2M3, &packed, 0);
    let mut chunked = vec![0.0f32; whole.len()];
    for (bytes, out) in packed.chunks(3 * 5).zip(chunked.chunks_mut(4 * 5)) {
        decode_f32_into(Dtype::F6_E2M3, bytes, out).unwrap();
    }
    assert_eq!(
        whole.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        chunked.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
}

fn check_half_samples(dtype: Dtype, name: &str) {
    let json = golden();
    let samples = samples(&json, name);
    let bytes: Vec<u8> = samples
        .iter()
        .flat_map(|&(code, _)| u16::try_from(code).expect("u16 code").to_le_bytes())
        .collect();
    for misalign in [0, 1, 2] {
        let out = decode_at(dtype, &bytes, misalign);
        for (&(code, expected), &v) in samples.iter().zip(&out) {
            assert!(
                same_value(v, expected),
                "{name} {code:#06x} (misalign {misalign}): ours {v:?} ({:#010x}), oracle {:?} ({expected:#010x})",
                v.to_bits(),
                f32::from_bits(expected)
            );
        }
    }
}

#[test]
fn f16_matches_numpy() {
    check_half_samples(Dtype::F16, "F16");
}

#[test]
fn bf16_matches_ml_dtypes() {
    check_half_samples(Dtype::BF16, "BF16");
}

#[test]
fn every_f16_code_is_the_same_on_the_aligned_and_unaligned_paths() {
    let bytes: Vec<u8> = (0..=u16::MAX).flat_map(u16::to_le_bytes).collect();
    let aligned = decode_at(Dtype::F16, &bytes, 0);
    let unaligned = decode_at(Dtype::F16, &bytes, 1);
    for (code, (a, u)) in aligned.iter().zip(&unaligned).enumerate() {
        assert!(
            same_value(*u, a.to_bits()),
            "F16 {code:#06x}: {a:?} vs {u:?}"
        );
        assert!(same_value(
            *a,
            half::f16::from_bits(code as u16).to_f32().to_bits()
        ));
    }
}

#[test]
fn f64_rounds_to_nearest_like_numpy() {
    let json = golden();
    let samples = samples(&json, "F64");
    let bytes: Vec<u8> = samples
        .iter()
        .flat_map(|&(code, _)| code.to_le_bytes())
        .collect();
    for misalign in [0, 3] {
        let out = decode_at(Dtype::F64, &bytes, misalign);
        for (&(code, expected), &v) in samples.iter().zip(&out) {
            assert!(
                same_value(v, expected),
                "F64 {code:#018x}: ours {v:?} ({:#010x}), numpy {:?} ({expected:#010x})",
                v.to_bits(),
                f32::from_bits(expected)
            );
        }
    }
}

#[test]
fn f32_is_copied_bit_for_bit() {
    // Every f32 result of the golden file as input, NaNs and payloads included.
    let json = golden();
    let mut values: Vec<u32> = CODE_TYPES
        .iter()
        .flat_map(|c| code_table(&json, c.0))
        .collect();
    for name in ["F16", "BF16", "F64"] {
        values.extend(samples(&json, name).iter().map(|s| s.1));
    }
    values.extend([0x7F80_0001, 0xFFBF_FFFF, 0x0000_0001]); // signalling NaNs, min subnormal
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    for misalign in [0, 1] {
        let out = decode_at(Dtype::F32, &bytes, misalign);
        let got: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, values);
    }
}

#[test]
fn empty_input_decodes_to_nothing() {
    for dtype in Dtype::ALL.into_iter().filter(|d| d.is_float()) {
        assert_eq!(decode_f32_into(dtype, &[], &mut []), Ok(()), "{dtype}");
    }
}

#[test]
fn non_float_dtypes_are_rejected() {
    let bytes = [0u8; 16];
    for dtype in Dtype::ALL.into_iter().filter(|d| !d.is_float()) {
        let n = elements_in(dtype, 16).unwrap() as usize;
        let mut out = vec![0.0; n];
        let err = decode_f32_into(dtype, &bytes, &mut out).unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::DtypeMismatch {
                found: dtype,
                asked: Dtype::F32
            }
        );
    }
    assert_eq!(
        Dtype::ALL.iter().filter(|d| !d.is_float()).count(),
        10,
        "BOOL, 8 integer types and C64"
    );
}

#[test]
fn output_length_must_match_the_element_count() {
    let cases: [(Dtype, usize, usize); 6] = [
        (Dtype::F32, 8, 3),
        (Dtype::F64, 16, 1),
        (Dtype::BF16, 6, 4),
        (Dtype::F8_E4M3, 5, 6),
        (Dtype::F4, 3, 5),
        (Dtype::F6_E2M3, 6, 4),
    ];
    for (dtype, bytes, out_len) in cases {
        let expected = elements_in(dtype, bytes as u64).unwrap();
        let mut out = vec![1.5f32; out_len];
        let err = decode_f32_into(dtype, &vec![0u8; bytes], &mut out).unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::LengthMismatch {
                expected,
                found: out_len as u64
            },
            "{dtype}"
        );
        assert!(
            out.iter().all(|&v| v == 1.5),
            "{dtype}: out changed on error"
        );
    }
}

#[test]
fn partial_elements_are_rejected() {
    // (dtype, byte length that is not whole elements, output elements,
    //  expected byte length reported)
    let cases: [(Dtype, usize, usize, u64); 7] = [
        (Dtype::F32, 5, 1, 4),
        (Dtype::F32, 7, 2, 8),
        (Dtype::F64, 12, 2, 16),
        (Dtype::F16, 3, 1, 2),
        (Dtype::F6_E2M3, 4, 4, 3),
        (Dtype::F6_E3M2, 5, 8, 6),
        (Dtype::F6_E3M2, 2, 2, 0), // 2 F6 elements are no whole bytes either
    ];
    for (dtype, bytes, out_len, expected) in cases {
        let err = decode_f32_into(dtype, &vec![0u8; bytes], &mut vec![0.0; out_len]).unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::DataLengthMismatch {
                expected,
                found: bytes as u64
            },
            "{dtype} {bytes} bytes"
        );
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("core/ has a parent")
        .to_path_buf()
}

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Re-runs the generator against the installed ml_dtypes and numpy and
/// compares with the committed golden file (ignoring the recorded versions).
#[test]
fn regenerated_tables_match() {
    let root = repo_root();
    let python = root.join("tests/.venv/bin/python");
    if !python.exists() {
        assert!(
            !ci(),
            "CI is set but the Python venv is missing at {} (run scripts/setup.sh python)",
            python.display()
        );
        eprintln!(
            "SKIPPED regenerated_tables_match: no venv at {} (run scripts/setup.sh python)",
            python.display()
        );
        return;
    }
    let output = Command::new(&python)
        .arg(root.join("tests/python/gen_dtype_tables.py"))
        .args(["--output", "-"])
        .current_dir(&root)
        .output()
        .expect("runs the generator");
    assert!(
        output.status.success(),
        "gen_dtype_tables.py failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut fresh: Value = serde_json::from_slice(&output.stdout).expect("generator writes JSON");
    let mut committed = golden();
    fresh.as_object_mut().unwrap().remove("versions");
    committed.as_object_mut().unwrap().remove("versions");
    assert!(
        fresh == committed,
        "core/tests/data/dtype_tables.json is out of date with ml_dtypes/numpy: \
         re-run tests/.venv/bin/python tests/python/gen_dtype_tables.py and review the diff"
    );
}
