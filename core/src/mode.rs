//! The size mode: every place where smaller code and faster code part
//! ways, and what each build picks. The rest of the crate asks the
//! constants and types below, so each fast/small pair sits in one function
//! beside its data and the choice is made here, once. The choices are
//! constants: the branch a build does not take compiles to nothing.
//!
//! Two kinds of build trade speed for size:
//! - `small` (declared in `build.rs`): bare metal, and any build with
//!   `--cfg safetensors_nano_small` (how `make test` runs the whole test
//!   suite through these paths on the host). The budget is flash: the
//!   parser stays within 8 KB of code and 1 KB of stack on a Cortex-M.
//!   Small builds give up the parser's fast paths: only large headers would
//!   notice.
//! - wasm32: the npm package's `.wasm`, which every page downloads. It
//!   keeps the parser's fast paths (parsing speed shows in a browser) but
//!   leaves out large routines whose speed only rare inputs would notice:
//!   `core`'s sort and UTF-8 check, the decoders' static tables, a second
//!   copy of the JSON writer.
//!
//! | choice | small | wasm32 | elsewhere |
//! |---|---|---|---|
//! | [`WORDWISE`] scans | bytewise | 8 bytes at a time | 8 bytes at a time |
//! | [`SHORTCUTS`] for common spellings | none | taken | taken |
//! | [`HASH_NAMES`] | all 0 | hashed | hashed |
//! | [`Plain`] text tracked while lexing | no (a pass when asked) | yes | yes |
//! | [`RADIX_SORT`] of the name links | heapsort | radix | radix |
//! | [`CORE_SORT`] | heapsort | heapsort | `sort_unstable` |
//! | [`CORE_UTF8`] | bytewise | bytewise | `core::str::from_utf8` |
//! | [`json_sink`]: JSON writer copies | one (`dyn Sink`) | one (`dyn Sink`) | one per sink |
//! | [`Codes`] of small floats | static tables | built per call | static tables |
//! | [`VECTOR_DECODE`]: bulk float decoding | tables, `half` | lanes with `simd128` | tables, `half` |
//!
//! Four functions are `#[inline(always)]` except in small builds, an
//! attribute no constant can give: `Dtype::from_name`,
//! `read::lexer::Lexer::key`, `read::number::leading_digits` and
//! `read::validate::verdict` (inlined, they make the fast paths fast; small
//! builds keep one copy of each).

use crate::write::sink::Sink;

const SMALL: bool = cfg!(small);
const WASM: bool = cfg!(target_arch = "wasm32");

/// Scans read eight bytes at a time (SWAR): string content, runs of
/// digits, the bytes a name hash is fed. Small builds read bytewise:
/// smaller code, and a smaller parse frame.
pub(crate) const WORDWISE: bool = !SMALL;

/// Fast paths for the spellings nearly every file uses: tensor entries
/// written the reference's way (`read::canonical`), the three field keys
/// and dtype names matched literally, plain keys hashed while scanned and
/// compared raw, `__metadata__` recognised by its length. Small builds read
/// everything the general way: less code.
pub(crate) const SHORTCUTS: bool = !SMALL;

/// Whether names are hashed. In small builds they are not: every hash is
/// 0, the index is ordered by name alone (the run of equal hashes is the
/// whole index), and lookups compare names from the first probe. That
/// costs name comparisons instead of hash comparisons, which only large
/// headers notice, and saves the hashing code (about 400 bytes of flash).
pub(crate) const HASH_NAMES: bool = !SMALL;

/// Whether the name links (a hash in the high half) are sorted by a radix
/// pass in linear time (`read::sort::sort_spread`: 5 to 16 KB of stack).
/// Small builds, where that stack matters more than time, use
/// `read::sort::sort_by`.
pub(crate) const RADIX_SORT: bool = !SMALL;

