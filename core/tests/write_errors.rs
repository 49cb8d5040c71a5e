//! Writer errors: the right kind and tensor, and nothing written.

use std::cell::Cell;
use std::collections::HashSet;

use proptest::prelude::*;

use safetensors_nano::write::{
    serialize_to_slice, AsSpec, AsTensor, Plan, Sink, SliceSink, Tensor, TensorSpec, Writer,
};
use safetensors_nano::{Dtype, Error, ErrorKind, TensorRef};

/// A sink that records how many bytes it got, and can fail after `limit`.
#[derive(Debug, Default)]
struct Recording {
    bytes: Vec<u8>,
    limit: Option<usize>,
}

impl Sink for Recording {
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if let Some(limit) = self.limit {
            if self.bytes.len() + bytes.len() > limit {
                return Err(ErrorKind::Sink.into());
            }
        }
        self.bytes.extend_from_slice(bytes);
        Ok(())
    }
}

/// Runs the one-shot slice writer on a poisoned buffer; asserts nothing
/// changed in it and returns the error.
fn refused(tensors: &mut [Tensor<'_>], metadata: Option<&mut [(&str, &str)]>) -> Error {
    let mut buf = vec![0xAA; 4096];
    let err = serialize_to_slice(tensors, metadata, &mut buf).unwrap_err();
    assert!(
        buf.iter().all(|&b| b == 0xAA),
        "bytes were written before {err}"
    );
    err
}

#[test]
fn duplicate_names_same_or_different_dtype() {
    let mut tensors = [
        Tensor::new("b", Dtype::U8, &[1], &[1]),
        Tensor::new("a", Dtype::F32, &[0], &[]),
        Tensor::new("a", Dtype::U8, &[1], &[1]),
    ];
    let err = refused(&mut tensors, None);
    assert_eq!(err.kind(), ErrorKind::DuplicateTensorName);
    // the index is in the slice as left (written order), at one of the two
    let Some(TensorRef::Index(i)) = err.tensor() else {
        panic!("{err:?}")
    };
    assert_eq!(tensors[i as usize].spec().name(), "a");
    assert_eq!(tensors.iter().filter(|t| t.spec().name() == "a").count(), 2);

    let mut same = [
        Tensor::new("w", Dtype::U8, &[1], &[1]),
        Tensor::new("w", Dtype::U8, &[1], &[2]),
    ];
    assert_eq!(
        refused(&mut same, None).kind(),
        ErrorKind::DuplicateTensorName
    );
}

#[test]
fn tensor_named_metadata_is_reserved() {
    let mut tensors = [
        Tensor::new("ok", Dtype::U8, &[1], &[1]),
        Tensor::new("__metadata__", Dtype::U8, &[1], &[1]),
    ];
    let err = refused(&mut tensors, None);
    assert_eq!(err.kind(), ErrorKind::ReservedName);
    assert_eq!(err.tensor(), Some(TensorRef::Index(1)));
    // per-tensor checks leave the caller's order untouched
    assert_eq!(tensors[0].spec().name(), "ok");
    // an escaped-looking or differently cased name is just a name
    let mut fine = [Tensor::new("__METADATA__", Dtype::U8, &[1], &[1])];
    let mut buf = [0u8; 128];
    assert!(serialize_to_slice(&mut fine, None, &mut buf).is_ok());
}

#[test]
fn data_length_must_be_shape_times_dtype() {
    let cases: [(Dtype, &[u64], usize, ErrorKind); 7] = [
        (
            Dtype::F32,
            &[2],
            7,
            ErrorKind::DataLengthMismatch {
                expected: 8,
                found: 7,
            },
        ),
        (
            Dtype::F32,
            &[2],
            9,
            ErrorKind::DataLengthMismatch {
                expected: 8,
                found: 9,
            },
        ),
        (
            Dtype::U8,
            &[],
            0,
            ErrorKind::DataLengthMismatch {
                expected: 1,
                found: 0,
            },
        ),
        (
            Dtype::F64,
            &[3, 0],
            8,
            ErrorKind::DataLengthMismatch {
                expected: 0,
                found: 8,
            },
        ),
        (
            Dtype::F4,
            &[3],
            2,
            ErrorKind::MisalignedSlice { elements: 3 },
        ),
        (
            Dtype::F4,
            &[4],
            3,
            ErrorKind::DataLengthMismatch {
                expected: 2,
                found: 3,
            },
        ),
        (
            Dtype::F6_E3M2,
            &[2, 3],
            5,
            ErrorKind::MisalignedSlice { elements: 6 },
        ),
    ];
    for (dtype, shape, len, kind) in cases {
        let data = vec![0u8; len];
        let mut tensors = [
            Tensor::new("ok", Dtype::U8, &[1], &[1]),
            Tensor::new("t", dtype, shape, &data),
        ];
        let err = refused(&mut tensors, None);
        assert_eq!(err.kind(), kind, "{dtype} {shape:?} {len}");
        assert_eq!(err.tensor(), Some(TensorRef::Index(1)));
    }
    // and the sub-byte lengths that are right
    let mut ok = [
        Tensor::new("f4", Dtype::F4, &[2, 3], &[0; 3]),
        Tensor::new("f6", Dtype::F6_E2M3, &[8], &[0; 6]),
    ];
    let mut buf = [0u8; 256];
    assert!(serialize_to_slice(&mut ok, None, &mut buf).is_ok());
}

#[test]
fn arithmetic_overflow_is_an_error() {
    let overflowing: [&[u64]; 3] = [&[u64::MAX, 2], &[1 << 32, 1 << 32], &[1 << 61]];
    for shape in overflowing {
        let mut specs = [TensorSpec::new("t", Dtype::F64, shape, 0)];
        let err = Plan::new(&mut specs).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ValidationOverflow, "{shape:?}");
        assert_eq!(err.tensor(), Some(TensorRef::Index(0)));
    }
    // each tensor fits (at most (2^64 - 1) / 8 bytes, for the bit count), nine do not
    const MAX: u64 = (1 << 61) - 1;
    let mut specs: Vec<TensorSpec<'_>> = (0..9)
        .map(|i| {
            TensorSpec::new(
                ["a", "b", "c", "d", "e", "f", "g", "h", "i"][i],
                Dtype::U8,
                &[MAX],
                MAX,
            )
        })
        .collect();
    let err = Plan::new(&mut specs).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ValidationOverflow);
    assert_eq!(err.tensor(), Some(TensorRef::Index(8)));
    // eight fit as data (2^64 - 8 bytes), but 8 + N + data does not
    let err = Plan::new(&mut specs[..8]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ValidationOverflow);
    assert_eq!(err.tensor(), None);
    // huge but representable: planned fine (it is the sink that must hold it)
    let mut specs = [TensorSpec::new("a", Dtype::U8, &[1 << 60], 1 << 60)];
    let plan = Plan::new(&mut specs).unwrap();
    assert_eq!(plan.data_len(), 1 << 60);
    let mut buf = [0u8; 64];
    let err = Writer::begin(&plan, SliceSink::new(&mut buf)).unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::BufferTooSmall {
            needed: plan.file_len(),
            available: 64
        }
    );
    assert!(buf.iter().all(|&b| b == 0));
}

