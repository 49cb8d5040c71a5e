//! Layout validation (R9–R12): in data-offset order, the tensors must tile
//! the byte buffer from 0 with no hole or overlap, and each must be exactly
//! as long as its shape and dtype say.

use crate::error::{Error, ErrorKind};
use crate::header::{element_count, tensor_ref, Dims};
use crate::sort::sort_by;
use crate::table::{Entry, Verdict};

/// Sorts `by_offset` into (begin, end, header position) order and checks
/// the tiling. Returns the byte buffer length the header describes.
pub(crate) fn tile(json: &[u8], entries: &[Entry], by_offset: &mut [u32]) -> Result<u64, Error> {
    for (i, slot) in by_offset.iter_mut().enumerate() {
        *slot = u32::try_from(i).unwrap_or(u32::MAX);
    }
    let key = |i: u32| {
        entries
            .get(i as usize)
            .map_or((0, 0, i), |e| (e.begin(), e.end(), i))
    };
    sort_by(by_offset, |&a, &b| key(a) < key(b));
    let mut expected_begin = 0u64;
    for &i in by_offset.iter() {
        let Some(entry) = entries.get(i as usize) else {
            continue;
        };
        let (begin, end) = (entry.begin(), entry.end());
        let fail = |kind| {
            let start = entry.name_start();
            Err(Error::at(kind, start.saturating_sub(1)).with_tensor(tensor_ref(json, start)))
        };
        if begin != expected_begin || end < begin {
            return fail(ErrorKind::InvalidOffset {
                expected_begin,
                begin,
                end,
            });
        }
        expected_begin = end;
        match entry.verdict() {
            Verdict::Ok => {}
            Verdict::Overflow => return fail(ErrorKind::ValidationOverflow),
            Verdict::Misaligned => {
                let elements = element_count(Dims::at(json, entry.shape_start())).unwrap_or(0);
                return fail(ErrorKind::MisalignedSlice { elements });
            }
            Verdict::WrongSize => {
                let expected = element_count(Dims::at(json, entry.shape_start()))
                    .and_then(|n| entry.dtype().byte_len(n))
                    .unwrap_or(0);
                return fail(ErrorKind::TensorInvalidInfo {
                    expected,
                    found: end.wrapping_sub(begin),
                });
            }
        }
    }
    Ok(expected_begin)
}
