//! Target `parse_touch`: any bytes (and their length-fitted variant) are
//! parsed, then every tensor, view and accessor is touched, and the
//! whole-file, header-only, small-table and lower-limit paths must agree.

use std::collections::HashSet;

use safetensors_nano::{
    Dtype, Error, ErrorKind, Parser, SafeTensors, SliceIndex, Slot, Status, TensorView,
};
use safetensors_nano_test_support::files::{json_of, parse, slots_for};

use crate::{check_name, touch_error, variants};

/// The target: [`parse_and_touch`] on each of [`variants`].
pub fn check(data: &[u8]) {
    for input in variants(data) {
        parse_and_touch(&input);
    }
}

/// Parses `bytes` every way the API allows and checks that the answers agree.
pub fn parse_and_touch(bytes: &[u8]) {
    let full = parse(bytes);
    match &full {
        Ok(st) => touch_file(st, bytes),
        Err(e) => touch_error(e, bytes),
    }
    check_header_path(bytes, &full);
    check_capacity(bytes, &full);
    check_limit(bytes, &full);
}

/// Element count the way docs/format.md defines it (D3 zero-dim): any zero
/// dimension makes 0, else the product, `None` on overflow.
fn spec_element_count(dims: &[u64]) -> Option<u64> {
    if dims.contains(&0) {
        return Some(0);
    }
    dims.iter().try_fold(1u64, |p, &d| p.checked_mul(d))
}

fn touch_file(st: &SafeTensors<'_, Vec<Slot>>, bytes: &[u8]) {
    let header = st.header();
    let _ = format!("{st:?} {header:?}");
    let json = json_of(bytes).expect("accepted file has a header");
    assert_eq!(header.json(), json);
    assert_eq!(header.header_len(), json.len() as u64);
    assert_eq!(header.data_start(), 8 + json.len() as u64);
    assert_eq!(header.file_len(), bytes.len() as u64);
    assert_eq!(header.data_len(), st.data().len() as u64);
    assert!(header.check_file_len(bytes.len() as u64).is_ok());
    assert_eq!(st.len(), header.len());
    assert_eq!(st.is_empty(), st.len() == 0);
    let data_start = usize::try_from(header.data_start()).expect("fits");
    assert!(std::ptr::eq(st.data(), &bytes[data_start..]));

    // Offset order tiles the buffer.
    let mut next = 0u64;
    let mut names = HashSet::new();
    let mut count = 0usize;
    assert_eq!(st.iter().len(), st.len());
    for view in st.iter() {
        count += 1;
        let (begin, end) = view.data_offsets();
        assert_eq!(begin, next, "tiling");
        assert!(end >= begin);
        next = end;
        let name = touch_view(&view, st, bytes);
        assert!(names.insert(name), "names are unique");
    }
    assert_eq!(count, st.len());
    assert_eq!(next, st.data().len() as u64);

    // Header order: the same set, with header indices 0..n.
    let mut seen = HashSet::new();
    for (i, view) in st.iter_header_order().enumerate() {
        assert_eq!(view.info().header_index(), i);
        assert!(seen.insert(view.name().to_string()));
    }
    assert_eq!(seen, names);

    // Lookup of names not present.
    assert!(
        st.tensor("\u{0}no such tensor\u{0}").is_none()
            || names.contains("\u{0}no such tensor\u{0}")
    );

    // Metadata.
    if let Some(meta) = st.metadata() {
        assert_eq!(meta.is_empty(), meta.len() == 0);
        let mut keys = HashSet::new();
        assert_eq!(meta.iter().len(), meta.len());
        for (k, v) in meta.iter() {
            let key = k.to_string();
            let value = v.to_string();
            check_name(k);
            check_name(v);
            let got = meta.get(&key).expect("metadata key found by get");
            assert_eq!(got.to_string(), value);
            assert!(keys.insert(key), "metadata keys are unique");
        }
        assert_eq!(meta.iter().rev().count(), meta.len());
    }
}

