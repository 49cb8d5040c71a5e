//! Scanning string content: finding the bytes inside a string that need a
//! look (eight at a time), and reading back, by where it starts, a string
//! the lexer has already checked: its raw content, and the tensor it names
//! in an error.

use crate::error::{Error, ErrorKind, TensorRef};
use crate::mode;

const ONES: u64 = 0x0101_0101_0101_0101;
/// The high bit of every byte.
pub(crate) const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `v` (little-endian) that is a quote, a
/// backslash, below 0x20 or above 0x7f (the start or middle of a non-ASCII
/// character, which the lexer checks is valid UTF-8). Bytes above the first
/// such byte may be flagged falsely (a borrow carries upward), but the
/// lowest flagged byte is exact.
#[inline]
pub(crate) const fn care_mask(v: u64) -> u64 {
    let quote = zero_bytes(v ^ 0x2222_2222_2222_2222);
    let backslash = zero_bytes(v ^ 0x5c5c_5c5c_5c5c_5c5c);
    let control_or_high = (v.wrapping_sub(0x2020_2020_2020_2020) | v) & HIGHS;
    quote | backslash | control_or_high
}

/// The high bit of each byte of `v` that is zero; exact up to the first.
#[inline]
const fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// The length of the raw content of a string the lexer has already checked,
/// given the bytes from its first content byte: the offset of its closing
/// quote. Eight bytes at a time, stopping only at quotes and backslashes.
pub(crate) fn validated_string_len(content: &[u8]) -> usize {
    let mut at = 0usize;
    // Small builds read bytewise: smaller code.
    while mode::WORDWISE {
        let rest = content.get(at..).unwrap_or_default();
        let Some((word, _)) = rest.split_first_chunk::<8>() else {
            break;
        };
        let v = u64::from_le_bytes(*word);
        let mask = zero_bytes(v ^ 0x2222_2222_2222_2222) | zero_bytes(v ^ 0x5c5c_5c5c_5c5c_5c5c);
        if mask == 0 {
            at = at.saturating_add(8);
            continue;
        }
        at = at.saturating_add((mask.trailing_zeros() / 8) as usize);
        if content.get(at) == Some(&b'"') {
            return at;
        }
        // A backslash: the byte after it is never the end.
        at = at.saturating_add(2);
    }
    while let Some(&b) = content.get(at) {
        match b {
            b'"' => return at,
            b'\\' => at = at.saturating_add(2),
            _ => at = at.saturating_add(1),
        }
    }
    content.len()
}

/// Whether a byte inside a string needs a look: see [`care_mask`].
#[inline]
pub(crate) const fn needs_care(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20 || b > 0x7f
}

/// Length of a validated string's raw content starting at `start`.
pub(crate) fn raw_string_len(json: &[u8], start: usize) -> usize {
    validated_string_len(json.get(start..).unwrap_or_default())
}

/// The raw content of the validated string starting at `start`.
pub(crate) fn raw_string_at(json: &[u8], start: usize) -> &[u8] {
    let len = raw_string_len(json, start);
    json.get(start..start.saturating_add(len))
        .unwrap_or_default()
}

/// The tensor (or metadata key) whose name starts at header byte
/// `name_start`, as an error names it: the span of its raw name.
pub(crate) fn tensor_ref(json: &[u8], name_start: usize) -> TensorRef {
    let len = raw_string_len(json, name_start);
    TensorRef::Header {
        start: u32::try_from(name_start).unwrap_or(u32::MAX),
        len: u32::try_from(len).unwrap_or(u32::MAX),
    }
}

/// An error about the tensor (or metadata key) whose name starts at header
/// byte `name_start`: placed at the name's opening quote, naming it.
pub(crate) fn tensor_error(json: &[u8], kind: ErrorKind, name_start: usize) -> Error {
    Error::at(kind, name_start.saturating_sub(1)).with_tensor(tensor_ref(json, name_start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;

    #[test]
    fn validated_string_len_finds_the_closing_quote() {
        for content in [
            "",
            "a",
            "abcdefg",
            "abcdefgh",
            "model.layers.17.mlp.gate_proj.weight",
            r#"\""#,
            r#"abcdefg\"h\\"#,
            r#"\\\\\\\\\\\\\\\\"#,
            r#"1234567\u00e9\"\\x"#,
            "é😀 unicode",
        ] {
            for after in ["\"", "\":{}", "\"        \"x\""] {
                let text = format!("{content}{after}");
                assert_eq!(
                    validated_string_len(text.as_bytes()),
                    content.len(),
                    "{text:?}"
                );
            }
        }
    }

    #[test]
    fn swar_matches_bytewise_scan() {
        for b in 0..=255u8 {
            let word = u64::from_le_bytes([b'a', b'b', b, b'c', b'd', b'e', b'f', b'g']);
            assert_eq!(care_mask(word) != 0, needs_care(b), "{b}");
            assert_eq!(
                needs_care(b),
                b == b'"' || b == b'\\' || !(0x20..0x80).contains(&b)
            );
        }
    }
}
