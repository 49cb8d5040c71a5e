//! The layout of the numbers that cross to JS: every index JS reads them
//! by (and the header limit JS applies), named once here. `cargo xtask gen` writes them into
//! `wasm/js/generated/wire.js` ([`CONSTANTS`]), which the ES modules import.
//!
//! Every answer is an array of `f64` whose element [`STATUS`] says what it
//! is: `0` a success (a description, a write plan), `-1` an error, and (from
//! `open` only) a positive count of file bytes still needed.

/// Declares the constants and [`CONSTANTS`], their table for the generator.
macro_rules! wire {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident = $value:expr;
    )*) => {
        $(
            $(#[doc = $doc])*
            pub const $name: usize = $value;
        )*

        /// Every constant: its name, value and doc (for the generated JS).
        ///
        /// ```
        /// use safetensors_nano_wasm::wire::{CONSTANTS, ERROR_KIND};
        /// assert!(CONSTANTS.iter().any(|c| c.0 == "ERROR_KIND" && c.1 == ERROR_KIND));
        /// ```
        pub const CONSTANTS: &[(&str, usize, &str)] = &[
            $((stringify!($name), $name, concat!($($doc, "\n"),*)),)*
        ];
    };
}

wire! {
    /// Every answer's first number: `0` success, `-1` error, above 0 the
    /// file bytes `open` still needs.
    STATUS = 0;

    // ---- an error (`error.rs`) ----
    /// The header byte where it was found, `-1` for none.
    ERROR_OFFSET = 1;
    /// The start of the tensor's raw (still escaped) name in the header
    /// bytes, `-1` for none.
    ERROR_TENSOR_START = 2;
    /// That name's length in bytes (`0` for none).
    ERROR_TENSOR_LEN = 3;
    /// The tensor's place in the caller's list (writer errors), `-1` for none.
    ERROR_TENSOR_INDEX = 4;
    /// The kind's three `u64` fields, each as its high then low 32 bits (so
    /// that JS can show values above 2^53 exactly): six numbers.
    ERROR_FIELDS = 5;
    /// The kind's wire number: the core's `ErrorKind::code()`, then this
    /// layer's kinds (`LayerKind`).
    ERROR_KIND = 11;
    /// Numbers in an error.
    ERROR_NUMBERS = 12;

    // ---- `open`'s limit ----
    /// The longest header `open` accepts (the core's and the reference's
    /// `HEADER_LIMIT`): the most a JS opener's `headerLimit` can be. A lower
    /// limit is checked in JS from the 8-byte length, as the core's
    /// `Parser::header_limit` does, and refused with the numbers of the
    /// core's `HeaderTooLarge` (read/description.js): one more number crossing
    /// would grow the reader's `.wasm` by about 60 bytes.
    HEADER_LIMIT = 100_000_000;

    // ---- a description (`describe.rs`): the head ----
    /// The header length N.
    HEAD_HEADER_LEN = 1;
    /// How many tensors.
    HEAD_TENSORS = 2;
    /// How many metadata pairs, `-1` for no `__metadata__`.
    HEAD_PAIRS = 3;
    /// `1` when the header is ASCII without escapes.
    HEAD_PLAIN = 4;
    /// Numbers in the head, before the first tensor's.
    HEAD_NUMBERS = 5;

    // ---- a description: per tensor, in data-offset order ----
    /// Where its data ends (relative to the byte buffer); it begins where
    /// the tensor before it ends.
    TENSOR_END = 0;
    /// Its dtype's index plus [`SHAPE_FACTOR`] × the header offset of its
    /// shape's `[`.
    TENSOR_DTYPE_SHAPE = 1;
    /// Numbers per tensor.
    TENSOR_NUMBERS = 2;
    /// The factor of the shape's offset in [`TENSOR_DTYPE_SHAPE`] (above
    /// every dtype index).
    SHAPE_FACTOR = 32;
    /// After the tensors, per tensor its name's span: start and length;
    /// then per metadata pair in header order the key's and value's spans.
    SPAN_NUMBERS = 2;
    /// Numbers per metadata pair (two spans).
    PAIR_NUMBERS = 4;

    // ---- a write plan's input (`write.rs`) ----
    /// How many tensors.
    PLAN_TENSORS = 0;
    /// `1` when there is a `__metadata__` (its pairs may be none).
    PLAN_HAS_METADATA = 1;
    /// How many metadata pairs.
    PLAN_PAIRS = 2;
    /// Numbers before the first tensor's row.
    PLAN_HEAD_NUMBERS = 3;
    /// A row's dtype index.
    ROW_DTYPE = 0;
    /// A row's name length in bytes of UTF-8.
    ROW_NAME_LEN = 1;
    /// A row's data length in bytes.
    ROW_BYTE_LEN = 2;
    /// A row's rank; its dims follow.
    ROW_RANK = 3;
    /// Numbers in a row before its dims.
    ROW_HEAD_NUMBERS = 4;
    /// After the rows, per metadata pair: key and value lengths in bytes.
    LENGTH_PAIR_NUMBERS = 2;

    // ---- a write plan's output ----
    /// The file's length in bytes.
    PLANNED_FILE_LEN = 1;
    /// Numbers before the first placed tensor's.
    PLANNED_HEAD_NUMBERS = 2;
    /// A placed tensor's place in the caller's list (tensors come in
    /// written order).
    PLACED_INDEX = 0;
    /// Where its data begins, relative to the end of the header.
    PLACED_BEGIN = 1;
    /// Numbers per placed tensor.
    PLACED_NUMBERS = 2;
}

// The answers are written in this order (see the modules that write them).
const _: () = assert!(ERROR_KIND == ERROR_FIELDS + 6 && ERROR_NUMBERS == ERROR_KIND + 1);
const _: () = assert!(TENSOR_END == 0 && TENSOR_DTYPE_SHAPE == 1 && TENSOR_NUMBERS == 2);
const _: () = assert!(PLACED_INDEX == 0 && PLACED_BEGIN == 1 && PLACED_NUMBERS == 2);
const _: () = assert!(PLANNED_FILE_LEN == 1 && PLANNED_HEAD_NUMBERS == 2);
const _: () = assert!(SHAPE_FACTOR > safetensors_nano::Dtype::ALL.len());
const _: () = assert!(HEADER_LIMIT as u64 == safetensors_nano::HEADER_LIMIT);