fn touch_view(view: &TensorView<'_>, st: &SafeTensors<'_, Vec<Slot>>, bytes: &[u8]) -> String {
    let _ = format!("{view:?}");
    let info = view.info();
    let name = check_name(view.name());
    assert_eq!(info.name().to_string(), name);

    // Lookup by name finds this very tensor.
    let found = st.tensor(&name).expect("tensor found by its decoded name");
    assert_eq!(found.data_offsets(), view.data_offsets());
    assert!(std::ptr::eq(found.data(), view.data()));
    let by_header = st.header().tensor(&name).expect("header lookup");
    assert_eq!(by_header.header_index(), info.header_index());

    // Shape accessors agree.
    let shape = view.shape();
    let dims: Vec<u64> = shape.iter().collect();
    assert_eq!(shape.rank(), dims.len());
    for (i, &d) in dims.iter().enumerate() {
        assert_eq!(shape.dim(i), Some(d));
    }
    assert_eq!(shape.dim(dims.len()), None);
    let mut out = vec![0u64; dims.len()];
    assert_eq!(shape.copy_into(&mut out), Some(&dims[..]));
    if !dims.is_empty() {
        let mut short = vec![0u64; dims.len() - 1];
        assert_eq!(shape.copy_into(&mut short), None);
    }
    assert!(shape == dims[..]);
    let _ = format!("{shape:?}");

    // Sizes agree with the dtype.
    let elements = spec_element_count(&dims).expect("validated shapes do not overflow");
    assert_eq!(shape.element_count(), elements);
    assert_eq!(view.element_count(), elements);
    assert_eq!(info.element_count(), elements);
    let dtype = view.dtype();
    assert_eq!(Dtype::from_name(dtype.name().as_bytes()), Some(dtype));
    let byte_len = dtype.byte_len(elements).expect("validated size fits");
    assert_eq!(info.byte_len(), byte_len);
    assert_eq!(view.data().len() as u64, byte_len);

    // The bytes are where data_offsets say.
    let (begin, _) = view.data_offsets();
    let at = st.header().data_start() + begin;
    let at = usize::try_from(at).expect("fits");
    assert!(std::ptr::eq(
        view.data(),
        &bytes[at..at + view.data().len()]
    ));

    touch_typed(view, elements);
    touch_decode(view, elements);
    touch_slices(view, &dims, st, bytes);
    name
}

/// `decode_f32_into`: float dtypes decode, element by element as the
/// per-code functions say; other dtypes and wrong lengths are errors.
fn touch_decode(view: &TensorView<'_>, elements: u64) {
    use safetensors_nano::decode;
    let n = usize::try_from(elements).expect("fits");
    let mut out = vec![0f32; n];
    let dtype = view.dtype();
    match view.decode_f32_into(&mut out) {
        Ok(()) => assert!(dtype.is_float(), "{dtype} decoded"),
        Err(e) => {
            assert!(!dtype.is_float(), "{dtype}: {e}");
            assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }), "{e}");
            return;
        }
    }
    let mut wrong = vec![0f32; n + 1];
    assert!(matches!(
        view.decode_f32_into(&mut wrong).unwrap_err().kind(),
        ErrorKind::LengthMismatch { .. }
    ));
    let data = view.data();
    let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    let per_byte: Option<fn(u8) -> f32> = match dtype {
        Dtype::F8_E5M2 => Some(decode::f8_e5m2_to_f32),
        Dtype::F8_E4M3 => Some(decode::f8_e4m3_to_f32),
        Dtype::F8_E8M0 => Some(decode::f8_e8m0_to_f32),
        Dtype::F8_E4M3FNUZ => Some(decode::f8_e4m3fnuz_to_f32),
        Dtype::F8_E5M2FNUZ => Some(decode::f8_e5m2fnuz_to_f32),
        _ => None,
    };
    for (i, &v) in out.iter().enumerate() {
        let expected = match dtype {
            Dtype::F32 => f32::from_le_bytes(data[i * 4..i * 4 + 4].try_into().unwrap()),
            Dtype::F64 => f64::from_le_bytes(data[i * 8..i * 8 + 8].try_into().unwrap()) as f32,
            Dtype::F16 => half::f16::from_le_bytes([data[i * 2], data[i * 2 + 1]]).to_f32(),
            Dtype::BF16 => half::bf16::from_le_bytes([data[i * 2], data[i * 2 + 1]]).to_f32(),
            Dtype::F4 => decode::f4_to_f32((data[i / 2] >> (4 * (i % 2))) & 0x0f),
            _ => match per_byte {
                Some(f) => f(data[i]),
                None => continue, // F6: packing checked by the core's own tests
            },
        };
        assert!(same(v, expected), "{dtype} element {i}: {v} vs {expected}");
    }
}

/// A tiny deterministic generator for slice parameters.
struct Rng(u64);

