//! Opening a header and describing it to JS as numbers alone, in the same
//! pass as the parse (a [`Visitor`]).
//!
//! Names do not cross: JS holds the header bytes and decodes a name from
//! its span when asked (`wasm/js/read/description.js`, `Description`). A span
//! is the raw string content between the quotes, as `[start, len]` (header
//! byte offset and byte length; JS unescapes what holds a backslash).
//!
//! Success, in four parts (their indices are named in [`crate::wire`];
//! element counts are `(end − begin) × 8 / bits`: the core validated
//! exactly that; every dim and offset is at most 2^53):
//! - the head `[0, N, tensors, pairs (-1 = no metadata), plain]` (`plain`
//!   is 1 when the header is ASCII without escapes: JS then decodes it
//!   without looking);
//! - per tensor in data-offset order, what JS keeps: `[end, dtype + 32 ×
//!   shape_start]` (the data offsets tile the byte buffer, so a tensor
//!   begins where the one before it ends; `shape_start` is the header offset
//!   of its shape's `[`, below 2^27 in a header of at most 100 MB: JS reads
//!   the dims from its copy of the header text when asked);
//! - per tensor in data-offset order, its name's span `[start, len]`;
//! - per metadata pair in header order `[key_start, key_len, value_start,
//!   value_len]`.
//!
//! The last two are read once while JS builds its description, the first
//! two kept: JS copies only those (a typed array costs per byte).
//!
//! More bytes needed: `[needed]` (always > 0). An error: as in `error.rs`.

use alloc::vec::Vec;

use safetensors_nano::{
    Dtype, Error, ErrorKind, Header, Name, Parser, Shape, Slot, Status, Visitor,
};

use crate::error::{Failure, LayerKind, Span};
use crate::wire::{
    HEAD_HEADER_LEN, HEAD_NUMBERS, HEAD_PAIRS, HEAD_PLAIN, HEAD_TENSORS, SHAPE_FACTOR,
    SPAN_NUMBERS, STATUS, TENSOR_NUMBERS,
};

// A tensor's numbers and its span are pairs (`store`), gathered alike in `finish`.
const _: () = assert!(TENSOR_NUMBERS == 2 && SPAN_NUMBERS == 2);

use crate::MAX_SAFE;

/// Bytes of header per table slot to start with: the smallest tensor entry
/// (`"":{"dtype":"U8","shape":[],"data_offsets":[0,0]}`) is 49 bytes, so
/// only metadata-heavy headers need a second pass.
const BYTES_PER_SLOT: usize = 48;

/// A raw name's span in `json` (the name borrows from it).
fn span(json: &[u8], name: Name<'_>) -> Span {
    let raw = name.raw();
    let start = (raw.as_ptr() as usize).wrapping_sub(json.as_ptr() as usize);
    (start as u64, raw.len() as u64)
}

/// Writes the description while the core parses.
struct Describer<'h> {
    json: &'h [u8],
    /// The head, then per tensor in header order `[end, dtype + 32 ×
    /// shape_start]`, in `out[..used]` (the rest is room, zeroed ahead: see
    /// [`store`]); at the end the spans follow.
    out: Vec<f64>,
    used: usize,
    /// Per tensor in header order its name's span, in `names[..named]`.
    names: Vec<f64>,
    named: usize,
    /// The metadata pairs' spans.
    pairs: Vec<f64>,
    /// Whether a dimension is above 2^53 (then [`first_unsafe`] finds
    /// which, as a reader in offset order would).
    unsafe_number: bool,
    /// The last tensor's `data_offsets`: while each tensor's are at least
    /// the last one's, the layout check's order (offsets, then header
    /// position) is the header order.
    last_offsets: (u64, u64),
    /// Whether the header lists tensors out of data-offset order.
    reordered: bool,
}

/// Stores `values` at `out[at..]`, growing `out` (zeroed) if it is short.
/// One store per number: in the size-first .wasm a `push` is a call and a
/// copy of a few numbers a `memory.copy`, each several times slower.
#[inline(always)]
fn store(out: &mut Vec<f64>, at: usize, [a, b]: [f64; 2]) {
    let next = at.saturating_add(2);
    if out.len() < next {
        let room = next.max(out.len().saturating_mul(2));
        out.resize(room, 0.0);
    }
    if let Some([x, y]) = out.get_mut(at..next) {
        *x = a;
        *y = b;
    }
}

