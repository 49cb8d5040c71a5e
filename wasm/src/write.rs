//! Planning a file to write through the core writer: the header bytes and
//! where each tensor's data goes. The data itself never enters wasm memory:
//! JS copies it from the caller's buffers into the output.
//!
//! In, numbers: `[count, has_metadata (0/1), pairs]`, then per tensor (in
//! the caller's order) `[dtype, name_len, byte_len, rank, dims…]`, then per
//! metadata pair `[key_len, value_len]`; text: the UTF-8 of the names, then
//! of the keys and values, concatenated (lengths in bytes).
//!
//! Out, numbers: `[0, file_len]`, then per tensor in written order
//! `[caller_index, begin]` (data offsets relative to the end of the header,
//! whose `8 + N` bytes are left in `header`); or an error as in
//! `error.rs`, its tensor as a caller index. The indices are named in
//! [`crate::wire`].

use alloc::vec::Vec;

use safetensors_nano::write::{convert_into, AsSpec, Plan, SliceSink, TensorSpec};
use safetensors_nano::{Dtype, Error, TensorRef};

use crate::error::{Failure, LayerKind};
use crate::wire::{
    LENGTH_PAIR_NUMBERS, PLACED_BEGIN, PLACED_INDEX, PLACED_NUMBERS, PLANNED_FILE_LEN,
    PLANNED_HEAD_NUMBERS, PLAN_HAS_METADATA, PLAN_HEAD_NUMBERS, PLAN_PAIRS, PLAN_TENSORS,
    ROW_BYTE_LEN, ROW_DTYPE, ROW_HEAD_NUMBERS, ROW_NAME_LEN, ROW_RANK, STATUS,
};

// The plan is read as a stream, and its answer written, in this order.
const _: () = assert!(
    PLAN_TENSORS == 0 && PLAN_HAS_METADATA == 1 && PLAN_PAIRS == 2 && PLAN_HEAD_NUMBERS == 3
);
const _: () = assert!(
    ROW_DTYPE == 0
        && ROW_NAME_LEN == 1
        && ROW_BYTE_LEN == 2
        && ROW_RANK == 3
        && ROW_HEAD_NUMBERS == 4
);
const _: () = assert!(LENGTH_PAIR_NUMBERS == 2);
const _: () = assert!(
    STATUS == 0
        && PLANNED_FILE_LEN == 1
        && PLANNED_HEAD_NUMBERS == 2
        && PLACED_INDEX == 0
        && PLACED_BEGIN == 1
        && PLACED_NUMBERS == 2
);

/// A spec that remembers its place in the caller's list (the plan sorts).
struct Indexed<'a> {
    spec: TensorSpec<'a>,
    index: u32,
}

impl AsSpec for Indexed<'_> {
    fn spec(&self) -> TensorSpec<'_> {
        self.spec
    }
}

/// Reads the number stream: non-negative whole numbers up to 2^53 only
/// (JS checked them; anything else makes the plan malformed).
#[derive(Clone)]
struct Numbers<'n>(core::slice::Iter<'n, f64>);

impl Numbers<'_> {
    // The cast is exact: the value is checked to be a whole number in 0..=2^53.
    #[allow(clippy::cast_possible_truncation)]
    fn next(&mut self) -> Option<u64> {
        let v = *self.0.next()?;
        // (`as u64` saturates and drops the fraction: equal means whole.)
        (v >= 0.0 && v <= crate::MAX_SAFE as f64 && (v as u64) as f64 == v).then_some(v as u64)
    }

    fn next_usize(&mut self) -> Option<usize> {
        usize::try_from(self.next()?).ok()
    }
}

/// Takes the next `len` bytes of `text` as a string.
fn piece<'t>(text: &mut &'t [u8], len: usize) -> Option<&'t str> {
    let (head, tail) = text.split_at_checked(len)?;
    *text = tail;
    core::str::from_utf8(head).ok()
}

/// Plans the file described by `numbers` and `text` (see the module docs),
/// leaving its header bytes in `header`.
pub fn plan(numbers: &[f64], text: &[u8], header: &mut Vec<u8>) -> Vec<f64> {
    match try_plan(numbers, text, header) {
        Ok(out) => out,
        Err(None) => Failure::new(LayerKind::InvalidArgument, [0; 3]).encode(),
        Err(Some((e, index))) => {
            let mut f = Failure::from(e);
            f.index = index;
            f.encode()
        }
    }
}