#[test]
fn duplicate_metadata_keys() {
    let mut tensors = [Tensor::new("x", Dtype::U8, &[1], &[1])];
    let mut metadata = [("k", "1"), ("j", "2"), ("k", "3")];
    let err = refused(&mut tensors, Some(&mut metadata));
    assert_eq!(err.kind(), ErrorKind::DuplicateMetadataKey);
}

#[test]
fn header_limit_boundary_agrees_with_the_reference() {
    // {"__metadata__":{"k":"<value>"}} is 25 + len bytes of JSON.
    let limit = 100_000_000usize;
    for (value_len, ok) in [(limit - 25, true), (limit - 25 + 1, false)] {
        let value = "v".repeat(value_len);
        let mut tensors: [TensorSpec<'_>; 0] = [];
        let mut metadata = [("k", value.as_str())];
        let ours = Plan::with_metadata(&mut tensors, &mut metadata);
        let reference = safetensors::tensor::serialize(
            Vec::<(String, safetensors::tensor::TensorView<'_>)>::new(),
            Some([("k".to_owned(), value.clone())].into_iter().collect()),
        );
        if ok {
            assert_eq!(ours.unwrap().header_len(), limit as u64);
            // (the reference writes its broken "{},..." form for no tensors; it only
            // matters here that it accepts the length too)
            assert!(reference.is_ok());
        } else {
            assert_eq!(
                ours.unwrap_err().kind(),
                ErrorKind::HeaderTooLarge {
                    header_len: limit as u64 + 8,
                    limit: limit as u64
                }
            );
            assert!(matches!(
                reference,
                Err(safetensors::SafeTensorError::HeaderTooLarge)
            ));
        }
    }
}

#[test]
fn buffer_too_small_says_how_much_is_needed() {
    let mut tensors = [Tensor::new("x", Dtype::U16, &[2], &[1, 0, 2, 0])];
    let plan = Plan::new(&mut tensors).unwrap();
    let needed = plan.file_len();
    let mut buf = vec![0xAA; needed as usize - 1];
    let err = plan.write_to_slice(&mut buf).unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::BufferTooSmall {
            needed,
            available: needed - 1
        }
    );
    assert!(buf.iter().all(|&b| b == 0xAA));
    let mut buf = vec![0xAA; needed as usize + 5];
    assert_eq!(plan.write_to_slice(&mut buf).unwrap().len() as u64, needed);
    assert!(buf[needed as usize..].iter().all(|&b| b == 0xAA));
}

/// An item whose data does not match its spec.
struct Liar<'a> {
    spec: TensorSpec<'a>,
    data: &'a [u8],
}
impl AsSpec for Liar<'_> {
    fn spec(&self) -> TensorSpec<'_> {
        self.spec
    }
}
impl AsTensor for Liar<'_> {
    fn data(&self) -> &[u8] {
        self.data
    }
}