impl Rng {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        if below == 0 {
            0
        } else {
            self.0 % below
        }
    }
}

/// One axis of a slice as a plain model: the positions it selects, or
/// `None` when the index is invalid for a dimension of `size`.
fn model_axis(index: SliceIndex, size: u64) -> Option<(u64, u64, u64, bool)> {
    // (start, count, step, keeps the axis)
    match index {
        SliceIndex::Full => Some((0, size, 1, true)),
        SliceIndex::Index(i) => (i < size).then_some((i, 1, 1, false)),
        SliceIndex::Range { start, end, step } => {
            let end = end.unwrap_or(size);
            if step == 0 || start > end || end > size {
                return None;
            }
            Some((start, (end - start).div_ceil(step), step, true))
        }
    }
}

/// Slices with generated indices against a model: valid slices give
/// exactly the model's bytes (byte-sized dtypes), invalid ones a slice error.
fn touch_slices(
    view: &TensorView<'_>,
    dims: &[u64],
    st: &SafeTensors<'_, Vec<Slot>>,
    bytes: &[u8],
) {
    let mut rng =
        Rng(0x9e37_79b9_7f4a_7c15 ^ bytes.len() as u64 ^ (view.info().header_index() as u64) << 32);
    let bits = u64::from(view.dtype().bits());
    for _ in 0..4 {
        let k = rng.next(dims.len() as u64 + 2) as usize;
        let indices: Vec<SliceIndex> = (0..k)
            .map(|axis| {
                let d = dims.get(axis).copied().unwrap_or(1);
                match rng.next(4) {
                    0 => SliceIndex::Full,
                    1 => SliceIndex::Index(rng.next(d.saturating_add(1))),
                    2 => SliceIndex::Range {
                        start: rng.next(d.saturating_add(2)),
                        end: None,
                        step: rng.next(4),
                    },
                    _ => {
                        let a = rng.next(d.saturating_add(2));
                        let b = rng.next(d.saturating_add(2));
                        SliceIndex::Range {
                            start: a.min(b),
                            end: Some(a.max(b)),
                            step: 1 + rng.next(3),
                        }
                    }
                }
            })
            .collect();
        let axes: Option<Vec<_>> = if k > dims.len() {
            None
        } else {
            dims.iter()
                .enumerate()
                .map(|(i, &d)| model_axis(indices.get(i).copied().unwrap_or(SliceIndex::Full), d))
                .collect()
        };
        let result = view.slice(&indices);
        let ranges = view.info().slice_ranges(&indices);
        assert_eq!(result.is_ok(), ranges.is_ok());
        let Some(axes) = axes else {
            let e = result.expect_err("the model rejects this slice");
            assert!(
                matches!(
                    e.kind(),
                    ErrorKind::SliceTooManyIndices { .. }
                        | ErrorKind::SliceOutOfRange { .. }
                        | ErrorKind::SliceInvalidRange { .. }
                ),
                "{indices:?} on {dims:?}: {e}"
            );
            continue;
        };
        let chunks = match result {
            Ok(c) => c,
            Err(e) => {
                assert!(
                    bits < 8 && e.kind() == ErrorKind::SliceSubByte,
                    "{indices:?} on {dims:?}: {e}"
                );
                continue;
            }
        };
        // Any empty axis empties the slice; else the product fits (it is at
        // most the tensor's element count).
        let count: u64 = if axes.iter().any(|a| a.1 == 0) {
            0
        } else {
            axes.iter().map(|a| a.1).product()
        };
        assert_eq!(chunks.element_count(), count, "{indices:?} on {dims:?}");
        assert_eq!(chunks.byte_len(), count * bits / 8);
        assert_eq!(chunks.rank(), axes.iter().filter(|a| a.3).count());
        let got: Vec<u8> = chunks.clone().flatten().copied().collect();
        assert_eq!(got.len() as u64, chunks.byte_len());
        // The absolute ranges hold the same bytes.
        let base = usize::try_from(st.header().data_start()).expect("fits");
        let again: Vec<u8> = ranges
            .expect("ranges")
            .flat_map(|(b, e)| bytes[base + b as usize..base + e as usize].iter().copied())
            .collect();
        assert_eq!(again, got);
        if bits >= 8 && count > 0 {
            let size = (bits / 8) as usize;
            let mut expected = Vec::with_capacity(got.len());
            let mut pos = vec![0u64; axes.len()];
            'all: loop {
                let mut linear = 0u64;
                for (i, &d) in dims.iter().enumerate() {
                    let (start, _, step, _) = axes[i];
                    linear = linear * d + start + pos[i] * step;
                }
                let at = linear as usize * size;
                expected.extend_from_slice(&view.data()[at..at + size]);
                for i in (0..axes.len()).rev() {
                    pos[i] += 1;
                    if pos[i] < axes[i].1 {
                        continue 'all;
                    }
                    pos[i] = 0;
                }
                break;
            }
            assert_eq!(got, expected, "{indices:?} on {dims:?}");
        }
    }
}