impl<'h> Describer<'h> {
    fn new(json: &'h [u8]) -> Self {
        // Four numbers per tensor entry of ~100 bytes, up to 64 Ki numbers:
        // past that the Vecs grow as the entries come (a header can be one
        // long metadata value). `out` has room for the spans it takes in at
        // the end.
        let numbers = (json.len() / 25).min(1 << 16);
        Describer {
            json,
            out: alloc::vec![0.0; numbers.saturating_add(HEAD_NUMBERS)],
            used: HEAD_NUMBERS,
            names: alloc::vec![0.0; numbers / 2],
            named: 0,
            pairs: Vec::new(),
            unsafe_number: false,
            last_offsets: (0, 0),
            reordered: false,
        }
    }
}

impl<'h> Visitor<'h> for Describer<'h> {
    // Called for every tensor: kept to a few stores. (Data ends above 2^53
    // are found once, from the file's length: see `finish`.)
    fn tensor(&mut self, name: Name<'h>, dtype: Dtype, shape: Shape<'h>, (begin, end): (u64, u64)) {
        // A tensor of whole bytes that has any fits its dims in its byte
        // count, so they are at most 2^53 when its end is; only the others
        // need their dims read.
        if begin == end || dtype.bits() < 8 {
            self.unsafe_number |= shape.iter().any(|d| d > MAX_SAFE);
        }
        self.reordered |= (begin, end) < self.last_offsets;
        self.last_offsets = (begin, end);
        let (start, len) = span(self.json, name);
        // (Exact: the shape's offset is below the header's 100 MB limit.
        // An end of 2^63 or more converts wrongly, but is then above 2^53:
        // `finish` refuses the header before JS sees it.)
        let kind = f64::from(dtype as u8) + SHAPE_FACTOR as f64 * shape.offset() as f64;
        store(&mut self.out, self.used, [end as i64 as f64, kind]);
        self.used = self.used.saturating_add(TENSOR_NUMBERS);
        store(&mut self.names, self.named, [start as f64, len as f64]);
        self.named = self.named.saturating_add(SPAN_NUMBERS);
    }

    fn metadata(&mut self, key: Name<'h>, value: Name<'h>) {
        let (k, k_len) = span(self.json, key);
        let (v, v_len) = span(self.json, value);
        self.pairs
            .extend_from_slice(&[k as f64, k_len as f64, v as f64, v_len as f64]);
    }
}

/// Parses the header in `prefix` (the first bytes of a file of `file_len`
/// bytes) into `slots` (grown as needed) and describes it, checking the
/// rules in the order of a whole-file parse (docs/format.md, "Order of the
/// checks"): R1 prefix-present, R2 header-limit, R3 header-fits, then the
/// header, then R13 exact-length.
pub fn open_prefix(prefix: &[u8], file_len: u64, slots: &mut Vec<Slot>) -> Vec<f64> {
    match open(prefix, file_len, slots) {
        Ok(numbers) => numbers,
        Err(f) => f.encode(),
    }
}

fn open(prefix: &[u8], file_len: u64, slots: &mut Vec<Slot>) -> Result<Vec<f64>, Failure> {
    if file_len < 8 {
        return Err(Error::new(ErrorKind::HeaderTooSmall { len: file_len }).into());
    }
    let parser = Parser::new();
    let needed = parser.bytes_needed(prefix)?;
    if prefix.len() >= 8 && needed > file_len {
        let kind = ErrorKind::InvalidHeaderLength {
            header_len: needed.saturating_sub(8),
            file_len,
        };
        return Err(Error::new(kind).into());
    }
    let Some(prefix) = usize::try_from(needed).ok().and_then(|n| prefix.get(..n)) else {
        return Ok(alloc::vec![needed as f64]);
    };
    let json = prefix.get(8..).unwrap_or_default();
    let want = (json.len() / BYTES_PER_SLOT).saturating_add(1);
    if slots.len() < want {
        slots.resize(want, Slot::EMPTY);
    }
    loop {
        let mut describer = Describer::new(json);
        match parser.parse_header_with(prefix, &mut slots[..], &mut describer) {
            Ok(Status::Complete(header)) => {
                header.check_file_len(file_len)?;
                return finish(&header, file_len, describer);
            }
            Ok(Status::Partial { needed }) => return Ok(alloc::vec![needed as f64]),
            Err(e) => match e.kind() {
                ErrorKind::CapacityExceeded { capacity, needed } if needed > capacity => {
                    let n = usize::try_from(needed).map_err(|_| Failure::from(e))?;
                    slots.resize(n, Slot::EMPTY);
                }
                _ => return Err(e.into()),
            },
        }
    }
}

