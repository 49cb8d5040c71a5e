//! WebAssembly bindings of `safetensors-nano`, built by wasm-pack into the
//! npm package `safetensors-nano`.
//!
//! This crate is only the JS boundary: the parser, the decoders and the
//! writer are the core crate's. The ES module layer in `wasm/js/` does the
//! I/O (Blob slices, HTTP ranges, shards) and builds the JS objects; it calls
//! the few functions here, which exchange compact descriptions (one
//! `Float64Array` of numbers plus one string of names) so that building the
//! JS side costs little. Only header bytes and bounded decode chunks ever
//! enter wasm memory; tensor data stays in the caller's buffers.
//!
//! Numbers cross as `f64`; any offset or dimension above 2^53 (where a JS
//! number stops being exact) is an error rather than a rounded value.

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic,
        clippy::arithmetic_side_effects,
        clippy::cast_possible_truncation
    )
)]

mod decode;
mod describe;
mod write;

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

use describe::open_prefix;

thread_local! {
    static STATE: RefCell<describe::State> = RefCell::new(describe::State::default());
}

/// Parses a header from the first bytes of a file of `file_len` bytes.
///
/// Returns the numbers of the description (see `wasm/js/api.js`,
/// `readDescription`): element 0 is the status — `0` parsed, `-1` error,
/// otherwise the count of bytes from the file start still needed. Call
/// [`take_text`] next for the names (or the error's strings).
#[wasm_bindgen]
pub fn open(prefix: &[u8], file_len: u64) -> Vec<f64> {
    STATE.with(|s| {
        let mut state = s.borrow_mut();
        let opened = open_prefix(prefix, file_len, &mut state);
        state.finish(opened)
    })
}

/// The string half of the last [`open`] result (names, metadata, or error
/// kind/message/tensor), moved out.
#[wasm_bindgen]
pub fn take_text() -> String {
    STATE.with(|s| core::mem::take(&mut s.borrow_mut().text))
}

/// Decodes `input` (whole elements of the dtype with this index, at most a
/// bounded chunk) into `out[at..]` through the core's
/// `decode::decode_f32_into`. Returns the element count, or `-1` after
/// describing the error (read it with [`take_error`] and [`take_text`]).
#[wasm_bindgen]
pub fn decode(dtype: u8, input: &[u8], out: &js_sys::Float32Array, at: u32) -> f64 {
    STATE.with(|s| {
        let mut state = s.borrow_mut();
        let Some(values) = state.decode(dtype, input) else {
            return -1.0;
        };
        let n = values.len();
        let end = u32::try_from(n).ok().and_then(|n| at.checked_add(n));
        match end {
            Some(end) if end <= out.length() => {
                out.subarray(at, end).copy_from(values);
                n as f64
            }
            _ => {
                let (found, at) = (out.length(), u64::from(at));
                let kind = safetensors_nano::ErrorKind::LengthMismatch {
                    expected: at.saturating_add(n as u64),
                    found: u64::from(found),
                };
                let e = safetensors_nano::Error::new(kind);
                describe::fail_core(&mut state, e, &[]);
                -1.0
            }
        }
    })
}

/// The numbers half of the last error (after [`decode`] returned `-1`).
#[wasm_bindgen]
pub fn take_error() -> Vec<f64> {
    STATE.with(|s| core::mem::take(&mut s.borrow_mut().numbers))
}

/// Plans a file to write through the core writer (see `write.rs`): returns
/// `[0, file_len, (caller_index, begin)…]` or an error; the header bytes
/// are then taken with [`take_bytes`].
#[wasm_bindgen]
pub fn plan(numbers: &[f64], text: &str) -> Vec<f64> {
    STATE.with(|s| s.borrow_mut().plan(numbers, text))
}

/// The header bytes (`8 + N`) of the last [`plan`], moved out.
#[wasm_bindgen]
pub fn take_bytes() -> Vec<u8> {
    STATE.with(|s| core::mem::take(&mut s.borrow_mut().bytes))
}

/// Bytes of wasm linear memory in use (grown so far): lets callers and tests
/// check that opening and decoding never bring tensor data in.
#[wasm_bindgen]
pub fn memory_bytes() -> f64 {
    #[cfg(target_arch = "wasm32")]
    let pages = core::arch::wasm32::memory_size(0);
    #[cfg(not(target_arch = "wasm32"))]
    let pages = 0usize;
    (pages as f64) * 65536.0
}
