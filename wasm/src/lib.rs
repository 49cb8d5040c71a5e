//! WebAssembly bindings of `safetensors-nano`, built by wasm-pack into the
//! npm package `safetensors-nano`.
//!
//! This crate is only the JS boundary: the parser, the decoders and the
//! writer are the core crate's. The ES module layer in `wasm/js/` does the
//! I/O (Blob slices, HTTP ranges, shards) and builds the JS objects; it calls
//! the few functions here, which answer in numbers alone, read in place in
//! the module's memory: names stay in the header bytes JS already holds, as
//! spans, and errors cross as a kind and its numbers, their message written
//! in JS. Only header bytes and bounded decode chunks ever enter wasm
//! memory; tensor data stays in the caller's buffers.
//!
//! Numbers cross as `f64`; any offset or dimension above 2^53 (where a JS
//! number stops being exact) is an error rather than a rounded value.
//!
//! For wasm32 the crate is `no_std`, with `lol_alloc`'s allocator and a
//! panic handler that traps: no formatting machinery reaches the `.wasm`.

#![cfg_attr(target_arch = "wasm32", no_std)]
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

extern crate alloc;

#[cfg(feature = "reader")]
mod decode;
#[cfg(feature = "reader")]
mod describe;
mod error;
mod kind_table;
pub mod wire;
#[cfg(feature = "writer")]
mod write;

#[cfg(not(any(feature = "reader", feature = "writer")))]
compile_error!("build the reader's module, the writer's, or both (features `reader`, `writer`)");

pub use error::{kinds, JsKind, LayerKind, JS_KINDS, LAYER_TABLE};
pub use kind_table::{KindInfo, WireField, WireType, CORE_TABLE};

/// 2^53: JS numbers are exact integers up to here.
pub const MAX_SAFE: u64 = 1 << 53;

use alloc::vec::Vec;

#[cfg(feature = "reader")]
use safetensors_nano::Slot;
#[cfg(feature = "writer")]
use safetensors_nano::{Error, ErrorKind};
use spin::Mutex;
use wasm_bindgen::prelude::*;

#[cfg(feature = "writer")]
use error::Failure;

#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: lol_alloc::LockedAllocator<lol_alloc::FreeListAllocator> =
    lol_alloc::LockedAllocator::new(lol_alloc::FreeListAllocator::new());

/// A panic is a bug (the code is panic-free by its lints): trap at once.
#[cfg(target_arch = "wasm32")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    core::arch::wasm32::unreachable()
}

/// Buffers reused from call to call.
struct State {
    /// The slot table of the last header.
    #[cfg(feature = "reader")]
    slots: Vec<Slot>,
    /// The numbers of the last [`open`], or of the last [`decode`](fn@decode) error.
    #[cfg(feature = "reader")]
    numbers: Vec<f64>,
    /// The room [`decode`](fn@decode) works in: its input (the first
    /// `input_words`, as bytes), where JS writes each chunk in place, then
    /// its output (as `f32`s), where JS reads the decoded values. (Words of
    /// `f64`, as `numbers`: one `Vec` type's code serves both.)
    #[cfg(feature = "reader")]
    room: Vec<f64>,
    /// The words of `room` that are input.
    #[cfg(feature = "reader")]
    input_words: usize,
    /// Header bytes of the last write plan.
    #[cfg(feature = "writer")]
    bytes: Vec<u8>,
    /// Converted values of the last [`convert`] chunk.
    #[cfg(feature = "writer")]
    converted: Vec<u8>,
}

/// One module instance runs one call at a time; the lock is never contended.
static STATE: Mutex<State> = Mutex::new(State {
    #[cfg(feature = "reader")]
    slots: Vec::new(),
    #[cfg(feature = "reader")]
    numbers: Vec::new(),
    #[cfg(feature = "reader")]
    room: Vec::new(),
    #[cfg(feature = "reader")]
    input_words: 0,
    #[cfg(feature = "writer")]
    bytes: Vec::new(),
    #[cfg(feature = "writer")]
    converted: Vec::new(),
});

/// Parses a header from the first bytes of a file of `file_len_hi × 2^32 +
/// file_len_lo` bytes (two numbers: a `u64` would cost JS a `BigInt`).
///
/// Keeps its description (`describe.rs`; element 0 is the status: `0`
/// parsed, `-1` error, otherwise the count of bytes from the file start
/// still needed) until the next `open` or failing [`decode`](fn@decode), and returns
/// its address in the module's memory: JS reads the numbers in place
/// (copying them out through a call costs more than reading them).
#[cfg(feature = "reader")]
#[wasm_bindgen]
pub fn open(prefix: &[u8], file_len_hi: u32, file_len_lo: u32) -> u32 {
    let file_len = (u64::from(file_len_hi) << 32) | u64::from(file_len_lo);
    let mut guard = STATE.lock();
    let state = &mut *guard;
    state.numbers = describe::open_prefix(prefix, file_len, &mut state.slots);
    address(state.numbers.as_ptr())
}