/// The head, the spans and the metadata, after a successful parse of a
/// file of `file_len` bytes; the tensors put in offset order if the header
/// lists them otherwise.
fn finish(
    header: &Header<'_, &mut [Slot]>,
    file_len: u64,
    d: Describer<'_>,
) -> Result<Vec<f64>, Failure> {
    // The last tensor in offset order ends at the file's end: some data
    // ends above 2^53 exactly when the file does.
    if d.unsafe_number || file_len > MAX_SAFE {
        first_unsafe(header)?;
    }
    let Describer {
        mut out,
        used,
        mut names,
        named,
        pairs,
        reordered,
        ..
    } = d;
    out.truncate(used);
    names.truncate(named);
    // (Files from the reference writer list tensors in offset order.)
    if reordered {
        // Both in header order, two numbers a tensor: gathered again by
        // each tensor's place in the header.
        let (tensors, spans) = (out.get(HEAD_NUMBERS..).unwrap_or_default().to_vec(), names);
        names = Vec::with_capacity(spans.len());
        out.truncate(HEAD_NUMBERS);
        for t in header.iter() {
            let at = t.header_index().saturating_mul(TENSOR_NUMBERS);
            let pair = at..at.saturating_add(TENSOR_NUMBERS);
            out.extend_from_slice(tensors.get(pair.clone()).unwrap_or_default());
            names.extend_from_slice(spans.get(pair).unwrap_or_default());
        }
    }
    out.extend_from_slice(&names);
    out.extend_from_slice(&pairs);
    let head: [f64; HEAD_NUMBERS] = [
        0.0,
        header.header_len() as f64,
        header.len() as f64,
        header.metadata().map_or(-1.0, |m| m.len() as f64),
        if header.is_plain_ascii() { 1.0 } else { 0.0 },
    ];
    const _: () = assert!(
        STATUS == 0
            && HEAD_HEADER_LEN == 1
            && HEAD_TENSORS == 2
            && HEAD_PAIRS == 3
            && HEAD_PLAIN == 4
            && HEAD_NUMBERS == 5
    );
    if let Some(slot) = out.get_mut(..HEAD_NUMBERS) {
        slot.copy_from_slice(&head);
    }
    Ok(out)
}

