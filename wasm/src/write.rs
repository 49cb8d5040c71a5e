//! Planning a file to write through the core writer: the header bytes and
//! where each tensor's data goes. The data itself never enters wasm memory:
//! JS copies it from the caller's buffers into the output.
//!
//! In, numbers: `[count, has_metadata (0/1), pairs]`, then per tensor (in
//! the caller's order) `[dtype, name_len, byte_len, rank, dims…]`, then per
//! metadata pair `[key_len, value_len]`; text: names, then keys and values,
//! concatenated (lengths in UTF-16 code units, as JS counts them).
//!
//! Out, numbers: `[0, file_len]`, then per tensor in written order
//! `[caller_index, begin]` (data offsets relative to the end of the header,
//! whose `8 + N` bytes are left in `header`); or an error as in
//! `error.rs`, its tensor as a caller index.

use alloc::vec::Vec;

use safetensors_nano::write::{AsSpec, Plan, SliceSink, TensorSpec};
use safetensors_nano::{Dtype, Error, TensorRef};

use crate::error::Failure;

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

/// Splits `text` into consecutive pieces of these UTF-16 lengths.
fn split_utf16(text: &str, lens: impl Iterator<Item = usize>) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    let mut rest = text;
    for len in lens {
        let mut units = 0usize;
        let mut bytes = 0usize;
        let mut chars = rest.chars();
        while units < len {
            let c = chars.next()?;
            units = units.saturating_add(c.len_utf16());
            bytes = bytes.saturating_add(c.len_utf8());
        }
        let (piece, tail) = rest.split_at_checked(bytes)?;
        out.push(piece);
        rest = tail;
    }
    Some(out)
}

/// Reads `n` values from the number stream as non-negative integers.
// The cast is exact: the value is checked to be a whole number in 0..=2^53.
#[allow(clippy::cast_possible_truncation)]
fn take(numbers: &mut core::slice::Iter<'_, f64>, n: usize) -> Option<Vec<u64>> {
    (0..n)
        .map(|_| {
            let v = *numbers.next()?;
            // JS checked these are safe integers; refuse anything else.
            // (`as u64` saturates and drops the fraction: equal means whole.)
            (v >= 0.0 && v <= crate::describe::MAX_SAFE as f64 && (v as u64) as f64 == v)
                .then_some(v as u64)
        })
        .collect()
}

/// Plans the file described by `numbers` and `text` (see the module docs),
/// leaving its header bytes in `header`.
pub fn plan(numbers: &[f64], text: &str, header: &mut Vec<u8>) -> Vec<f64> {
    match try_plan(numbers, text, header) {
        Ok(out) => out,
        Err(None) => Failure::new("InvalidArgument", [0; 3]).encode(),
        Err(Some((e, index))) => {
            let mut f = Failure::from(e);
            f.index = index;
            f.encode()
        }
    }
}

fn try_plan(
    numbers: &[f64],
    text: &str,
    header: &mut Vec<u8>,
) -> Result<Vec<f64>, Option<(Error, Option<u32>)>> {
    let mut it = numbers.iter();
    let head = take(&mut it, 3).ok_or(None)?;
    let [count, has_meta, pairs] = head[..] else {
        return Err(None);
    };
    let count = usize::try_from(count).map_err(|_| None)?;
    let pairs = usize::try_from(pairs).map_err(|_| None)?;
    let mut dims = Vec::new();
    let mut rows = Vec::with_capacity(count);
    for _ in 0..count {
        let row = take(&mut it, 4).ok_or(None)?;
        let [dtype, name_len, byte_len, rank] = row[..] else {
            return Err(None);
        };
        let at = dims.len();
        let rank = usize::try_from(rank).map_err(|_| None)?;
        dims.extend(take(&mut it, rank).ok_or(None)?);
        let dtype = usize::try_from(dtype)
            .ok()
            .and_then(|d| Dtype::ALL.get(d))
            .ok_or(None)?;
        rows.push((
            *dtype,
            usize::try_from(name_len).map_err(|_| None)?,
            byte_len,
            at,
            rank,
        ));
    }
    let meta_lens = take(&mut it, pairs.saturating_mul(2)).ok_or(None)?;
    let lens = rows.iter().map(|r| r.1).chain(
        meta_lens
            .iter()
            .map(|&l| usize::try_from(l).unwrap_or(usize::MAX)),
    );
    let pieces = split_utf16(text, lens).ok_or(None)?;
    let (names, meta) = pieces.split_at_checked(count).ok_or(None)?;
    let mut specs: Vec<Indexed<'_>> = Vec::with_capacity(count);
    for (i, ((dtype, _, byte_len, at, rank), name)) in rows.iter().zip(names).enumerate() {
        let shape = dims.get(*at..at.saturating_add(*rank)).ok_or(None)?;
        specs.push(Indexed {
            spec: TensorSpec::new(name, *dtype, shape, *byte_len),
            index: u32::try_from(i).map_err(|_| None)?,
        });
    }
    let mut metadata: Vec<(&str, &str)> = meta
        .chunks_exact(2)
        .filter_map(|kv| Some((*kv.first()?, *kv.get(1)?)))
        .collect();
    let planned = if has_meta != 0 {
        Plan::with_metadata(&mut specs, &mut metadata)
    } else {
        Plan::new(&mut specs)
    };
    let plan = match planned {
        Ok(plan) => plan,
        Err(e) => {
            // Writer errors give a position in `specs`; each knows its caller index.
            let index = match e.tensor() {
                Some(TensorRef::Index(p)) => specs.get(p as usize).map(|s| s.index),
                _ => None,
            };
            return Err(Some((e, index)));
        }
    };
    let header_len = usize::try_from(plan.data_start()).map_err(|_| None)?;
    header.clear();
    header.resize(header_len, 0);
    let mut sink = SliceSink::new(header.as_mut_slice());
    plan.write_header(&mut sink).map_err(|e| Some((e, None)))?;
    let mut out = Vec::with_capacity(count.saturating_mul(2).saturating_add(2));
    out.extend_from_slice(&[0.0, plan.file_len() as f64]);
    for placed in plan.iter() {
        out.push(f64::from(placed.tensor().index));
        out.push(placed.data_offsets().0 as f64);
    }
    Ok(out)
}
