//! The streaming writer: data in chunks, in planned order, exactly sized.

use proptest::prelude::*;
use safetensors_nano::write::{Plan, Sink, SliceSink, TensorSpec, Writer};
use safetensors_nano::{Dtype, ErrorKind, TensorRef};
use safetensors_nano_test_support::tensors::{write, Owned};

fn specs_of(tensors: &[Owned]) -> Vec<TensorSpec<'_>> {
    tensors
        .iter()
        .map(|t| TensorSpec::new(&t.name, t.dtype, &t.shape, t.data.len() as u64))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Any chunking of the data gives the same file as the one-shot writer.
    #[test]
    fn any_chunking_gives_the_same_file(
        bodies in proptest::collection::btree_map(
            "[a-z]{1,6}",
            (proptest::sample::select(Dtype::ALL.to_vec()), proptest::collection::vec(0u64..7, 0..3), any::<u64>()),
            0..8,
        ),
        cuts in proptest::collection::vec(1usize..40, 1..20),
    ) {
        let tensors: Vec<Owned> = bodies
            .into_iter()
            .map(|(name, (dtype, mut shape, seed))| {
                if shape.iter().product::<u64>() * u64::from(dtype.bits()) % 8 != 0 {
                    shape.push(4);
                }
                Owned::seeded(name, dtype, shape, seed)
            })
            .collect();
        let expected = write(&tensors, None).unwrap();

        let mut specs = specs_of(&tensors);
        let plan = Plan::new(&mut specs).unwrap();
        let mut buf = vec![0u8; expected.len()];
        let mut w = Writer::begin(&plan, SliceSink::new(&mut buf)).unwrap();
        let mut cut = cuts.iter().cycle();
        for placed in plan.iter() {
            let name = placed.spec().name();
            let data = &tensors.iter().find(|t| t.name == name).unwrap().data;
            prop_assert_eq!(w.begin_tensor(name).unwrap().byte_len(), data.len() as u64);
            let mut rest = &data[..];
            while !rest.is_empty() {
                let (chunk, tail) = rest.split_at((*cut.next().unwrap()).min(rest.len()));
                w.write_tensor_data(chunk).unwrap();
                prop_assert_eq!(w.remaining(), tail.len() as u64);
                rest = tail;
            }
            w.finish_tensor().unwrap();
        }
        prop_assert!(w.current().is_none());
        prop_assert_eq!(w.position(), expected.len() as u64);
        prop_assert_eq!(w.finish().unwrap().written(), expected.len());
        prop_assert_eq!(buf, expected);
    }
}

/// A sink that keeps everything, to check that refused calls write nothing.
#[derive(Debug, Default)]
struct Keep(Vec<u8>);
impl Sink for Keep {
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), safetensors_nano::Error> {
        self.0.extend_from_slice(bytes);
        Ok(())
    }
}

fn two_tensor_plan<'a>(specs: &'a mut [TensorSpec<'a>; 3]) -> Plan<'a, TensorSpec<'a>> {
    Plan::new(specs).unwrap()
}

fn kind(r: Result<(), safetensors_nano::Error>) -> ErrorKind {
    r.unwrap_err().kind()
}

#[test]
fn out_of_order_and_wrong_lengths_are_refused_without_writing() {
    let mut specs = [
        TensorSpec::new("b", Dtype::U8, &[2], 2),
        TensorSpec::new("a", Dtype::U8, &[3], 3),
        TensorSpec::new("empty", Dtype::F32, &[0], 0),
    ];
    let plan = two_tensor_plan(&mut specs);
    // order: F32 "empty", then U8 "a", "b"
    let names: Vec<&str> = plan.iter().map(|t| t.spec().name()).collect();
    assert_eq!(names, ["empty", "a", "b"]);

    let mut w = Writer::begin(&plan, Keep::default()).unwrap();
    let header_end = w.sink().0.len();
    assert_eq!(header_end as u64, plan.data_start());

    assert_eq!(
        kind(w.begin_tensor("a").map(|_| ())),
        ErrorKind::DataOutOfOrder
    );
    assert_eq!(
        kind(w.write_tensor("a", &[1, 2, 3])),
        ErrorKind::DataOutOfOrder
    );
    assert_eq!(
        kind(w.write_tensor_data(&[1])),
        ErrorKind::DataLengthMismatch {
            expected: 0,
            found: 1
        }
    );
    assert_eq!(w.sink().0.len(), header_end, "refused calls wrote bytes");
    w.write_tensor("empty", &[]).unwrap();

    // "a": too long at once, then in two chunks with an overflowing one between
    let err = w.write_tensor("a", &[1, 2, 3, 4]).unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::DataLengthMismatch {
            expected: 3,
            found: 4
        }
    );
    assert_eq!(err.tensor(), Some(TensorRef::Index(1)));
    w.write_tensor_data(&[1, 2]).unwrap();
    assert_eq!(
        kind(w.begin_tensor("a").map(|_| ())),
        ErrorKind::DataOutOfOrder,
        "data already started"
    );
    assert_eq!(
        kind(w.write_tensor_data(&[3, 4])),
        ErrorKind::DataLengthMismatch {
            expected: 3,
            found: 4
        }
    );
    // short: cannot finish, and cannot move on
    assert_eq!(
        kind(w.finish_tensor()),
        ErrorKind::DataLengthMismatch {
            expected: 3,
            found: 2
        }
    );
    assert_eq!(
        kind(w.write_tensor("b", &[5, 6])),
        ErrorKind::DataOutOfOrder
    );
    assert_eq!(w.sink().0.len(), header_end + 2);
    w.write_tensor_data(&[3]).unwrap();
    w.finish_tensor().unwrap();

    // "b" never finished: finish() refuses and names it
    w.write_tensor_data(&[5]).unwrap();
    let err = w.finish().unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::DataLengthMismatch {
            expected: 2,
            found: 1
        }
    );
    assert_eq!(err.tensor(), Some(TensorRef::Index(2)));
}