#[test]
fn one_shot_checks_all_data_before_writing() {
    let mut items = [
        Liar {
            spec: TensorSpec::new("a", Dtype::U8, &[2], 2),
            data: &[1, 2],
        },
        Liar {
            spec: TensorSpec::new("b", Dtype::U8, &[2], 2),
            data: &[1, 2, 3],
        },
    ];
    let plan = Plan::new(&mut items).unwrap();
    let err = match plan.write_to(Recording::default()) {
        Err(e) => e,
        Ok(sink) => panic!("wrote {} bytes", sink.bytes.len()),
    };
    assert_eq!(
        err.kind(),
        ErrorKind::DataLengthMismatch {
            expected: 2,
            found: 3
        }
    );
    assert_eq!(err.tensor(), Some(TensorRef::Index(1)));
    let mut sink = Recording::default();
    assert!(plan.write_to(&mut sink).is_err());
    assert!(sink.bytes.is_empty());
}

/// An item whose spec changes between calls: an error, never a panic or a
/// header that disagrees with its length.
struct Shifty {
    calls: Cell<u32>,
}
impl AsSpec for Shifty {
    fn spec(&self) -> TensorSpec<'_> {
        let n = self.calls.get();
        self.calls.set(n + 1);
        if n < 2 {
            TensorSpec::new("short", Dtype::U8, &[1], 1)
        } else {
            TensorSpec::new("a much longer name", Dtype::U8, &[1], 1)
        }
    }
}

#[test]
fn inconsistent_spec_is_an_error_not_a_panic() {
    let mut items = [Shifty {
        calls: Cell::new(0),
    }];
    let plan = Plan::new(&mut items).unwrap();
    let mut buf = vec![0u8; 1024];
    let err = Writer::begin(&plan, SliceSink::new(&mut buf)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Sink);
}

#[test]
fn failing_sink_poisons_the_writer() {
    let mut specs = [TensorSpec::new("x", Dtype::U8, &[8], 8)];
    let plan = Plan::new(&mut specs).unwrap();
    let limit = plan.data_start() as usize + 3;
    let mut w = Writer::begin(
        &plan,
        Recording {
            bytes: Vec::new(),
            limit: Some(limit),
        },
    )
    .unwrap();
    w.write_tensor_data(&[1, 2, 3]).unwrap();
    assert_eq!(
        w.write_tensor_data(&[4]).unwrap_err().kind(),
        ErrorKind::Sink
    );
    assert_eq!(
        w.write_tensor_data(&[]).unwrap_err().kind(),
        ErrorKind::Sink
    );
    assert_eq!(w.finish_tensor().unwrap_err().kind(), ErrorKind::Sink);
    assert_eq!(w.finish().unwrap_err().kind(), ErrorKind::Sink);
}

#[test]
fn error_display_names_the_tensor_index() {
    let mut tensors = [Tensor::new("__metadata__", Dtype::U8, &[1], &[1])];
    let err = refused(&mut tensors, None);
    assert_eq!(
        err.to_string(),
        "a tensor may not be named __metadata__ (tensor #0)"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Duplicates are found whatever their dtypes and positions, and only then.
    #[test]
    fn duplicates_found_across_dtypes(
        entries in proptest::collection::vec(("[a-d]{0,2}", proptest::sample::select(Dtype::ALL.to_vec())), 0..30),
    ) {
        let mut specs: Vec<TensorSpec<'_>> = entries
            .iter()
            .map(|(name, dtype)| TensorSpec::new(name, *dtype, &[0], 0))
            .collect();
        let unique = entries.iter().map(|(n, _)| n).collect::<HashSet<_>>().len() == entries.len();
        match Plan::new(&mut specs) {
            Ok(_) => prop_assert!(unique, "missed a duplicate in {:?}", entries),
            Err(err) => {
                prop_assert!(!unique);
                prop_assert_eq!(err.kind(), ErrorKind::DuplicateTensorName);
                let Some(TensorRef::Index(i)) = err.tensor() else { panic!("{err:?}") };
                let name = specs[i as usize].name();
                prop_assert!(specs.iter().filter(|s| s.name() == name).count() >= 2);
            }
        }
    }
}
