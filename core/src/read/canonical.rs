//! The fast path for tensor entries written byte for byte the way the
//! reference writer writes them — `{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}`:
//! no whitespace, no escapes, the three fields in that order, integers
//! without leading zeros. Nearly every file has only such entries.
//!
//! Anything else, including every error, makes it return `None`, and the
//! general grammar reads the entry from the same place (a differential test
//! pins that both read every reference-written file the same). Small
//! builds do not take it ([`mode::SHORTCUTS`](crate::mode::SHORTCUTS)):
//! less code.

use super::number::leading_digits;
use super::validate::verdict;
use crate::dtype::Dtype;
use crate::table::Entry;
use crate::view::shape::ElementCount;

/// Reads the entry at the start of `rest`, which is at header offset `at`,
/// for the tensor whose name starts at `name_start`. Returns the entry and
/// its length in bytes.
#[inline]
pub(crate) fn tensor(rest: &[u8], at: usize, name_start: usize) -> Option<(Entry, usize)> {
    let after_open = rest.strip_prefix(b"{\"dtype\":\"")?;
    let short = after_open.get(..after_open.len().min(12))?;
    let dtype_len = short.iter().position(|&b| b == b'"')?;
    let dtype = Dtype::from_name(short.get(..dtype_len)?)?;
    let after_dtype = after_open.get(dtype_len..)?;
    let mut dims = after_dtype.strip_prefix(b"\",\"shape\":[")?;
    let shape_start = rest.len().checked_sub(dims.len())?.checked_sub(1)?;
    let mut count = ElementCount::new();
    if let Some(after) = dims.strip_prefix(b"]") {
        dims = after;
    } else {
        loop {
            let (dim, len) = uint(dims)?;
            count.push(dim);
            let (&next, after) = dims.get(len..)?.split_first()?;
            dims = after;
            match next {
                b',' => continue,
                b']' => break,
                _ => return None,
            }
        }
    }
    let offsets = dims.strip_prefix(b",\"data_offsets\":[")?;
    let (begin, len) = uint(offsets)?;
    let offsets = offsets.get(len..)?.strip_prefix(b",")?;
    let (end, len) = uint(offsets)?;
    let tail = offsets.get(len..)?.strip_prefix(b"]}")?;
    let consumed = rest.len().checked_sub(tail.len())?;
    let elements = count.get();
    let entry = Entry::tensor(
        name_start,
        dtype,
        at.checked_add(shape_start)?,
        (begin, end),
        verdict(dtype, elements, begin, end),
    );
    Some((entry, consumed))
}

/// An integer of one to 19 digits without a leading zero (a `u64` holds
/// every such value) and its length, or `None`.
#[inline(always)]
fn uint(bytes: &[u8]) -> Option<(u64, usize)> {
    let (value, len) = leading_digits(bytes);
    let plain = matches!(len, 1..=19) && (len == 1 || bytes.first() != Some(&b'0'));
    plain.then_some((value, len))
}