/// Whether `read::sort::sort_by` is `core`'s `sort_unstable`: fast, but
/// each use instantiates kilobytes of code. Small builds and wasm32 use a
/// heapsort instead (a few hundred bytes, no memory, O(n log n) on any
/// input).
pub(crate) const CORE_SORT: bool = !(SMALL || WASM);

/// Whether UTF-8 is checked by `core::str::from_utf8`: fast on long text
/// and linked anyway on most targets, but about 370 bytes of code on a
/// Cortex-M and 680 in the `.wasm`, where nothing else needs it. Small
/// builds and wasm32 check bytewise (`read::utf8`).
pub(crate) const CORE_UTF8: bool = !(SMALL || WASM);

/// Whether every string of the header text read so far was plain ASCII
/// without escapes (`Header::is_plain_ascii`). Tracked while lexing, at no
/// cost; small builds leave out the bookkeeping (zero-sized here) and look
/// at the header when asked.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plain {
    #[cfg(not(small))]
    plain: bool,
}

impl Plain {
    /// Nothing read yet: plain.
    pub(crate) const fn new() -> Self {
        Plain {
            #[cfg(not(small))]
            plain: true,
        }
    }

    /// Notes a string that is not plain ASCII.
    #[inline]
    pub(crate) fn clear(&mut self) {
        #[cfg(not(small))]
        {
            self.plain = false;
        }
    }

    /// Whether `json`, the whole header these notes were taken over, is
    /// plain ASCII without escapes.
    pub(crate) fn get(self, json: &[u8]) -> bool {
        #[cfg(not(small))]
        {
            let _ = json;
            self.plain
        }
        #[cfg(small)]
        {
            json.is_ascii() && !json.contains(&b'\\')
        }
    }
}

/// `sink` as the type the JSON header writer (`write::json::write_json`)
/// takes it. Where code size counts more than speed (small builds and
/// wasm32) every sink becomes a `&mut dyn Sink`, so that the writer exists
/// once for the counting pass and the writing pass (in the npm package's
/// `.wasm` it was two copies of 1.8 KB). Elsewhere each sink keeps its own
/// instance with its `write_all` inlined: an indirect call per piece makes
/// writing the header of 10,000 tensors about 40% slower.
#[cfg(any(small, target_arch = "wasm32"))]
pub(crate) fn json_sink<S: Sink>(sink: &mut S) -> &mut dyn Sink {
    sink
}

/// `sink` as the type the JSON header writer takes it (see above).
#[cfg(not(any(small, target_arch = "wasm32")))]
pub(crate) fn json_sink<S: Sink>(sink: &mut S) -> &mut S {
    sink
}

/// The decoded codes of a small float format, as the decoders read them:
/// a table of `N` values computed at compile time, except on wasm32, where
/// the `.wasm`'s size matters more and only the layout is kept: each decode
/// call builds the table on its stack, each single value is computed (5.6
/// KB less `.wasm`). The values are the same bits either way.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) type Codes<const N: usize> = crate::decode::layout::TableCodes<N>;

/// The decoded codes of a small float format (see above).
#[cfg(target_arch = "wasm32")]
pub(crate) type Codes<const N: usize> = crate::decode::layout::LayoutCodes<N>;

/// Whether [`decode_f32_into`](crate::decode::decode_f32_into) decodes
/// `F16`, `BF16` and the small floats with the bulk steps of
/// `decode::simd` on wasm SIMD128 (the npm package's reader, built with
/// `-C target-feature=+simd128`): the 8-bit floats (and `F4`/`F6`, unpacked
/// to `F8_E4M3` codes) by a shift and a correction from a table of 16,
/// `F16` by a step on its 16-bit words and one multiplication, `BF16` by a
/// shift. Elsewhere it decodes through the tables and `half` (the scalar
/// spec): natively those are already vector-speed (`half`'s slice
/// conversions, F16C with `std`, and a table load per 8-bit code), faster
/// than the same steps one element at a time (`make bench`).
pub(crate) const VECTOR_DECODE: bool =
    cfg!(all(target_arch = "wasm32", target_feature = "simd128"));
