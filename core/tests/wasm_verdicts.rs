//! The adversarial suite as wasm32, in Node: the same cases and the same
//! expected lines as the native run (`tests/adversarial.rs`), from the
//! committed `tests/adversarial/cases.bin` and `verdicts.txt`.
//!
//! ```text
//! CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
//!   cargo test -p safetensors-nano --target wasm32-unknown-unknown --test wasm_verdicts
//! ```
#![cfg(target_arch = "wasm32")]

use safetensors_nano::{Header, Slot, Status};
use safetensors_nano_test_support::verdicts;
use wasm_bindgen_test::wasm_bindgen_test;

static CASES: &[u8] = include_bytes!("../../tests/adversarial/cases.bin");
static VERDICTS: &str = include_str!("../../tests/adversarial/verdicts.txt");

#[wasm_bindgen_test]
fn same_verdicts_as_native() {
    // The point of this run: a 32-bit usize.
    assert_eq!(usize::BITS, 32);
    let mut scratch = [Slot::EMPTY; verdicts::MAX_SLOTS];
    let mut failures = Vec::new();
    let (count, mismatches) = verdicts::run_all(
        CASES,
        VERDICTS,
        &mut scratch,
        |case, verdict, line, same| {
            if !same {
                failures.push(format!("expected `{line}`, got `{} {verdict}`", case.name));
            }
        },
    )
    .expect("cases.bin and verdicts.txt are well formed and of equal length");
    assert!(count >= 100, "only {count} cases");
    assert!(
        failures.is_empty(),
        "{mismatches} of {count} cases differ on wasm32:\n{}",
        failures.join("\n")
    );
}

/// 64-bit sizes come through the accessors intact on a 32-bit target.
#[wasm_bindgen_test]
fn sizes_past_4_gib_are_exact() {
    let header = br#"{"a":{"dtype":"U8","shape":[4294967296],"data_offsets":[0,4294967296]},"b":{"dtype":"F64","shape":[65536,65536],"data_offsets":[4294967296,38654705664]}}"#;
    let mut prefix = (header.len() as u64).to_le_bytes().to_vec();
    prefix.extend_from_slice(header);
    let Status::Complete(h) = Header::parse(&prefix, [Slot::EMPTY; 2]).expect("valid header")
    else {
        panic!("the prefix holds the header")
    };
    assert_eq!(h.data_len(), 38_654_705_664);
    assert_eq!(h.file_len(), 38_654_705_664 + prefix.len() as u64);
    let b = h.tensor("b").expect("b");
    assert_eq!(b.data_offsets(), (4_294_967_296, 38_654_705_664));
    assert_eq!(
        (b.element_count(), b.byte_len()),
        (4_294_967_296, 34_359_738_368)
    );
    assert_eq!(
        h.tensor("a").expect("a").shape().dim(0),
        Some(4_294_967_296)
    );
    assert!(h.check_file_len(h.file_len()).is_ok());
    assert!(h.check_file_len(h.file_len() - (1 << 32)).is_err());
}