#[test]
fn nothing_is_taken_after_the_last_tensor() {
    let mut specs = [TensorSpec::new("x", Dtype::I8, &[1], 1)];
    let plan = Plan::new(&mut specs).unwrap();
    let mut w = Writer::begin(&plan, Keep::default()).unwrap();
    w.write_tensor("x", &[9]).unwrap();
    assert_eq!(w.remaining(), 0);
    assert_eq!(
        w.write_tensor_data(&[1]).unwrap_err().kind(),
        ErrorKind::DataOutOfOrder
    );
    assert_eq!(
        w.write_tensor_data(&[]).unwrap_err().kind(),
        ErrorKind::DataOutOfOrder
    );
    assert_eq!(
        w.finish_tensor().unwrap_err().kind(),
        ErrorKind::DataOutOfOrder
    );
    assert_eq!(
        w.begin_tensor("x").unwrap_err().kind(),
        ErrorKind::DataOutOfOrder
    );
    let file = w.finish().unwrap().0;
    assert_eq!(file.len() as u64, plan.file_len());
    assert_eq!(file.last(), Some(&9));
}

#[test]
fn no_tensors_streams_just_the_header() {
    let mut specs: [TensorSpec<'_>; 0] = [];
    let mut metadata = [("created_by", "sensor-7")];
    let plan = Plan::with_metadata(&mut specs, &mut metadata).unwrap();
    let w = Writer::begin(&plan, Keep::default()).unwrap();
    assert!(w.current().is_none());
    let file = w.finish().unwrap().0;
    let st = safetensors::SafeTensors::read_metadata(&file).unwrap();
    assert_eq!(st.1.metadata().as_ref().unwrap()["created_by"], "sensor-7");
}

#[cfg(feature = "embedded-io")]
#[test]
fn embedded_io_sink_streams_into_a_slice_writer() {
    use safetensors_nano::write::EmbeddedIoSink;
    let tensors = [Owned::seeded("t".into(), Dtype::F16, vec![4], 1)];
    let expected = write(&tensors, None).unwrap();
    let mut specs = specs_of(&tensors);
    let plan = Plan::new(&mut specs).unwrap();
    let mut buf = vec![0u8; expected.len()];
    let mut w = Writer::begin(&plan, EmbeddedIoSink::new(&mut buf[..])).unwrap();
    for chunk in tensors[0].data.chunks(3) {
        w.write_tensor_data(chunk).unwrap();
    }
    w.finish_tensor().unwrap();
    let rest = w.finish().unwrap().into_inner();
    assert!(rest.is_empty());
    assert_eq!(buf, expected);

    // a destination that is too short: a Sink error, its own error kept
    let mut short = vec![0u8; expected.len() - 1];
    let mut sink = EmbeddedIoSink::new(&mut short[..]);
    let mut w = Writer::begin(&plan, &mut sink).unwrap();
    w.write_tensor_data(&tensors[0].data[..7]).unwrap();
    assert_eq!(
        w.write_tensor_data(&tensors[0].data[7..])
            .unwrap_err()
            .kind(),
        ErrorKind::Sink
    );
    assert_eq!(sink.take_error(), Some(embedded_io::SliceWriteError::Full));
}

#[cfg(feature = "alloc")]
#[test]
fn vec_sink_and_serialize_to_vec_agree_with_the_slice_writer() {
    use safetensors_nano::write::{serialize_to_vec, Tensor};
    let tensors = [
        Owned::seeded("a".into(), Dtype::BF16, vec![3], 2),
        Owned::seeded("b".into(), Dtype::C64, vec![1], 3),
    ];
    let expected = write(&tensors, Some(&[("k".into(), "v".into())])).unwrap();
    let mut views: Vec<Tensor<'_>> = tensors.iter().map(Owned::view).collect();
    let got = serialize_to_vec(&mut views, Some(&mut [("k", "v")])).unwrap();
    assert_eq!(got, expected);
    assert_eq!(got.capacity(), got.len(), "one exact reservation");
}