/// Typed access: the matching element type works (or reports misalignment),
/// every other one is a dtype mismatch.
fn touch_typed(view: &TensorView<'_>, elements: u64) {
    macro_rules! each {
        ($($t:ty),*) => {$({
            let matching = <$t as safetensors_nano::Element>::DTYPE == view.dtype();
            match view.try_view::<$t>() {
                Ok(v) => {
                    assert!(matching);
                    assert_eq!(v.len() as u64, elements);
                }
                Err(e) => match e.kind() {
                    ErrorKind::DtypeMismatch { found, .. } => {
                        assert!(!matching);
                        assert_eq!(found, view.dtype());
                    }
                    ErrorKind::Misaligned { .. } => assert!(matching),
                    other => panic!("try_view: unexpected {other:?}"),
                },
            }
            let n = usize::try_from(elements).expect("fits");
            let mut out = vec![<$t as bytemuck_zero::Zero>::zero(); n];
            match view.copy_into(&mut out) {
                Ok(()) => {
                    assert!(matching);
                    let copied: &[u8] = bytemuck_zero::bytes(&out);
                    assert_eq!(copied, view.data());
                }
                Err(e) => {
                    assert!(!matching, "copy_into failed: {e}");
                    assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }));
                }
            }
            if matching {
                let mut wrong = vec![<$t as bytemuck_zero::Zero>::zero(); n + 1];
                assert!(matches!(
                    view.copy_into(&mut wrong).unwrap_err().kind(),
                    ErrorKind::LengthMismatch { .. }
                ));
            }
        })*};
    }
    each!(
        u8,
        i8,
        u16,
        i16,
        u32,
        i32,
        u64,
        i64,
        f32,
        f64,
        half::f16,
        half::bf16,
        [f32; 2]
    );
    match view.bools() {
        Ok(it) => {
            assert_eq!(view.dtype(), Dtype::BOOL);
            assert_eq!(it.len() as u64, elements);
            assert!(it.zip(view.data()).all(|(b, &byte)| b == (byte != 0)));
        }
        Err(e) => {
            assert_ne!(view.dtype(), Dtype::BOOL);
            assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }));
        }
    }
}

/// Zero values and byte views for the element types, without `unsafe`.
mod bytemuck_zero {
    pub trait Zero: Copy {
        fn zero() -> Self;
    }
    macro_rules! zero {
        ($($t:ty => $z:expr),*) => {$(impl Zero for $t { fn zero() -> Self { $z } })*};
    }
    zero!(u8 => 0, i8 => 0, u16 => 0, i16 => 0, u32 => 0, i32 => 0, u64 => 0, i64 => 0,
          f32 => 0.0, f64 => 0.0, half::f16 => half::f16::ZERO, half::bf16 => half::bf16::ZERO,
          [f32; 2] => [0.0; 2]);

    pub fn bytes<T: bytemuck::Pod>(v: &[T]) -> &[u8] {
        bytemuck::cast_slice(v)
    }
}

