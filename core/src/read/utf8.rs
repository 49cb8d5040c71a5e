//! UTF-8 validation for the header.
//!
//! The header checks UTF-8 only inside strings, on the runs of non-ASCII
//! bytes, and over the whole header only after parsing failed, so builds
//! that count code ([`mode::CORE_UTF8`]) use a small bytewise check instead
//! of `core::str::from_utf8` (pinned to `core`'s by the tests below).

use crate::mode;

/// The first byte where `bytes` stops being UTF-8 (the start of the first
/// invalid or incomplete sequence), or `None` if all of it is: the same
/// position as `core::str::from_utf8`'s `Utf8Error::valid_up_to`.
pub(crate) fn invalid_at(bytes: &[u8]) -> Option<usize> {
    if mode::CORE_UTF8 {
        // `core`'s check is linked anyway there (and faster on long text).
        core::str::from_utf8(bytes).err().map(|e| e.valid_up_to())
    } else {
        bytewise_invalid_at(bytes)
    }
}

/// [`invalid_at`], a byte at a time.
fn bytewise_invalid_at(bytes: &[u8]) -> Option<usize> {
    let mut at = 0usize;
    while let Some(&lead) = bytes.get(at) {
        // Sequence width, and the range of its second byte (RFC 3629:
        // no overlong forms, no surrogates, nothing above U+10FFFF).
        let (width, second): (usize, _) = match lead {
            0x00..=0x7F => {
                at = at.wrapping_add(1);
                continue;
            }
            0xC2..=0xDF => (2, 0x80..=0xBF),
            0xE0 => (3, 0xA0..=0xBF),
            0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80..=0xBF),
            0xED => (3, 0x80..=0x9F),
            0xF0 => (4, 0x90..=0xBF),
            0xF1..=0xF3 => (4, 0x80..=0xBF),
            0xF4 => (4, 0x80..=0x8F),
            _ => return Some(at),
        };
        let tail = bytes.get(at.wrapping_add(1)..).unwrap_or_default();
        let valid = tail.first().is_some_and(|b| second.contains(b))
            && (1..width.wrapping_sub(1)).all(|k| tail.get(k).is_some_and(|&b| b & 0xC0 == 0x80));
        if !valid {
            return Some(at);
        }
        at = at.wrapping_add(width);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::vec::Vec;

    fn std_invalid_at(bytes: &[u8]) -> Option<usize> {
        core::str::from_utf8(bytes).err().map(|e| e.valid_up_to())
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "an exhaustive sweep of safe code: slow under Miri, and natively tested"
    )]
    fn every_sequence_of_up_to_three_bytes_agrees_with_core() {
        // Every lead byte with every second and third byte, then an ASCII
        // or a continuation byte: covers every width's boundaries.
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                assert_eq!(
                    bytewise_invalid_at(&[a, b]),
                    std_invalid_at(&[a, b]),
                    "{a:#x} {b:#x}"
                );
                for c in [
                    0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xF5, 0xFF,
                ] {
                    let s = [a, b, c];
                    assert_eq!(bytewise_invalid_at(&s), std_invalid_at(&s), "{s:x?}");
                    let s = [a, b, c, 0x80, b'x'];
                    assert_eq!(bytewise_invalid_at(&s), std_invalid_at(&s), "{s:x?}");
                }
            }
        }
    }

    proptest! {
        #[test]
        fn agrees_with_core_on_mixed_text(
            text in "\\PC{0,40}",
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut bytes: Vec<u8> = text.into_bytes();
            for (at, b) in edits {
                if !bytes.is_empty() {
                    let i = at.index(bytes.len());
                    bytes[i] = b;
                }
            }
            let end = cut.index(bytes.len() + 1);
            let bytes = &bytes[..end];
            prop_assert_eq!(bytewise_invalid_at(bytes), std_invalid_at(bytes));
        }
    }
}