/// The first tensor, in data-offset order, whose data ends above 2^53 in
/// the file or that has a dimension above 2^53 (JS numbers would round
/// them).
#[cold]
fn first_unsafe(header: &Header<'_, &mut [Slot]>) -> Result<(), Failure> {
    let json = header.json();
    let data_start = header.data_start();
    for t in header.iter() {
        let name = span(json, t.name());
        let abs_end = data_start.saturating_add(t.data_offsets().1);
        if abs_end > MAX_SAFE {
            return Err(Failure::new(LayerKind::OffsetTooLarge, [abs_end, 0, 0]).with_tensor(name));
        }
        if let Some(d) = t.shape().iter().find(|&d| d > MAX_SAFE) {
            return Err(Failure::new(LayerKind::DimensionTooLarge, [d, 0, 0]).with_tensor(name));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: usize) -> Vec<u8> {
        let mut f = (header.len() as u64).to_le_bytes().to_vec();
        f.extend_from_slice(header.as_bytes());
        f.resize(f.len() + data, 0);
        f
    }

    fn open(prefix: &[u8], len: u64) -> Vec<f64> {
        open_prefix(prefix, len, &mut Vec::new())
    }

    use crate::error::tests::kind_name as kind;

    #[test]
    fn describes_tensors_in_offset_order_then_their_name_spans_then_the_metadata() {
        let h = r#"{"__metadata__":{"k":"v\u00e9"},"b\ud83d\ude00":{"dtype":"F32","shape":[2,1],"data_offsets":[2,10]},"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#;
        let f = file(h, 10);
        let n = open(&f, f.len() as u64);
        let at = |s: &str| h.find(s).unwrap() as f64 + 1.0;
        let shape = |s: &str| h.find(s).unwrap() as f64;
        let hl = h.len() as f64;
        assert_eq!(
            n,
            [
                0.0,
                hl,
                2.0,
                1.0,
                // not plain: escapes
                0.0,
                // "a": ends at 2, U8 (4), shape [2]
                2.0,
                4.0 + 32.0 * shape("[2]"),
                // "b\ud83d\ude00": ends at 10, F32 (17), shape [2, 1]
                10.0,
                17.0 + 32.0 * shape("[2,1]"),
                // their names: "a" (1 byte), "b\ud83d\ude00" (13 bytes)
                at("\"a\""),
                1.0,
                at("\"b\\"),
                13.0,
                // "k": "v\u00e9"
                at("\"k\""),
                1.0,
                at("\"v\\"),
                7.0,
            ]
        );
    }

    #[test]
    fn a_header_in_offset_order_is_described_as_it_is_listed() {
        let h = r#"{"x":{"dtype":"I64","shape":[],"data_offsets":[0,8]},"e":{"dtype":"BOOL","shape":[0],"data_offsets":[8,8]},"y":{"dtype":"F4","shape":[4],"data_offsets":[8,10]}}"#;
        let f = file(h, 10);
        let n = open(&f, f.len() as u64);
        let at = |s: &str| h.find(s).unwrap() as f64 + 1.0;
        let shape = |s: &str| h.find(s).unwrap() as f64;
        assert_eq!(
            n,
            [
                0.0,
                h.len() as f64,
                3.0,
                -1.0,
                // plain ASCII
                1.0,
                8.0,
                20.0 + 32.0 * shape("[]"),
                8.0,
                32.0 * shape("[0]"),
                10.0,
                1.0 + 32.0 * shape("[4]"),
                at("\"x\""),
                1.0,
                at("\"e\""),
                1.0,
                at("\"y\""),
                1.0,
            ]
        );
    }

    #[test]
    fn only_an_ascii_header_without_escapes_is_plain() {
        for (h, plain) in [
            (
                r#"{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}"#,
                1.0,
            ),
            (
                r#"{"é":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}"#,
                0.0,
            ),
            (
                r#"{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"__metadata__":{"k":"\n"}}"#,
                0.0,
            ),
        ] {
            let f = file(h, 0);
            assert_eq!(open(&f, f.len() as u64)[4], plain, "{h}");
        }
    }

    #[test]
    fn metadata_pairs_keep_header_order_wherever_they_are() {
        let h = r#"{"t":{"dtype":"U8","shape":[],"data_offsets":[0,1]},"__metadata__":{"z":"1","a":"2"}}"#;
        let f = file(h, 1);
        let n = open(&f, f.len() as u64);
        let at = |s: &str| h.find(s).unwrap() as f64 + 1.0;
        assert_eq!(&n[..5], [0.0, h.len() as f64, 1.0, 2.0, 1.0]);
        assert_eq!(
            &n[9..],
            [
                at("\"z\""),
                1.0,
                at("\"1\""),
                1.0,
                at("\"a\""),
                1.0,
                at("\"2\""),
                1.0,
            ]
        );
    }

    #[test]
    fn the_first_unsafe_number_in_offset_order_is_reported() {
        // Header order: "late" (dim above 2^53) first; offset order: "early"
        // (dim above 2^53 too) first, which is the one reported.
        let big = MAX_SAFE + 1;
        let h = format!(
            r#"{{"late":{{"dtype":"U8","shape":[{big},0],"data_offsets":[1,1]}},"mid":{{"dtype":"U8","shape":[1],"data_offsets":[0,1]}},"early":{{"dtype":"U8","shape":[0,{big}],"data_offsets":[0,0]}}}}"#
        );
        let f = file(&h, 1);
        let n = open(&f, f.len() as u64);
        assert_eq!(kind(&n), "DimensionTooLarge");
        let early = h.find("\"early\"").unwrap() as f64 + 1.0;
        assert_eq!(&n[2..4], [early, 5.0]);
    }

    #[test]
    fn asks_for_more_bytes_then_checks_the_length_like_a_whole_parse() {
        let f = file(
            r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#,
            1,
        );
        let len = f.len() as u64;
        assert_eq!(open(&f[..3], len), [8.0]);
        assert_eq!(open(&f[..8], len), [(len - 1) as f64]);
        assert_eq!(open(&f[..20], len), [(len - 1) as f64]);
        let n = open(&f[..8], 20);
        assert_eq!(kind(&n), "InvalidHeaderLength");
        assert_eq!(&n[5..9], [0.0, (len - 9) as f64, 0.0, 20.0]);
        assert_eq!(kind(&open(&f, len + 1)), "MetadataIncompleteBuffer");
        assert_eq!(kind(&open(&f[..2], 2)), "HeaderTooSmall");
    }

    #[test]
    fn errors_name_the_tensor_span_and_offset() {
        let h = r#"{"x\n":{"dtype":"F33","shape":[],"data_offsets":[0,4]}}"#;
        let f = file(h, 4);
        let n = open(&f, f.len() as u64);
        assert_eq!(kind(&n), "UnknownDtype");
        assert_eq!(&n[1..5], [16.0, 2.0, 3.0, -1.0]);
    }

    #[test]
    fn offsets_and_dims_above_2_53_are_refused() {
        let end = MAX_SAFE;
        let h = format!(r#"{{"t":{{"dtype":"U8","shape":[{end}],"data_offsets":[0,{end}]}}}}"#);
        let f = file(&h, 0);
        let n = open(&f, f.len() as u64 + end);
        assert_eq!(kind(&n), "OffsetTooLarge");
        assert_eq!(&n[2..4], [2.0, 1.0]);
        let h = format!(
            r#"{{"t":{{"dtype":"U8","shape":[{},0],"data_offsets":[0,0]}}}}"#,
            end + 1
        );
        let f = file(&h, 0);
        let n = open(&f, f.len() as u64);
        assert_eq!(kind(&n), "DimensionTooLarge");
        assert_eq!(&n[5..7], [(end >> 32) as f64, 1.0]);
    }

    #[test]
    fn a_file_may_end_at_2_53_not_a_byte_past_it() {
        // Listed out of offset order: "b" and the empty "z" end where the file does.
        let header = |e: u64| {
            let b = e - 1;
            format!(
                r#"{{"z":{{"dtype":"U8","shape":[0],"data_offsets":[{e},{e}]}},"b":{{"dtype":"U8","shape":[{b}],"data_offsets":[1,{e}]}},"a":{{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}}}"#
            )
        };
        // (The ends have 16 digits either way: the header's length is fixed.)
        let data_start = 8 + header(MAX_SAFE).len() as u64;
        for past in [0, 1] {
            let e = MAX_SAFE - data_start + past;
            let h = header(e);
            let f = file(&h, 0);
            let n = open(&f, f.len() as u64 + e);
            if past == 0 {
                let shape = |s: &str| h.find(s).unwrap() as f64;
                assert_eq!(n[0], 0.0);
                assert_eq!(
                    &n[5..11],
                    [
                        1.0,
                        4.0 + 32.0 * shape("[1]"),
                        e as f64,
                        4.0 + 32.0 * shape(&format!("[{}]", e - 1)),
                        e as f64,
                        4.0 + 32.0 * shape("[0]"),
                    ]
                );
            } else {
                assert_eq!(kind(&n), "OffsetTooLarge");
                // The first in offset order to end past 2^53: "b", at 2^53 + 1.
                assert_eq!(&n[2..4], [h.find("\"b\"").unwrap() as f64 + 1.0, 1.0]);
                assert_eq!(&n[5..7], [(MAX_SAFE >> 32) as f64, 1.0]);
            }
        }
        // Without tensors a file is its header: longer is another error.
        let f = file("{}", 0);
        assert_eq!(kind(&open(&f, MAX_SAFE + 1)), "MetadataIncompleteBuffer");
    }

    #[test]
    fn a_sub_byte_tensor_can_hold_a_dim_above_2_53_in_fewer_bytes() {
        // F4: 2^53 + 2 elements in 2^52 + 1 bytes.
        let dim = MAX_SAFE + 2;
        let bytes = dim / 2;
        let h = format!(r#"{{"t":{{"dtype":"F4","shape":[{dim}],"data_offsets":[0,{bytes}]}}}}"#);
        let f = file(&h, 0);
        let n = open(&f, f.len() as u64 + bytes);
        assert_eq!(kind(&n), "DimensionTooLarge");
        // The same count as F8 would need 2^53 + 2 bytes: its end is refused first.
        let h =
            format!(r#"{{"t":{{"dtype":"F8_E4M3","shape":[{dim}],"data_offsets":[0,{dim}]}}}}"#);
        let f = file(&h, 0);
        assert_eq!(kind(&open(&f, f.len() as u64 + dim)), "OffsetTooLarge");
    }

    #[test]
    fn the_table_grows_for_metadata_heavy_headers() {
        let pairs: Vec<String> = (0..500).map(|i| format!(r#""k{i}":"v""#)).collect();
        let h = format!(r#"{{"__metadata__":{{{}}}}}"#, pairs.join(","));
        let f = file(&h, 0);
        let n = open(&f, f.len() as u64);
        assert_eq!(n[0], 0.0);
        assert_eq!(n[3], 500.0);
        assert_eq!(n.len(), 5 + 500 * 4);
    }
}
