//! Golden outputs of the writer: the worked example of docs/format.md byte
//! for byte, and
//! the special cases where we differ from (or agree with) the reference.

use safetensors_nano::write::{Plan, SliceSink, Tensor, TensorSpec, Writer};
use safetensors_nano::Dtype;
use safetensors_nano_test_support::reference::serialize;
use safetensors_nano_test_support::tensors;
use safetensors_nano_test_support::tensors::{header, write, Owned};

/// The writer's worked example of docs/format.md (W1…), as the reference
/// writes it (163 bytes).
const WORKED_EXAMPLE_JSON: &[u8] = br#"{"__metadata__":{"format":"pt"},"y":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"x":{"dtype":"U8","shape":[3],"data_offsets":[8,11]}}"#;

fn worked_example() -> (Vec<Owned>, Vec<(String, String)>) {
    let y: Vec<u8> = [1.0f32, -2.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    (
        vec![
            Owned::new("x", Dtype::U8, &[3], &[1, 2, 3]),
            Owned::new("y", Dtype::F32, &[2], &y),
        ],
        vec![("format".to_owned(), "pt".to_owned())],
    )
}

#[test]
fn spec_worked_example_byte_for_byte() {
    let (tensors, metadata) = worked_example();
    let file = write(&tensors, Some(&metadata)).unwrap();

    let mut expected = Vec::new();
    expected.extend_from_slice(&144u64.to_le_bytes());
    assert_eq!(WORKED_EXAMPLE_JSON.len(), 138);
    expected.extend_from_slice(WORKED_EXAMPLE_JSON);
    expected.extend_from_slice(b"      ");
    expected.extend_from_slice(&[
        0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0, 0x01, 0x02, 0x03,
    ]);
    assert_eq!(expected.len(), 163);
    assert_eq!(file, expected);
    // and the reference agrees
    assert_eq!(file, serialize(&tensors, Some(&metadata)));
    // printed for the report (cargo test -- --nocapture)
    println!("worked example ({} bytes):", file.len());
    for line in file.chunks(16) {
        println!(
            "  {}",
            line.iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
}

#[test]
fn worked_example_without_any_allocation_feature() {
    // The same file through the no_std API only: specs, a plan, a stack
    // buffer, a streaming writer.
    let y = [1.0f32, -2.0];
    let y_bytes: &[u8] = bytemuck::cast_slice(&y);
    let mut specs = [
        TensorSpec::new("x", Dtype::U8, &[3], 3),
        TensorSpec::new("y", Dtype::F32, &[2], 8),
    ];
    let mut metadata = [("format", "pt")];
    let plan = Plan::with_metadata(&mut specs, &mut metadata).unwrap();
    assert_eq!(
        (plan.header_len(), plan.data_start(), plan.file_len()),
        (144, 152, 163)
    );
    let mut buf = [0u8; 163];
    let mut w = Writer::begin(&plan, SliceSink::new(&mut buf)).unwrap();
    w.write_tensor("y", y_bytes).unwrap();
    w.write_tensor("x", &[1, 2, 3]).unwrap();
    w.finish().unwrap();
    let (tensors, meta) = worked_example();
    assert_eq!(buf.to_vec(), serialize(&tensors, Some(&meta)));
}

#[test]
fn no_tensors() {
    // None: the reference writes "{}" padded; so do we.
    let file = write(&[], None).unwrap();
    assert_eq!(file, serialize(&[], None));
    assert_eq!(header(&file), "{}      ");
    assert_eq!(file.len(), 16);
    // Empty metadata: the reference writes invalid JSON; we write a valid object.
    let file = write(&[], Some(&[])).unwrap();
    assert_eq!(header(&file), r#"{"__metadata__":{}}     "#);
    let reference_bytes = serialize(&[], Some(&[]));
    assert_eq!(
        header(&reference_bytes),
        r#"{},"__metadata__":{}}   "#,
        "reference bug changed?"
    );
    // ... which the reference reads back
    let st = safetensors::SafeTensors::deserialize(&file).unwrap();
    assert_eq!(st.len(), 0);
    let (_, meta) = safetensors::SafeTensors::read_metadata(&file).unwrap();
    assert_eq!(meta.metadata().as_ref().map(|m| m.len()), Some(0));
}

#[test]
fn empty_metadata_with_tensors_matches_reference() {
    let tensors = [Owned::new("x", Dtype::U8, &[3], &[1, 2, 3])];
    let file = write(&tensors, Some(&[])).unwrap();
    assert_eq!(file, serialize(&tensors, Some(&[])));
    assert!(header(&file).starts_with(r#"{"__metadata__":{},"x":"#));
}

#[test]
fn scalars_zero_dims_and_escapes_match_reference() {
    let tensors = [
        Owned::new("s", Dtype::U8, &[], &[7]),
        Owned::new(
            "z\u{1}\"\\/\u{7f}é\u{8}\u{c}\n\r\t\u{1f}😀",
            Dtype::F32,
            &[0, 3],
            &[],
        ),
        Owned::new("", Dtype::BOOL, &[1], &[1]),
        Owned::new("big", Dtype::F64, &[1 << 40, 0], &[]),
    ];
    let file = write(&tensors, None).unwrap();
    // [1<<40, 0] is beyond the reference on 32-bit targets only; on 64-bit it agrees.
    assert_eq!(file, serialize(&tensors, None));
    assert!(header(&file).contains(r#""z\u0001\"\\/"#));
}

#[test]
fn every_dtype_sorts_like_the_reference() {
    let tensors: Vec<Owned> = Dtype::ALL
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            let shape = [4u64];
            let len = tensors::byte_len(d, &shape);
            Owned::new(
                &format!("t{}", 21 - i),
                d,
                &shape,
                &tensors::bytes_from_seed(i as u64, len),
            )
        })
        .collect();
    let file = write(&tensors, None).unwrap();
    assert_eq!(file, serialize(&tensors, None));
    // U64 first, BOOL last
    let h = header(&file);
    assert!(h.starts_with(r#"{"t0":{"dtype":"U64""#), "{h}");
    let total: usize = tensors.iter().map(|t| t.data.len()).sum();
    let last = format!(
        r#""t21":{{"dtype":"BOOL","shape":[4],"data_offsets":[{},{total}]}}}}"#,
        total - 4
    );
    assert!(h.trim_end().ends_with(&last), "{h}");
}

#[test]
fn header_padding_for_every_length_mod_8() {
    // Names of growing length move the JSON length through every residue.
    for n in 0..16 {
        let name = "n".repeat(n);
        let tensors = [Owned::new(&name, Dtype::I16, &[1], &[1, 2])];
        let file = write(&tensors, None).unwrap();
        assert_eq!(file, serialize(&tensors, None), "name length {n}");
        let h = header(&file);
        assert_eq!(h.len() % 8, 0);
        assert!(h.len() - h.trim_end_matches(' ').len() < 8);
    }
}

#[test]
fn more_than_one_metadata_key_is_sorted_bytewise() {
    let tensors = [Owned::new("x", Dtype::U8, &[1], &[1])];
    let metadata: Vec<(String, String)> =
        [("b", "2"), ("a", "1"), ("é", "3"), ("Z", "4"), ("a0", "5")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    let file = write(&tensors, Some(&metadata)).unwrap();
    assert_eq!(
        header(&file).trim_end(),
        r#"{"__metadata__":{"Z":"4","a":"1","a0":"5","b":"2","é":"3"},"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#
    );
    // the reference reads the same metadata back
    let (_, meta) = safetensors::SafeTensors::read_metadata(&file).unwrap();
    let meta = meta.metadata().clone().unwrap();
    assert_eq!(meta.len(), 5);
    for (k, v) in &metadata {
        assert_eq!(meta.get(k), Some(v));
    }
}

#[test]
fn tensors_are_aligned_to_their_element_size() {
    let tensors: Vec<Owned> = (0..40)
        .map(|i| {
            let d = Dtype::ALL[i % 22];
            let shape = [(i as u64 % 5) * 4];
            let len = tensors::byte_len(d, &shape);
            Owned::new(&format!("name{i}"), d, &shape, &vec![0; len])
        })
        .collect();
    let mut views: Vec<Tensor<'_>> = tensors.iter().map(Owned::view).collect();
    let plan = Plan::new(&mut views).unwrap();
    assert_eq!(plan.data_start() % 8, 0);
    for t in plan.iter() {
        let align = t.spec().dtype().bits().div_ceil(8) as u64;
        assert_eq!((plan.data_start() + t.data_offsets().0) % align, 0);
    }
}
