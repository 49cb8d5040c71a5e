//! The layout check (docs/format.md R9 offsets-tile to R12 size-matches):
//! in data-offset order, the tensors must tile the byte buffer from 0 with
//! no hole or overlap, and each must be exactly as long as its shape and
//! dtype say ([`verdict`], decided while parsing).

use super::sort::sort_by;
use super::string::tensor_error;
use crate::dtype::Dtype;
use crate::error::{Error, ErrorKind};
use crate::table::{Entry, Verdict};
use crate::view::shape::{checked_mul, Dims};

/// What the layout check will say of a tensor's size: `elements` is `None`
/// when the element count overflowed.
#[cfg_attr(not(small), inline(always))]
pub(crate) fn verdict(dtype: Dtype, elements: Option<u64>, begin: u64, end: u64) -> Verdict {
    match elements {
        None => Verdict::Overflow,
        Some(n) => match checked_mul(n, u64::from(dtype.bits())) {
            None => Verdict::Overflow,
            Some(bits) if bits % 8 != 0 => Verdict::Misaligned,
            Some(bits) if end.wrapping_sub(begin) != bits / 8 => Verdict::WrongSize,
            Some(_) => Verdict::Ok,
        },
    }
}

/// Where the layout check failed: the tensor (its entry) and where it
/// should have begun. [`Misfit::error`] says what is wrong with it.
#[derive(Clone, Copy)]
pub(crate) struct Misfit<'e> {
    entry: &'e Entry,
    expected_begin: u64,
}

/// Sorts `by_offset` into (begin, end, header position) order and checks
/// the tiling. Returns the byte buffer length the header describes.
pub(crate) fn tile<'e>(entries: &'e [Entry], by_offset: &mut [u32]) -> Result<u64, Misfit<'e>> {
    for (i, slot) in by_offset.iter_mut().enumerate() {
        *slot = u32::try_from(i).unwrap_or(u32::MAX);
    }
    // Files from the reference writer list tensors in offset order. When
    // the header order tiles, it is the sorted order too (each tensor
    // begins where the last ended, so neither begin nor end goes down, and
    // ties keep header positions): no sort needed, and no error to report.
    if let Ok(len) = tiling(entries.iter()) {
        return Ok(len);
    }
    let key = |i: u32| {
        entries
            .get(i as usize)
            .map_or((0, 0, i), |e| (e.begin(), e.end(), i))
    };
    sort_by(by_offset, |&a, &b| key(a) < key(b));
    tiling(by_offset.iter().filter_map(|&i| entries.get(i as usize)))
}

/// Checks that `entries`, in this order, tile the byte buffer from 0 with
/// every size right; returns its length, or the first that does not fit.
fn tiling<'e>(entries: impl Iterator<Item = &'e Entry>) -> Result<u64, Misfit<'e>> {
    let mut expected_begin = 0u64;
    for entry in entries {
        let (begin, end) = (entry.begin(), entry.end());
        if begin != expected_begin || end < begin || entry.verdict() != Verdict::Ok {
            return Err(Misfit {
                entry,
                expected_begin,
            });
        }
        expected_begin = end;
    }
    Ok(expected_begin)
}

impl Misfit<'_> {
    /// The error: the tensor's offsets first (docs/format.md R9 offsets-tile
    /// to R11 whole-bytes), then its size (R12 size-matches).
    #[cold]
    pub(crate) fn error(self, json: &[u8]) -> Error {
        let entry = self.entry;
        let (begin, end) = (entry.begin(), entry.end());
        let expected_begin = self.expected_begin;
        let kind = if begin != expected_begin || end < begin {
            ErrorKind::InvalidOffset {
                expected_begin,
                begin,
                end,
            }
        } else {
            match entry.verdict() {
                Verdict::Overflow => ErrorKind::ValidationOverflow,
                Verdict::Misaligned => ErrorKind::MisalignedSlice {
                    elements: element_count(json, entry),
                },
                _ => ErrorKind::TensorInvalidInfo {
                    expected: entry
                        .dtype()
                        .byte_len(element_count(json, entry))
                        .unwrap_or(0),
                    found: end.wrapping_sub(begin),
                },
            }
        };
        tensor_error(json, kind, entry.name_start())
    }
}