/// The header-only entry point agrees with the whole-file one, on the whole
/// input and on a prefix of it.
fn check_header_path(bytes: &[u8], full: &Result<SafeTensors<'_, Vec<Slot>>, Error>) {
    let parser = Parser::new();
    let header = parser.parse_header(bytes, slots_for(bytes));
    match (full, &header) {
        (Ok(st), Ok(Status::Complete(h))) => {
            assert_eq!(h.len(), st.len());
            assert_eq!(h.data_len(), st.header().data_len());
            assert!(h.check_file_len(bytes.len() as u64).is_ok());
        }
        (Err(e), _) => match e.kind() {
            ErrorKind::HeaderTooSmall { .. } => {
                assert!(matches!(header, Ok(Status::Partial { needed: 8 })));
                assert_eq!(parser.bytes_needed(bytes).unwrap(), 8);
            }
            ErrorKind::InvalidHeaderLength { header_len, .. } => match header {
                Ok(Status::Partial { needed }) => {
                    assert_eq!(needed, header_len + 8);
                    assert!(needed > bytes.len() as u64);
                }
                _ => panic!("InvalidHeaderLength but parse_header gave {header:?}"),
            },
            ErrorKind::MetadataIncompleteBuffer { .. } => match &header {
                Ok(Status::Complete(h)) => {
                    assert_eq!(h.check_file_len(bytes.len() as u64).unwrap_err(), *e)
                }
                _ => panic!("MetadataIncompleteBuffer but parse_header gave {header:?}"),
            },
            _ => match &header {
                Err(h) => assert_eq!(h, e),
                Ok(_) => panic!("parse failed with {e} but parse_header succeeded"),
            },
        },
        (Ok(_), other) => panic!("parse succeeded but parse_header gave {other:?}"),
    }
    // A prefix: either "need more" or the same answer as the whole input.
    let cut = bytes.len() / 2 + 3;
    if let Some(prefix) = bytes.get(..cut) {
        match (parser.parse_header(prefix, slots_for(bytes)), &header) {
            (Ok(Status::Partial { needed }), _) => {
                assert!(needed > prefix.len() as u64);
                assert_eq!(parser.bytes_needed(prefix).unwrap(), needed);
            }
            (Ok(Status::Complete(a)), Ok(Status::Complete(b))) => {
                assert_eq!((a.len(), a.data_len()), (b.len(), b.data_len()))
            }
            (Err(a), Err(b)) => assert_eq!(&a, b),
            (a, b) => panic!("prefix gave {a:?}, whole input {b:?}"),
        }
    }
}

/// Tables that are too small report `CapacityExceeded` with the exact need;
/// a table of exactly that size works.
fn check_capacity(bytes: &[u8], full: &Result<SafeTensors<'_, Vec<Slot>>, Error>) {
    for capacity in [0usize, 1, 3] {
        let small = SafeTensors::parse(bytes, vec![Slot::EMPTY; capacity]);
        match (&small, full) {
            (Ok(a), Ok(b)) => assert_eq!(a.len(), b.len()),
            (Err(a), Err(b)) if a == b => {}
            (Err(a), _) => match a.kind() {
                ErrorKind::CapacityExceeded {
                    capacity: c,
                    needed,
                } => {
                    assert_eq!(c, capacity as u64);
                    assert!(needed > c);
                    let exact = usize::try_from(needed).expect("fits");
                    match SafeTensors::parse(bytes, vec![Slot::EMPTY; exact]) {
                        Ok(st) => {
                            let meta = st.metadata().map_or(0, |m| m.len());
                            assert_eq!((st.len() + meta) as u64, needed);
                            assert!(full.is_ok());
                        }
                        Err(e) => {
                            assert!(!matches!(e.kind(), ErrorKind::CapacityExceeded { .. }));
                            assert_eq!(Err(e), full.as_ref().map(|_| ()).map_err(|e| *e));
                        }
                    }
                }
                _ => panic!(
                    "table of {capacity}: {a:?}, big table: {:?}",
                    full.as_ref().map(|s| s.len())
                ),
            },
            (Ok(_), Err(e)) => panic!("small table accepted what a big one rejects: {e}"),
        }
    }
}

/// A lower header limit only ever adds `HeaderTooLarge`.
fn check_limit(bytes: &[u8], full: &Result<SafeTensors<'_, Vec<Slot>>, Error>) {
    let Some(json) = json_of(bytes).filter(|j| !j.is_empty()) else {
        return;
    };
    let limit = (json.len() as u64).saturating_sub(1);
    let limited = Parser::new()
        .header_limit(limit)
        .parse(bytes, slots_for(bytes));
    match limited {
        Err(e) if matches!(e.kind(), ErrorKind::HeaderTooLarge { limit: l, .. } if l == limit) => {}
        other => panic!(
            "limit {limit} below N: {:?} (unlimited: {:?})",
            other.map(|s| s.len()),
            full.as_ref().map(|s| s.len())
        ),
    }
    let exact = Parser::new()
        .header_limit(json.len() as u64)
        .parse(bytes, slots_for(bytes));
    assert_eq!(
        exact.map(|s| s.len()),
        full.as_ref().map(|s| s.len()).map_err(|e| *e)
    );
}

// ---------------------------------------------------------------------------