fn try_plan(
    numbers: &[f64],
    text: &[u8],
    header: &mut Vec<u8>,
) -> Result<Vec<f64>, Option<(Error, Option<u32>)>> {
    let mut it = Numbers(numbers.iter());
    let count = it.next_usize().ok_or(None)?;
    let has_meta = it.next().ok_or(None)? != 0;
    let pairs = it.next_usize().ok_or(None)?;
    // The rows are read twice: once for the dims, then for the specs, which
    // borrow their shapes from the dims.
    let rows = it.clone();
    let dims = read_dims(&mut it, count).ok_or(None)?;
    let mut text = text;
    // (At most one row per 4 numbers: a bad count cannot reserve much.)
    let cap = numbers.len();
    let mut specs = read_specs(rows, &dims, &mut text, count, cap).ok_or(None)?;
    let mut metadata = read_metadata(&mut it, &mut text, pairs, cap).ok_or(None)?;
    let planned = if has_meta {
        Plan::with_metadata(&mut specs, &mut metadata)
    } else {
        Plan::new(&mut specs)
    };
    let plan = match planned {
        Ok(plan) => plan,
        Err(e) => return Err(Some((e, caller_index(&e, &specs)))),
    };
    let header_len = usize::try_from(plan.data_start()).map_err(|_| None)?;
    header.clear();
    header.resize(header_len, 0);
    let mut sink = SliceSink::new(header.as_mut_slice());
    plan.write_header(&mut sink).map_err(|e| Some((e, None)))?;
    Ok(placed_numbers(&plan, count))
}

/// Pass 1 over the `count` tensor rows: every dim, in one vector; leaves
/// `it` at the metadata lengths.
fn read_dims(it: &mut Numbers<'_>, count: usize) -> Option<Vec<u64>> {
    let mut dims = Vec::new();
    for _ in 0..count {
        for _ in 0..ROW_RANK {
            it.next()?;
        }
        let rank = it.next_usize()?;
        for _ in 0..rank {
            dims.push(it.next()?);
        }
    }
    Some(dims)
}

/// Pass 2 over the `count` tensor rows: the specs, each with its place in
/// the caller's list, names taken from `text` and shapes from `dims`.
fn read_specs<'a>(
    mut rows: Numbers<'_>,
    dims: &'a [u64],
    text: &mut &'a [u8],
    count: usize,
    cap: usize,
) -> Option<Vec<Indexed<'a>>> {
    let mut specs = Vec::with_capacity(count.min(cap));
    let mut at = 0usize;
    for index in 0..count {
        let dtype = rows.next_usize().and_then(|d| Dtype::ALL.get(d))?;
        let name = rows.next_usize().and_then(|n| piece(text, n))?;
        let byte_len = rows.next()?;
        let rank = rows.next_usize()?;
        let end = at.checked_add(rank)?;
        let shape = dims.get(at..end)?;
        for _ in 0..rank {
            rows.next();
        }
        at = end;
        specs.push(Indexed {
            spec: TensorSpec::new(name, *dtype, shape, byte_len),
            index: u32::try_from(index).ok()?,
        });
    }
    Some(specs)
}

/// The `pairs` metadata pairs: their lengths from `it`, their text from
/// `text`.
fn read_metadata<'t>(
    it: &mut Numbers<'_>,
    text: &mut &'t [u8],
    pairs: usize,
    cap: usize,
) -> Option<Vec<(&'t str, &'t str)>> {
    let mut metadata = Vec::with_capacity(pairs.min(cap));
    for _ in 0..pairs {
        let key = it.next_usize().and_then(|n| piece(text, n))?;
        let value = it.next_usize().and_then(|n| piece(text, n))?;
        metadata.push((key, value));
    }
    Some(metadata)
}