/// The element count of a tensor whose verdict is not
/// [`Verdict::Overflow`]: the parser found that its shape × dtype bit count
/// fits 64 bits (or that a dimension is 0), so a wrapping product is exact.
fn element_count(json: &[u8], entry: &Entry) -> u64 {
    Dims::at(json, entry.shape_start()).fold(1, u64::wrapping_mul)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorKind, Table};
    use proptest::prelude::*;
    use std::vec::Vec;

    proptest! {
        /// Whether or not the header order tiles (the fast path), `tile`
        /// answers as sorting by (begin, end, header position) and
        /// checking in that order does: the same length, order, or first
        /// misfit.
        #[test]
        fn tile_is_a_check_in_sorted_order(
            spans in proptest::collection::vec((0u64..6, 0u64..4, proptest::bool::weighted(0.9)), 0..8),
            in_order in any::<bool>(),
        ) {
            // Half the cases tile in header order (ends chained from 0),
            // sizes mostly right.
            let mut at = 0;
            let entries: Vec<Entry> = spans
                .iter()
                .map(|&(begin, len, ok)| {
                    let begin = if in_order { at } else { begin };
                    at = begin + len;
                    let verdict = if ok { Verdict::Ok } else { Verdict::WrongSize };
                    Entry::tensor(0, Dtype::U8, 0, (begin, begin + len), verdict)
                })
                .collect();
            let mut order: Vec<u32> = (0..entries.len() as u32).collect();
            order.sort_by_key(|&i| (entries[i as usize].begin(), entries[i as usize].end(), i));
            let mut expected_begin = 0;
            let mut want = Ok(0);
            for &i in &order {
                let e = &entries[i as usize];
                if e.begin() != expected_begin || e.end() < e.begin() || e.verdict() != Verdict::Ok {
                    want = Err((i, expected_begin));
                    break;
                }
                expected_begin = e.end();
                want = Ok(expected_begin);
            }
            let mut by_offset = std::vec![0u32; entries.len()];
            let got = tile(&entries, &mut by_offset).map_err(|m| {
                let i = entries.iter().position(|e| core::ptr::eq(e, m.entry)).unwrap_or(usize::MAX);
                (i as u32, m.expected_begin)
            });
            prop_assert_eq!(got, want);
            if got.is_ok() {
                prop_assert_eq!(by_offset, order);
            }
        }
    }

    fn parse(header: &str, data: usize) -> Result<(), ErrorKind> {
        let mut file = Vec::new();
        file.extend_from_slice(&(header.len() as u64).to_le_bytes());
        file.extend_from_slice(header.as_bytes());
        file.resize(file.len() + data, 0);
        Table::<4>::new()
            .parse(&file)
            .map(|_| ())
            .map_err(|e| e.kind())
    }

    #[test]
    fn size_errors_report_the_exact_counts() {
        let t = |dtype: &str, shape: &str, end: u64| {
            let header = std::format!(
                r#"{{"t":{{"dtype":"{dtype}","shape":{shape},"data_offsets":[0,{end}]}}}}"#
            );
            parse(&header, end as usize)
        };
        assert_eq!(
            t("F4", "[3]", 2),
            Err(ErrorKind::MisalignedSlice { elements: 3 })
        );
        assert_eq!(
            t("F6_E2M3", "[5,1]", 4),
            Err(ErrorKind::MisalignedSlice { elements: 5 })
        );
        assert_eq!(
            t("F32", "[3,5]", 4),
            Err(ErrorKind::TensorInvalidInfo {
                expected: 60,
                found: 4
            })
        );
        // A zero dimension after a product that overflows: 0 elements.
        assert_eq!(
            t("F32", "[4294967296,4294967296,0]", 4),
            Err(ErrorKind::TensorInvalidInfo {
                expected: 0,
                found: 4
            })
        );
        assert_eq!(
            t("U8", "[4294967296,4294967296]", 4),
            Err(ErrorKind::ValidationOverflow)
        );
        assert_eq!(
            t("F4", "[2305843009213693951]", 4),
            Err(ErrorKind::MisalignedSlice {
                elements: 2305843009213693951
            })
        );
        assert_eq!(
            t("U8", "[2305843009213693951]", 4),
            Err(ErrorKind::TensorInvalidInfo {
                expected: 2305843009213693951,
                found: 4
            })
        );
        assert_eq!(t("F32", "[2,2]", 16), Ok(()));
    }
}
