//! Slicing against a naive model: the model lists every selected element by
//! explicit index arithmetic, groups consecutive ones into runs and cuts
//! their bits out of the data; the crate must give the same bytes (as
//! chunks of a view and as ranges of the buffer), the same result shape,
//! and the same error for the same input.

use proptest::prelude::*;
use safetensors_nano::{Dtype, ErrorKind, Header, SafeTensors, SliceIndex, Slot, Status};

/// A file holding a `U8` tensor `lead` of `lead` bytes (so that `t` does not
/// start at buffer offset 0), then `t`, whose bytes are pseudo-random.
fn build(dtype: Dtype, shape: &[u64], lead: u64, seed: u64) -> Vec<u8> {
    let elements: u64 = if shape.contains(&0) {
        0
    } else {
        shape.iter().product()
    };
    let bytes = elements * u64::from(dtype.bits()) / 8;
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let header = format!(
        r#"{{"lead":{{"dtype":"U8","shape":[{lead}],"data_offsets":[0,{lead}]}},"t":{{"dtype":"{}","shape":[{}],"data_offsets":[{lead},{}]}}}}"#,
        dtype.name(),
        dims.join(","),
        lead + bytes
    );
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    let mut x = seed | 1;
    for _ in 0..lead + bytes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        file.push(x as u8);
    }
    file
}

#[derive(Debug, PartialEq)]
struct Model {
    shape: Vec<u64>,
    elements: usize,
    /// Maximal runs of consecutive selected elements.
    runs: usize,
    bytes: Vec<u8>,
}