/// Makes the room [`decode`](fn@decode) works in: `input_bytes` (a
/// multiple of 8) where JS writes each chunk's bytes, then room for
/// `floats` decoded values, where JS reads them. Returns its address in the
/// module's memory (JS writes and reads through views of it: no allocation
/// and no copy beyond those two per chunk).
#[cfg(feature = "reader")]
#[wasm_bindgen]
pub fn decode_room(input_bytes: u32, floats: u32) -> u32 {
    let words = input_bytes as usize / 8;
    let mut state = STATE.lock();
    state.input_words = words;
    state
        .room
        .resize(words.saturating_add(floats as usize / 2), 0.0);
    address(state.room.as_ptr())
}

/// Decodes the first `len` bytes of [`decode_room`]'s input (whole
/// elements of the dtype with this index) into its output, through
/// the core's `decode::decode_f32_into`. Returns the element count, or
/// after an error minus the address of its numbers (`error.rs`), which JS
/// reads in place as [`open`]'s.
#[cfg(feature = "reader")]
#[wasm_bindgen]
pub fn decode(dtype: u8, len: u32) -> f64 {
    let mut guard = STATE.lock();
    let state = &mut *guard;
    let words = state.input_words;
    let failure = match decode::decode(dtype, &mut state.room, words, len) {
        Ok(n) => return n as f64,
        Err(f) => f,
    };
    state.numbers = failure.encode();
    // (Never 0: a Vec of twelve numbers is allocated.)
    -(state.numbers.as_ptr() as usize as f64)
}

/// Has the next call of any export run on a new instance of this module
/// (a new memory and state). JS calls it after a call threw from inside
/// wasm (`wasm/js/runtime/wasm-guard.js`): a trap leaves the state's lock held and the
/// stack pointer where it was, so this instance must not run again.
#[wasm_bindgen]
pub fn renew() {
    wasm_bindgen::handler::schedule_reinit();
}

/// Does nothing: JS calls it right after [`renew`], so that the new
/// instance is made then. (wasm-bindgen's glue makes it at the start of the
/// next call, but only after copying that call's arguments into the old
/// instance's memory.)
#[wasm_bindgen]
pub fn settle() {}

/// An address in the module's memory as JS indexes it.
#[cfg(feature = "reader")]
fn address<T>(at: *const T) -> u32 {
    u32::try_from(at as usize).unwrap_or(u32::MAX)
}

/// Plans a file to write through the core writer (see `write.rs`; `text`
/// is the UTF-8 of the names, keys and values): returns
/// `[0, file_len, (caller_index, begin)…]` or an error; the header bytes
/// are then taken with [`take_bytes`].
#[cfg(feature = "writer")]
#[wasm_bindgen]
pub fn plan(numbers: &[f64], text: &[u8]) -> Vec<f64> {
    write::plan(numbers, text, &mut STATE.lock().bytes)
}

/// The header bytes (`8 + N`) of the last [`plan`], moved out.
#[cfg(feature = "writer")]
#[wasm_bindgen]
pub fn take_bytes() -> Vec<u8> {
    core::mem::take(&mut STATE.lock().bytes)
}

#[cfg(feature = "writer")]
#[wasm_bindgen]
extern "C" {
    /// The caller's output of [`convert`].
    pub type Uint8Array;

    /// Its length.
    #[wasm_bindgen(method, getter)]
    fn length(this: &Uint8Array) -> u32;

    /// Copies `bytes` to `0..` (wasm-bindgen passes a view of wasm memory:
    /// one copy).
    #[wasm_bindgen(method)]
    fn set(this: &Uint8Array, bytes: &[u8]);
}

/// Converts a chunk of float elements (dtype index `from`) to the dtype
/// with index `to` through the core's `convert_into` (round to nearest,
/// ties to even) into `out`, which must hold exactly the converted bytes.
/// Returns no numbers on success, else an error's (`error.rs`).
#[cfg(feature = "writer")]
#[wasm_bindgen]
pub fn convert(from: u8, src: &[u8], to: u8, out: &Uint8Array) -> Vec<f64> {
    // JS is called with no lock held (as in `decode`).
    let room = out.length();
    let mut converted = core::mem::take(&mut STATE.lock().converted);
    let mut failure = write::convert(from, src, to, &mut converted);
    if failure.is_empty() {
        if u32::try_from(converted.len()).ok() == Some(room) {
            out.set(&converted);
        } else {
            failure = Failure::from(Error::new(ErrorKind::ByteLengthMismatch {
                expected: converted.len() as u64,
                found: u64::from(room),
            }))
            .encode();
        }
    }
    STATE.lock().converted = converted;
    failure
}
