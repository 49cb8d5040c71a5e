//! Numbers in the header: reading a run of digits (eight at a time), and
//! deciding exactly, from its decimal digits, whether a JSON number is
//! finite as an f64.

use super::string::HIGHS;
use crate::mode;

/// Eight bytes, each the value of one ASCII digit: `0x30` in every byte.
const ZEROS: u64 = 0x3030_3030_3030_3030;

/// The high bit of each byte of `v` (a word minus [`ZEROS`]) that was not an
/// ASCII digit. Bytes above the first flagged one may be flagged falsely (a
/// borrow carries upward), but the lowest flagged byte is exact.
#[inline]
const fn non_digit_mask(v: u64) -> u64 {
    (v | v.wrapping_add(0x7676_7676_7676_7676)) & HIGHS
}

/// The number eight digit values make, the first in the lowest byte.
#[inline]
const fn digit_values(v: u64) -> u64 {
    let v = (v.wrapping_mul(10).wrapping_add(v >> 8)) & 0x00ff_00ff_00ff_00ff;
    let v = (v.wrapping_mul(100).wrapping_add(v >> 16)) & 0x0000_ffff_0000_ffff;
    v.wrapping_mul(10_000).wrapping_add(v >> 32) & 0xffff_ffff
}

/// Powers of ten up to 10^7.
const POW10: [u64; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];

/// The run of ASCII digits that `bytes` starts with: its value (exact when
/// the run is at most 19 digits long, which always fits a `u64`) and its
/// length. Reads eight bytes at a time while eight are there.
#[cfg_attr(not(small), inline(always))]
pub(crate) fn leading_digits(bytes: &[u8]) -> (u64, usize) {
    let mut value = 0u64;
    let mut len = 0usize;
    let mut rest = bytes;
    // Small builds read bytewise: smaller code.
    while let Some((word, next)) = rest.split_first_chunk::<8>().filter(|_| mode::WORDWISE) {
        let v = u64::from_le_bytes(*word).wrapping_sub(ZEROS);
        let mask = non_digit_mask(v);
        if mask == 0 {
            value = value
                .wrapping_mul(100_000_000)
                .wrapping_add(digit_values(v));
            len = len.wrapping_add(8);
            rest = next;
            continue;
        }
        // `n` digits (0..=7) before the first other byte: shift them to the
        // top so the bytes below read as leading zeros.
        let n = mask.trailing_zeros() / 8;
        if n > 0 {
            let scale = POW10.get(n as usize).copied().unwrap_or(1);
            let low = digit_values(v << (64u32.wrapping_sub(n.wrapping_mul(8)) & 63));
            value = value.wrapping_mul(scale).wrapping_add(low);
            len = len.wrapping_add(n as usize);
        }
        return (value, len);
    }
    for &b in rest {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        value = value.wrapping_mul(10).wrapping_add(u64::from(digit));
        len = len.wrapping_add(1);
    }
    (value, len)
}

/// Significant digits of 2^1024 − 2^970, the smallest magnitude that rounds
/// to infinity as an f64 (a tie, which rounds to even: away from f64::MAX).
pub(super) const F64_OVERFLOW_DIGITS: &[u8] = b"179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792";

/// [`F64_OVERFLOW_DIGITS`] two to a byte (binary-coded decimal, first digit
/// in the high nibble): half the bytes in flash. Built at compile time.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)] // evaluated at compile time
const F64_OVERFLOW_BCD: [u8; F64_OVERFLOW_DIGITS.len().div_ceil(2)] = {
    let mut packed = [0u8; F64_OVERFLOW_DIGITS.len().div_ceil(2)];
    let mut i = 0;
    while i < F64_OVERFLOW_DIGITS.len() {
        packed[i / 2] |= (F64_OVERFLOW_DIGITS[i] - b'0') << (4 * (1 - i % 2));
        i += 1;
    }
    packed
};

/// Digit `i` of [`F64_OVERFLOW_DIGITS`] (an ASCII digit), from the packed table.
fn overflow_digit(i: usize) -> Option<u8> {
    if i >= F64_OVERFLOW_DIGITS.len() {
        return None;
    }
    let byte = F64_OVERFLOW_BCD.get(i / 2)?;
    let digit = if i % 2 == 0 { byte >> 4 } else { byte & 0x0f };
    Some(digit | b'0')
}

/// Whether a number with these digits (`mantissa`: the integer and
/// fraction digits with the point, `int_digits` of them before it) times
/// 10^`exp` is finite as an f64, the way serde_json reads it: below the
/// smallest magnitude that rounds to infinity. Decided exactly from the
/// decimal digits (no float parsing: that would cost kilobytes of code and
/// stack on a microcontroller).
#[inline]
pub(crate) fn finite(mantissa: &[u8], int_digits: usize, exp: i32) -> bool {
    // The value is 0.D × 10^point, D the digits from the first nonzero one.
    let Some(first) = mantissa.iter().position(|&b| !matches!(b, b'0' | b'.')) else {
        return true; // zero
    };
    // Leading zeros before `first`: all of them but a '.' (at `int_digits`).
    let zeros = if first > int_digits {
        first.saturating_sub(1)
    } else {
        first
    };
    let point = i32::try_from(int_digits)
        .unwrap_or(i32::MAX)
        .saturating_sub(i32::try_from(zeros).unwrap_or(i32::MAX))
        .saturating_add(exp);
    match point.cmp(&309) {
        core::cmp::Ordering::Less => true,
        core::cmp::Ordering::Greater => false,
        core::cmp::Ordering::Equal => {
            // Compare 0.D with 0.T digit by digit; D ≥ T overflows. T has
            // no trailing zeros, so D running out first means D < T.
            let significant = mantissa.get(first..).unwrap_or_default();
            let mut digits = significant.iter().filter(|&&b| b != b'.');
            let mut at = 0usize;
            loop {
                match (digits.next(), overflow_digit(at)) {
                    (Some(&d), Some(t)) if d == t => at = at.saturating_add(1),
                    (Some(&d), Some(t)) => break d < t,
                    (Some(_), None) => break false,
                    (None, t) => break t.is_some(),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_threshold_digits_match() {
        let unpacked: std::vec::Vec<u8> = (0..F64_OVERFLOW_DIGITS.len())
            .filter_map(overflow_digit)
            .collect();
        assert_eq!(unpacked, F64_OVERFLOW_DIGITS);
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "an exhaustive sweep of safe code: slow under Miri, and natively tested"
    )]
    fn leading_digits_matches_a_bytewise_reading() {
        let naive = |b: &[u8]| {
            let len = b.iter().take_while(|c| c.is_ascii_digit()).count();
            let value = b[..len].iter().fold(0u64, |v, &d| {
                v.wrapping_mul(10).wrapping_add(u64::from(d - b'0'))
            });
            (value, len)
        };
        let enders: [&[u8]; 6] = [b"", b",", b"]", b"/", b":", "é".as_bytes()];
        for digits in 0..=24 {
            for &end in &enders {
                for pad in 0..9 {
                    let mut text: std::vec::Vec<u8> =
                        (0..digits).map(|i| b"9081726354"[i % 10]).collect();
                    text.extend_from_slice(end);
                    text.extend(core::iter::repeat_n(b'7', pad));
                    let got = leading_digits(&text);
                    let want = naive(&text);
                    assert_eq!(got.1, want.1, "{text:?}");
                    if want.1 <= 19 {
                        assert_eq!(got.0, want.0, "{text:?}");
                    }
                }
            }
        }
    }
}
