//! Property tests: our writer against the reference crate's `serialize`.
//!
//! With at most one metadata key the files must be byte-identical; with more
//! keys, ours has them sorted bytewise and is otherwise identical.

use proptest::prelude::*;
use safetensors_nano::Dtype;
use safetensors_nano_test_support::reference::serialize;
use safetensors_nano_test_support::tensors::{header, write, Owned};

/// Names that exercise escaping: quotes, backslashes, every control
/// character, `/`, DEL, non-ASCII, astral characters, the empty name.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9._]{0,12}",
        "[\"\\\\/\\x00-\\x1f\\x7f a-cé€😀]{0,10}",
        any::<String>(),
        Just(String::new()),
    ]
    .prop_filter("reserved", |n| n != "__metadata__")
}

fn dtype() -> impl Strategy<Value = Dtype> {
    proptest::sample::select(Dtype::ALL.to_vec())
}

/// A shape with 0–4 dims (scalars and zero dimensions included); when a
/// sub-byte dtype's bits are not whole bytes, a dimension of 4 is appended.
fn tensor_body() -> impl Strategy<Value = (Dtype, Vec<u64>, u64)> {
    (
        dtype(),
        proptest::collection::vec(0u64..6, 0..5),
        any::<u64>(),
    )
        .prop_map(|(d, mut shape, seed)| {
            let elements: u64 = shape.iter().product();
            if elements * u64::from(d.bits()) % 8 != 0 {
                shape.push(4);
            }
            (d, shape, seed)
        })
}

fn tensors(max: usize) -> impl Strategy<Value = Vec<Owned>> {
    proptest::collection::btree_map(name(), tensor_body(), 0..max).prop_map(|map| {
        map.into_iter()
            .map(|(name, (dtype, shape, seed))| Owned::seeded(name, dtype, shape, seed))
            .collect()
    })
}

fn metadata(keys: std::ops::Range<usize>) -> impl Strategy<Value = Vec<(String, String)>> {
    proptest::collection::btree_map(any::<String>(), any::<String>(), keys)
        .prop_map(|m| m.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Byte-identical to the reference for every input with ≤ 1 metadata key.
    #[test]
    fn identical_to_reference(
        mut tensors in tensors(12),
        metadata in proptest::option::of(metadata(0..2)),
        shuffle in any::<u64>(),
    ) {
        // (No tensors with empty metadata is the reference bug we fix: see write_golden.)
        prop_assume!(!(tensors.is_empty() && metadata.as_ref().is_some_and(|m| m.is_empty())));
        // The caller's order must not matter.
        let n = tensors.len();
        if n > 1 {
            tensors.rotate_left((shuffle % n as u64) as usize);
        }
        let expected = serialize(&tensors, metadata.as_deref());
        let got = write(&tensors, metadata.as_deref()).unwrap();
        prop_assert_eq!(got, expected);
    }

    /// With 2+ metadata keys: keys sorted bytewise, all else identical.
    #[test]
    fn more_keys_sorted_otherwise_identical(
        tensors in tensors(6),
        metadata in metadata(2..6),
    ) {
        let got = write(&tensors, Some(&metadata)).unwrap();
        let without = serialize(&tensors, None);
        // Expected header: the reference's tensor entries after our sorted
        // metadata object, serde_json escaping each key and value.
        let entries: Vec<String> = metadata
            .iter()
            .map(|(k, v)| format!("{}:{}", serde_json::to_string(k).unwrap(), serde_json::to_string(v).unwrap()))
            .collect();
        let tensors_json = header(&without).trim_end();
        let tensors_json = &tensors_json[1..tensors_json.len() - 1];
        let mut json = format!("{{\"__metadata__\":{{{}}}", entries.join(","));
        if !tensors_json.is_empty() {
            json.push(',');
            json.push_str(tensors_json);
        }
        json.push('}');
        prop_assert_eq!(header(&got).trim_end_matches(' '), json.as_str());
        let data_start = 8 + header(&got).len();
        let ref_data_start = 8 + header(&without).len();
        prop_assert_eq!(&got[data_start..], &without[ref_data_start..]);
        // and the reference reads the same metadata and tensors back
        let (_, meta) = safetensors::SafeTensors::read_metadata(&got).unwrap();
        let meta = meta.metadata().clone().unwrap();
        prop_assert_eq!(meta.len(), metadata.len());
        for (k, v) in &metadata {
            prop_assert_eq!(meta.get(k), Some(v));
        }
        let st = safetensors::SafeTensors::deserialize(&got).unwrap();
        prop_assert_eq!(st.len(), tensors.len());
        for t in &tensors {
            let view = st.tensor(&t.name).unwrap();
            prop_assert_eq!(view.data(), &t.data[..]);
        }
    }
}
