//! Opening a header and describing it to JS as numbers alone, in the same
//! pass as the parse (a [`Visitor`]).
//!
//! Names do not cross: JS holds the header bytes and decodes a name from
//! its span when asked (`wasm/js/api.js`, `Description`). A span is the raw
//! string content between the quotes, as `[start, len]` (header byte
//! offset and byte length; JS unescapes what holds a backslash).
//!
//! Success: `[0, N, tensors, pairs (-1 = no metadata), reordered]`, then per tensor in
//! header order `[dtype, name_start, name_len, begin, end, shape_start]`
//! (the header offset of its shape's `[`: JS reads the dims from its copy
//! of the header text when asked), then per metadata pair in header order
//! `[key_start, key_len, value_start, value_len]`, then, when `reordered`
//! is 1 (the header does not list tensors in data-offset order), in
//! data-offset order, where each tensor's numbers start (its index in the
//! whole array). (Element counts are `(end − begin) × 8 / bits`: the core
//! validated exactly that.) Every dim and offset is at most 2^53.
//!
//! More bytes needed: `[needed]` (always > 0). An error: as in `error.rs`.

use alloc::vec::Vec;

use safetensors_nano::{
    Dtype, Error, ErrorKind, Header, Name, Parser, Shape, Slot, Status, Visitor,
};

use crate::error::{Failure, Kind, Span};

use crate::MAX_SAFE;

/// Bytes of header per table slot to start with: the smallest tensor entry
/// (`"":{"dtype":"U8","shape":[],"data_offsets":[0,0]}`) is 49 bytes, so
/// only metadata-heavy headers need a second pass.
const BYTES_PER_SLOT: usize = 48;

/// Numbers before the first tensor's (`HEAD_NUMBERS` in api.js).
const HEAD: usize = 5;

/// Numbers per tensor (`TENSOR_NUMBERS` in api.js).
const TENSOR_NUMBERS: usize = 6;

/// A raw name's span in `json` (the name borrows from it).
fn span(json: &[u8], name: Name<'_>) -> Span {
    let raw = name.raw();
    let start = (raw.as_ptr() as usize).wrapping_sub(json.as_ptr() as usize);
    (start as u64, raw.len() as u64)
}

/// Writes the description while the core parses.
struct Describer<'h> {
    json: &'h [u8],
    /// The head, then the tensors' numbers in header order, in
    /// `out[..used]` (the rest is room, zeroed ahead: see [`Describer::record`]).
    out: Vec<f64>,
    used: usize,
    /// The metadata pairs' spans.
    pairs: Vec<f64>,
    /// Whether a dimension or an absolute data offset is above 2^53 (then
    /// [`first_unsafe`] finds which, as a reader in offset order would).
    unsafe_number: bool,
    /// The last tensor's `data_offsets`: while each tensor's are at least
    /// the last one's, the layout check's order (offsets, then header
    /// position) is the header order.
    last_offsets: (u64, u64),
    /// Whether the header lists tensors out of data-offset order.
    reordered: bool,
}

impl<'h> Describer<'h> {
    fn new(json: &'h [u8]) -> Self {
        // Six numbers (seven with the offset order) per tensor entry of
        // ~100 bytes, up to 64 Ki numbers: past that the Vec grows as the
        // entries come (a header can be one long metadata value).
        let numbers = (json.len() / 14).min(1 << 16);
        Describer {
            json,
            out: alloc::vec![0.0; numbers.saturating_add(HEAD)],
            used: HEAD,
            pairs: Vec::new(),
            unsafe_number: false,
            last_offsets: (0, 0),
            reordered: false,
        }
    }

    /// Appends a tensor's six numbers. Stored one by one into room made
    /// ahead: in the size-first .wasm a `push` is a call and a copy of six
    /// is a `memory.copy`, each several times slower than six stores.
    fn record(&mut self, dtype: Dtype, [start, len, begin, end]: [u64; 4], shape_start: f64) {
        let at = self.used;
        let next = at.saturating_add(TENSOR_NUMBERS);
        if self.out.len() < next {
            let room = next.max(self.out.len().saturating_mul(2));
            self.out.resize(room, 0.0);
        }
        if let Some([d, s, l, b, e, shape]) = self.out.get_mut(at..next) {
            *d = f64::from(dtype as u8);
            *s = start as f64;
            *l = len as f64;
            *b = begin as f64;
            *e = end as f64;
            *shape = shape_start;
        }
        self.used = next;
    }
}

