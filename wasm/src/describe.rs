//! Opening a header and describing it to JS as numbers alone.
//!
//! Names do not cross: JS holds the header bytes and decodes a name from
//! its span when asked (`wasm/js/api.js`, `Description`). A span is the raw
//! string content between the quotes, as `[start, len]` (header byte
//! offset and byte length; JS unescapes what holds a backslash).
//!
//! Success: `[0, N, tensors, pairs (-1 = no metadata)]`, then per tensor in
//! data-offset order `[dtype, name_start, name_len, begin, end, rank,
//! dims…]`, then per metadata pair `[key_start, key_len, value_start,
//! value_len]`. (Element counts are `(end − begin) × 8 / bits`: the core
//! validated exactly that.)
//!
//! More bytes needed: `[needed]` (always > 0). An error: as in `error.rs`.

use alloc::vec::Vec;

use safetensors_nano::{Error, ErrorKind, Header, Name, Parser, Slot, Status};

use crate::error::{Failure, Kind, Span};

use crate::MAX_SAFE;

/// Bytes of header per table slot to start with: the smallest tensor entry
/// (`"":{"dtype":"U8","shape":[],"data_offsets":[0,0]}`) is 49 bytes, so
/// only metadata-heavy headers need a second pass.
const BYTES_PER_SLOT: usize = 48;

/// Numbers per tensor before its dims.
const TENSOR_NUMBERS: usize = 6;

/// A raw name's span in `json` (the name borrows from it).
fn span(json: &[u8], name: Name<'_>) -> Span {
    let raw = name.raw();
    let start = (raw.as_ptr() as usize).wrapping_sub(json.as_ptr() as usize);
    (start as u64, raw.len() as u64)
}

/// Appends a name's span as `[start, len]`.
fn push_span(out: &mut Vec<f64>, json: &[u8], name: Name<'_>) {
    let (start, len) = span(json, name);
    out.extend_from_slice(&[start as f64, len as f64]);
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
        match parser.parse_header(prefix, &mut slots[..]) {
            Ok(Status::Complete(header)) => {
                header.check_file_len(file_len)?;
                return describe(&header);
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

fn describe(header: &Header<'_, &mut [Slot]>) -> Result<Vec<f64>, Failure> {
    let json = header.json();
    let data_start = header.data_start();
    let meta = header.metadata();
    let pairs = meta.as_ref().map_or(0, |m| m.len());
    // Room for rank-2 tensors and the metadata without growing.
    let room = header
        .len()
        .saturating_mul(TENSOR_NUMBERS.saturating_add(2))
        .saturating_add(pairs.saturating_mul(4))
        .saturating_add(4);
    let mut out = Vec::with_capacity(room);
    out.extend_from_slice(&[
        0.0,
        header.header_len() as f64,
        header.len() as f64,
        meta.as_ref().map_or(-1.0, |m| m.len() as f64),
    ]);
    for t in header.iter() {
        let name = t.name();
        let (start, len) = span(json, name);
        let (begin, end) = t.data_offsets();
        let abs_end = data_start.saturating_add(end);
        if abs_end > MAX_SAFE {
            let f = Failure::new(Kind::OffsetTooLarge, [abs_end, 0, 0]);
            return Err(f.with_tensor((start, len)));
        }
        out.extend_from_slice(&[
            f64::from(t.dtype() as u8),
            start as f64,
            len as f64,
            begin as f64,
            end as f64,
            0.0,
        ]);
        let rank_at = out.len().saturating_sub(1);
        let mut rank = 0u32;
        for d in t.shape().iter() {
            if d > MAX_SAFE {
                let f = Failure::new(Kind::DimensionTooLarge, [d, 0, 0]);
                return Err(f.with_tensor((start, len)));
            }
            out.push(d as f64);
            rank = rank.saturating_add(1);
        }
        if let Some(r) = out.get_mut(rank_at) {
            *r = f64::from(rank);
        }
    }
    if let Some(meta) = meta {
        for (k, v) in meta.iter() {
            push_span(&mut out, json, k);
            push_span(&mut out, json, v);
        }
    }
    Ok(out)
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
    fn describes_tensors_in_offset_order_with_name_spans() {
        let h = r#"{"__metadata__":{"k":"v\u00e9"},"b\ud83d\ude00":{"dtype":"F32","shape":[2,1],"data_offsets":[2,10]},"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#;
        let f = file(h, 10);
        let n = open(&f, f.len() as u64);
        let at = |s: &str| h.find(s).unwrap() as f64 + 1.0;
        let hl = h.len() as f64;
        assert_eq!(
            n,
            [
                0.0,
                hl,
                2.0,
                1.0,
                // "a": U8 (4), 1 byte, [0, 2], shape [2]
                4.0,
                at("\"a\""),
                1.0,
                0.0,
                2.0,
                1.0,
                2.0,
                // "b\ud83d\ude00": F32 (17), 13 bytes, [2, 10], shape [2, 1]
                17.0,
                at("\"b\\"),
                13.0,
                2.0,
                10.0,
                2.0,
                2.0,
                1.0,
                // "k": "v\u00e9"
                at("\"k\""),
                1.0,
                at("\"v\\"),
                7.0,
            ]
        );
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
    fn the_table_grows_for_metadata_heavy_headers() {
        let pairs: Vec<String> = (0..500).map(|i| format!(r#""k{i}":"v""#)).collect();
        let h = format!(r#"{{"__metadata__":{{{}}}}}"#, pairs.join(","));
        let f = file(&h, 0);
        let n = open(&f, f.len() as u64);
        assert_eq!(n[0], 0.0);
        assert_eq!(n[3], 500.0);
        assert_eq!(n.len(), 4 + 500 * 4);
    }
}