/// The naive model: list the positions per dimension, take their cartesian
/// product in row-major order, and cut whole runs of bits out of `data`.
fn model(
    dtype: Dtype,
    shape: &[u64],
    indices: &[SliceIndex],
    data: &[u8],
) -> Result<Model, ErrorKind> {
    let rank = shape.len();
    if indices.len() > rank {
        return Err(ErrorKind::SliceTooManyIndices {
            rank: rank as u32,
            given: indices.len() as u32,
        });
    }
    let mut lists: Vec<Vec<u64>> = Vec::new();
    let mut out_shape = Vec::new();
    for (d, &size) in shape.iter().enumerate() {
        let dim = d as u32;
        let out = |value| ErrorKind::SliceOutOfRange { dim, value, size };
        match indices.get(d).copied().unwrap_or(SliceIndex::Full) {
            SliceIndex::Full => {
                lists.push((0..size).collect());
                out_shape.push(size);
            }
            SliceIndex::Index(i) => {
                if i >= size {
                    return Err(out(i));
                }
                lists.push(vec![i]);
            }
            SliceIndex::Range { start, end, step } => {
                match end {
                    Some(e) if e > size => return Err(out(e)),
                    None if start > size => return Err(out(start)),
                    _ => {}
                }
                let e = end.unwrap_or(size);
                if step == 0 || start > e {
                    return Err(ErrorKind::SliceInvalidRange { dim });
                }
                let positions: Vec<u64> = (start..e).step_by(step as usize).collect();
                out_shape.push(positions.len() as u64);
                lists.push(positions);
            }
        }
    }
    // Row-major strides and the cartesian product.
    let mut strides = vec![1u64; rank];
    for d in (0..rank.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    let mut selected: Vec<u64> = vec![0];
    for (list, &stride) in lists.iter().zip(&strides) {
        selected = selected
            .iter()
            .flat_map(|&base| list.iter().map(move |&p| base + p * stride))
            .collect();
    }
    let bits = u64::from(dtype.bits());
    let mut bytes = Vec::new();
    let mut runs = 0;
    let mut i = 0;
    while i < selected.len() {
        let mut j = i;
        while j + 1 < selected.len() && selected[j + 1] == selected[j] + 1 {
            j += 1;
        }
        let (begin, end) = (selected[i] * bits, (selected[j] + 1) * bits);
        if begin % 8 != 0 || end % 8 != 0 {
            return Err(ErrorKind::SliceSubByte);
        }
        bytes.extend_from_slice(&data[(begin / 8) as usize..(end / 8) as usize]);
        runs += 1;
        i = j + 1;
    }
    Ok(Model {
        shape: out_shape,
        elements: selected.len(),
        runs,
        bytes,
    })
}

/// Runs the crate and the model on one case and compares everything.
fn check(dtype: Dtype, shape: &[u64], indices: &[SliceIndex], lead: u64, seed: u64) {
    let file = build(dtype, shape, lead, seed);
    let st = SafeTensors::parse(&file, vec![Slot::EMPTY; 2]).expect("test file is valid");
    let t = st.tensor("t").unwrap();
    let expected = model(dtype, shape, indices, t.data());
    let ours = t.slice(indices);
    let ranges = t.info().slice_ranges(indices);
    let context = format!("{dtype} {shape:?} {indices:?}");
    match expected {
        Err(kind) => {
            let err = ours.expect_err(&context);
            assert_eq!(err.kind(), kind, "{context}");
            assert_eq!(
                err.tensor_name(st.header().json()).unwrap(),
                "t",
                "{context}"
            );
            assert_eq!(ranges.unwrap_err(), err, "{context}");
        }
        Ok(m) => {
            let chunks = ours.unwrap_or_else(|e| panic!("{context}: {e}"));
            assert_eq!(chunks.shape().collect::<Vec<_>>(), m.shape, "{context}");
            assert_eq!(chunks.rank(), m.shape.len(), "{context}");
            assert_eq!(chunks.element_count(), m.elements as u64, "{context}");
            assert_eq!(chunks.byte_len(), m.bytes.len() as u64, "{context}");
            let list: Vec<&[u8]> = chunks.clone().collect();
            assert_eq!(list.len(), chunks.len(), "{context}: ExactSizeIterator");
            assert_eq!(list.concat(), m.bytes, "{context}");
            assert!(
                list.iter()
                    .all(|c| c.len() as u64 == chunks.chunk_len() && !c.is_empty()),
                "{context}"
            );
            // Chunks are never finer than needed: with no strided range they
            // are exactly the maximal runs; with one, never fewer.
            let strided = indices
                .iter()
                .zip(shape)
                .any(|(i, &size)| matches!(*i, SliceIndex::Range { start, end, step } if step > 1 && end.unwrap_or(size) > start.saturating_add(1)));
            if strided {
                assert!(list.len() >= m.runs, "{context}");
            } else {
                assert_eq!(list.len(), m.runs, "{context}");
            }
            let mut back: Vec<&[u8]> = chunks.clone().rev().collect();
            back.reverse();
            assert_eq!(back, list, "{context}: reversed");
            for n in [0, 1, 2, list.len()] {
                assert_eq!(
                    chunks.clone().nth(n),
                    list.get(n).copied(),
                    "{context}: nth({n})"
                );
            }
            // The lazy form: ranges of the whole buffer.
            let ranges = ranges.unwrap();
            assert_eq!(ranges.shape().collect::<Vec<_>>(), m.shape);
            assert_eq!(
                (ranges.run_count(), ranges.run_len()),
                (list.len() as u64, chunks.chunk_len())
            );
            let gathered: Vec<u8> = ranges
                .flat_map(|(b, e)| {
                    assert!(
                        b >= lead && e <= st.data().len() as u64,
                        "{context}: range outside the tensor"
                    );
                    st.data()[b as usize..e as usize].to_vec()
                })
                .collect();
            assert_eq!(gathered, m.bytes, "{context}: ranges");
        }
    }
}

/// One raw index, sized against a dimension to hit valid and invalid values.
fn index(kind: u8, a: u64, b: u64, c: u64, has_end: bool, size: u64) -> SliceIndex {
    let m = size + 2;
    match kind % 5 {
        0 => SliceIndex::Full,
        1 => SliceIndex::Index(a % m),
        2 => SliceIndex::Range {
            start: a % m,
            end: has_end.then_some(b % m),
            step: 1,
        },
        _ => SliceIndex::Range {
            start: a % m,
            end: has_end.then_some(b % m),
            step: c % (size + 2),
        },
    }
}

fn case() -> impl Strategy<Value = (Dtype, Vec<u64>, Vec<SliceIndex>, u64, u64)> {
    (
        0usize..22,
        prop::collection::vec(0u64..6, 0..=4),
        prop::collection::vec(
            (
                any::<u8>(),
                any::<u64>(),
                any::<u64>(),
                any::<u64>(),
                any::<bool>(),
            ),
            0..=5,
        ),
        0u64..3,
        any::<u64>(),
    )
        .prop_map(|(d, shape, raw, lead, seed)| {
            let dtype = Dtype::ALL[d];
            // Sub-byte tensors must be a whole number of bytes: round the
            // last dimension up to a multiple of 4 elements.
            let mut shape = shape;
            if dtype.bits() % 8 != 0 {
                if let Some(last) = shape.last_mut() {
                    *last = last.div_ceil(4) * 4;
                } else {
                    shape.push(4);
                }
            }
            let take = if seed % 8 == 0 {
                raw.len()
            } else {
                raw.len().min(shape.len())
            };
            let indices = raw
                .iter()
                .take(take)
                .enumerate()
                .map(|(j, &(k, a, b, c, e))| {
                    index(k, a, b, c, e, shape.get(j).copied().unwrap_or(3))
                })
                .collect();
            (dtype, shape, indices, lead, seed)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn slices_match_the_naive_model((dtype, shape, indices, lead, seed) in case()) {
        check(dtype, &shape, &indices, lead, seed);
    }

    /// Sub-byte dtypes with shapes whose rows are not whole bytes, so that
    /// both accepted and refused slices occur often.
    #[test]
    fn sub_byte_slices_match_the_naive_model(
        d in prop::sample::select(vec![Dtype::F4, Dtype::F6_E2M3, Dtype::F6_E3M2]),
        shape in prop::collection::vec(1u64..7, 1..=3),
        raw in prop::collection::vec((any::<u8>(), any::<u64>(), any::<u64>(), any::<u64>(), any::<bool>()), 0..=3),
        seed in any::<u64>(),
    ) {
        // Make the whole tensor a whole number of bytes through the
        // outermost dimension only, so rows stay unaligned.
        let mut shape = shape;
        let elements: u64 = shape.iter().product();
        if elements * u64::from(d.bits()) % 8 != 0 {
            shape[0] *= if d == Dtype::F4 { 2 } else { 4 };
        }
        let indices: Vec<SliceIndex> = raw
            .iter()
            .zip(&shape)
            .map(|(&(k, a, b, c, e), &size)| index(k, a, b, c, e, size))
            .collect();
        check(d, &shape, &indices, 1, seed);
    }
}

#[test]
fn worked_examples() {
    use SliceIndex::Full;
    let r = SliceIndex::range;
    // Scalars, vectors, and every rank up to 8, whole and cut.
    check(Dtype::F32, &[], &[], 1, 1);
    check(Dtype::F64, &[5], &[r(1, 4)], 0, 2);
    check(Dtype::BF16, &[2, 3, 2, 3, 2, 3, 2, 3], &[], 2, 3);
    check(
        Dtype::U8,
        &[2, 3, 2, 3, 2, 3, 2, 3],
        &[Full, 1.into(), Full, r(0, 2), Full.step_by(2)],
        2,
        4,
    );
    check(
        Dtype::C64,
        &[4, 4, 4],
        &[(1..).into(), (..2).into(), Full.step_by(3)],
        0,
        5,
    );
    // Empty selections, zero dimensions.
    check(Dtype::I32, &[3, 4], &[r(2, 2)], 0, 6);
    check(Dtype::I32, &[3, 0], &[1.into()], 0, 7);
    check(Dtype::F4, &[0, 3], &[], 0, 8);
    // F4 rows of 2 elements are whole bytes; single elements are not.
    check(Dtype::F4, &[3, 2], &[r(1, 3)], 0, 9);
    check(Dtype::F4, &[3, 2], &[Full, 1.into()], 0, 10);
    // F6 needs groups of 4 elements.
    check(Dtype::F6_E2M3, &[2, 8], &[Full, r(4, 8)], 0, 11);
    check(Dtype::F6_E3M2, &[2, 8], &[Full, r(2, 6)], 0, 12);
    check(Dtype::F6_E3M2, &[4, 2], &[Full.step_by(2)], 0, 13);
}

#[test]
fn step_across_rows_keeps_single_element_chunks() {
    // x[:, ::2] of a 2×3 U8 matrix selects elements 0, 2, 3, 5; 2 and 3 are
    // adjacent in memory but come from different rows.
    let file = build(Dtype::U8, &[2, 3], 0, 7);
    let st = SafeTensors::parse(&file, vec![Slot::EMPTY; 2]).unwrap();
    let t = st.tensor("t").unwrap();
    let d = t.data();
    let chunks: Vec<&[u8]> = t
        .slice(&[SliceIndex::Full, SliceIndex::Full.step_by(2)])
        .unwrap()
        .collect();
    assert_eq!(chunks, [&d[0..1], &d[2..3], &d[3..4], &d[5..6]]);
}

#[test]
fn ranges_of_a_header_without_data() {
    let file = build(Dtype::I16, &[3, 4], 5, 9);
    let n = u64::from_le_bytes(file[..8].try_into().unwrap()) as usize;
    let Status::Complete(header) = Header::parse(&file[..8 + n], vec![Slot::EMPTY; 2]).unwrap()
    else {
        panic!("complete")
    };
    let t = header.tensor("t").unwrap();
    // Row 2, columns 1..3: elements 9, 10 → bytes 18..22 of t, which starts at 5.
    let ranges: Vec<(u64, u64)> = t
        .slice_ranges(&[2.into(), (1..3).into()])
        .unwrap()
        .collect();
    assert_eq!(ranges, [(23, 27)]);
    let whole: Vec<(u64, u64)> = t.slice_ranges(&[]).unwrap().collect();
    assert_eq!(whole, [t.data_offsets()]);
}

#[test]
fn every_error_kind_names_the_tensor() {
    let file = build(Dtype::F4, &[2, 4], 0, 1);
    let st = SafeTensors::parse(&file, vec![Slot::EMPTY; 2]).unwrap();
    let t = st.tensor("t").unwrap();
    let json = st.header().json();
    let cases: [(&[SliceIndex], ErrorKind); 8] = [
        (
            &[SliceIndex::Full; 3],
            ErrorKind::SliceTooManyIndices { rank: 2, given: 3 },
        ),
        (
            &[2.into()],
            ErrorKind::SliceOutOfRange {
                dim: 0,
                value: 2,
                size: 2,
            },
        ),
        (
            &[SliceIndex::Full, (0..5).into()],
            ErrorKind::SliceOutOfRange {
                dim: 1,
                value: 5,
                size: 4,
            },
        ),
        (
            &[SliceIndex::Full, (5..).into()],
            ErrorKind::SliceOutOfRange {
                dim: 1,
                value: 5,
                size: 4,
            },
        ),
        (
            &[SliceIndex::Full, SliceIndex::Full.step_by(0)],
            ErrorKind::SliceInvalidRange { dim: 1 },
        ),
        (
            &[SliceIndex::range(2, 1)],
            ErrorKind::SliceInvalidRange { dim: 0 },
        ),
        (&[SliceIndex::Full, 1.into()], ErrorKind::SliceSubByte),
        (
            &[SliceIndex::Full, SliceIndex::Full.step_by(2)],
            ErrorKind::SliceSubByte,
        ),
    ];
    for (indices, kind) in cases {
        let err = t.slice(indices).unwrap_err();
        assert_eq!(err.kind(), kind, "{indices:?}");
        assert_eq!(err.tensor_name(json).unwrap(), "t");
        assert!(err.to_string().contains("tensor at header bytes"), "{err}");
        assert_eq!(t.info().slice_ranges(indices).unwrap_err(), err);
    }
    // A scalar takes no index at all.
    let file = build(Dtype::U8, &[], 0, 1);
    let st = SafeTensors::parse(&file, vec![Slot::EMPTY; 2]).unwrap();
    let err = st.tensor("t").unwrap().slice(&[0.into()]).unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::SliceTooManyIndices { rank: 0, given: 1 }
    );
}

#[test]
fn huge_zero_element_tensor_slices_to_nothing() {
    // [2^32, 2^32, 0] is a valid empty tensor; slicing it must not overflow.
    let file = build(Dtype::U64, &[1 << 32, 1 << 32, 0], 0, 1);
    let st = SafeTensors::parse(&file, vec![Slot::EMPTY; 2]).unwrap();
    let t = st.tensor("t").unwrap();
    let indices = [(1..).into(), 7.into()];
    let s = t.slice(&indices).unwrap();
    assert_eq!(s.shape().collect::<Vec<_>>(), [(1 << 32) - 1, 0]);
    assert_eq!((s.element_count(), s.byte_len(), s.len()), (0, 0, 0));
    let err = t
        .slice(&[SliceIndex::Full, SliceIndex::Full, 0.into()])
        .unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::SliceOutOfRange {
            dim: 2,
            value: 0,
            size: 0
        }
    );
}

#[test]
fn high_rank_without_allocation_limits() {
    // Rank 40 of size-1 and size-2 dimensions: the iterator keeps no
    // per-dimension state, so any rank works.
    let shape: Vec<u64> = (0..40).map(|d| if d % 8 == 0 { 2 } else { 1 }).collect();
    let indices: Vec<SliceIndex> = (0..40)
        .map(|d| if d == 32 { 1.into() } else { SliceIndex::Full })
        .collect();
    check(Dtype::U16, &shape, &indices, 0, 3);
    check(Dtype::U16, &shape, &indices[..20], 0, 4);
}