impl<'h> Visitor<'h> for Describer<'h> {
    fn tensor(&mut self, name: Name<'h>, dtype: Dtype, shape: Shape<'h>, (begin, end): (u64, u64)) {
        let (start, len) = span(self.json, name);
        let abs_end = (self.json.len() as u64)
            .saturating_add(8)
            .saturating_add(end);
        self.unsafe_number |= abs_end > MAX_SAFE;
        // A tensor of whole bytes that has any fits its dims in its byte
        // count, so they are at most 2^53 when its end is; only the others
        // need their dims read.
        if begin == end || dtype.bits() < 8 {
            self.unsafe_number |= shape.iter().any(|d| d > MAX_SAFE);
        }
        self.reordered |= (begin, end) < self.last_offsets;
        self.last_offsets = (begin, end);
        self.record(dtype, [start, len, begin, end], shape.offset() as f64);
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
/// rules in the order of a whole-file parse: R1, R2, R3, then the header,
/// then R13.
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
                return finish(&header, describer);
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

/// The head, the metadata and the offset order, after a successful parse.
fn finish(header: &Header<'_, &mut [Slot]>, d: Describer<'_>) -> Result<Vec<f64>, Failure> {
    if d.unsafe_number {
        first_unsafe(header)?;
    }
    let Describer {
        mut out,
        used,
        pairs,
        reordered,
        ..
    } = d;
    out.truncate(used);
    out.extend_from_slice(&pairs);
    // (Files from the reference writer list tensors in offset order.)
    if reordered {
        out.reserve(header.len());
        for t in header.iter() {
            let at = t.header_index().saturating_mul(TENSOR_NUMBERS);
            out.push(at.saturating_add(HEAD) as f64);
        }
    }
    let head = [
        0.0,
        header.header_len() as f64,
        header.len() as f64,
        header.metadata().map_or(-1.0, |m| m.len() as f64),
        if reordered { 1.0 } else { 0.0 },
    ];
    if let Some(slot) = out.get_mut(..HEAD) {
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
            return Err(Failure::new(Kind::OffsetTooLarge, [abs_end, 0, 0]).with_tensor(name));
        }
        if let Some(d) = t.shape().iter().find(|&d| d > MAX_SAFE) {
            return Err(Failure::new(Kind::DimensionTooLarge, [d, 0, 0]).with_tensor(name));
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
    fn describes_tensors_in_header_order_with_name_spans_then_the_offset_order() {
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
                // reordered
                1.0,
                // [5] "b\ud83d\ude00": F32 (17), 13 bytes, [2, 10], shape [2, 1]
                17.0,
                at("\"b\\"),
                13.0,
                2.0,
                10.0,
                shape("[2,1]"),
                // [11] "a": U8 (4), 1 byte, [0, 2], shape [2]
                4.0,
                at("\"a\""),
                1.0,
                0.0,
                2.0,
                shape("[2]"),
                // "k": "v\u00e9"
                at("\"k\""),
                1.0,
                at("\"v\\"),
                7.0,
                // offset order: "a", then "b\ud83d\ude00"
                11.0,
                5.0,
            ]
        );
    }

    #[test]
    fn metadata_pairs_keep_header_order_wherever_they_are() {
        let h = r#"{"t":{"dtype":"U8","shape":[],"data_offsets":[0,1]},"__metadata__":{"z":"1","a":"2"}}"#;
        let f = file(h, 1);
        let n = open(&f, f.len() as u64);
        let at = |s: &str| h.find(s).unwrap() as f64 + 1.0;
        // One tensor, in offset order: no order follows the pairs.
        assert_eq!(&n[..5], [0.0, h.len() as f64, 1.0, 2.0, 0.0]);
        assert_eq!(
            &n[11..],
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