/// The caller's index of the tensor a plan error is about: plan errors
/// give a position in `specs`, and each spec knows its caller index.
fn caller_index(e: &Error, specs: &[Indexed<'_>]) -> Option<u32> {
    match e.tensor() {
        Some(TensorRef::Index(p)) => specs.get(p as usize).map(|s| s.index),
        _ => None,
    }
}

/// The planned numbers for JS: a status, the file length, then per tensor
/// in file order its caller index and data offset.
fn placed_numbers(plan: &Plan<'_, Indexed<'_>>, count: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(
        count
            .saturating_mul(PLACED_NUMBERS)
            .saturating_add(PLANNED_HEAD_NUMBERS),
    );
    out.extend_from_slice(&[0.0, plan.file_len() as f64]);
    for placed in plan.iter() {
        out.push(f64::from(placed.tensor().index));
        out.push(placed.data_offsets().0 as f64);
    }
    out
}

/// Converts `src` (whole elements of the float dtype with index `from`) to
/// the dtype with index `to` through the core's `convert_into` (round to
/// nearest, ties to even), into `out` (resized to the converted length).
/// Returns no numbers on success, or an error's (as in `error.rs`).
pub fn convert(from: u8, src: &[u8], to: u8, out: &mut Vec<u8>) -> Vec<f64> {
    let (Some(&from), Some(&to)) = (
        Dtype::ALL.get(usize::from(from)),
        Dtype::ALL.get(usize::from(to)),
    ) else {
        return Failure::new(LayerKind::InvalidArgument, [0; 3]).encode();
    };
    // The converted length: whole bytes of `to` per element of `from`
    // (convert_into refuses a `src` of partial elements itself).
    let elements = (src.len() as u64)
        .saturating_mul(8)
        .checked_div(u64::from(from.bits()))
        .unwrap_or(0);
    let len = elements.saturating_mul(u64::from(to.bits())) / 8;
    out.clear();
    out.resize(usize::try_from(len).unwrap_or(0), 0);
    match convert_into(from, src, to, out.as_mut_slice()) {
        Ok(()) => Vec::new(),
        Err(e) => Failure::from(e).encode(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_through_the_core_and_reports_its_errors() {
        let index = |d: Dtype| Dtype::ALL.iter().position(|&x| x == d).unwrap() as u8;
        let src: Vec<u8> = [1.0f32, 1.0 + 1.0 / 256.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut out = Vec::new();
        assert!(convert(index(Dtype::F32), &src, index(Dtype::BF16), &mut out).is_empty());
        assert_eq!(out, [0x80, 0x3f, 0x80, 0x3f]);
        let bad = convert(index(Dtype::I32), &src, index(Dtype::F16), &mut out);
        assert_eq!(crate::error::tests::kind_name(&bad), "DtypeMismatch");
        let bad = convert(index(Dtype::F32), &src[..5], index(Dtype::F16), &mut out);
        assert_eq!(crate::error::tests::kind_name(&bad), "DataLengthMismatch");
        let bad = convert(250, &src, index(Dtype::F16), &mut out);
        assert_eq!(crate::error::tests::kind_name(&bad), "InvalidArgument");
    }

    #[test]
    fn plans_utf8_names_in_the_writers_order() {
        // "b" U8 [2] (2 bytes), "é" F32 [1] (4 bytes), metadata {"k": "v"}.
        let numbers = [
            2.0, 1.0, 1.0, 4.0, 1.0, 2.0, 1.0, 2.0, 17.0, 2.0, 4.0, 1.0, 1.0, 1.0, 1.0,
        ];
        let mut header = Vec::new();
        let out = plan(&numbers, "b\u{e9}kv".as_bytes(), &mut header);
        let json = core::str::from_utf8(&header[8..]).unwrap().trim_end();
        assert_eq!(
            json,
            r#"{"__metadata__":{"k":"v"},"é":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[2],"data_offsets":[4,6]}}"#
        );
        assert_eq!(out, [0.0, (header.len() + 6) as f64, 1.0, 0.0, 0.0, 4.0]);
    }

    #[test]
    fn a_malformed_plan_is_an_invalid_argument() {
        let mut header = Vec::new();
        for (numbers, text) in [
            (&[1.0, 0.0, 0.0, 4.0, 2.0, 1.0][..], &b"ab"[..]), // row cut short
            (&[1.0, 0.0, 0.0, 4.0, 3.0, 1.0, 0.0], b"ab"),     // name past the text
            (&[1.0, 0.0, 0.0, 4.0, 1.5, 1.0, 0.0], b"ab"),     // not a whole number
            (&[1.0, 0.0, 0.0, 4.0, 2.0, 1.0, 0.0], b"\xff\xfe"), // not UTF-8
            (&[1e300, 0.0, 0.0], b""),                         // count beyond 2^53
        ] {
            let out = plan(numbers, text, &mut header);
            let kind = crate::error::tests::kind_name(&out);
            assert_eq!(kind, "InvalidArgument", "{numbers:?}");
        }
    }
}
