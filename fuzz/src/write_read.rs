//! Target `write_read`: structured random tensors are written, read back
//! equal, and give the same bytes as the reference writer where
//! docs/format.md says they must.

use std::collections::{HashMap, HashSet};

use safetensors_nano::write::{serialize_to_vec, Tensor};
use safetensors_nano::Dtype;
use safetensors_nano_test_support::files::parse;
use safetensors_nano_test_support::reference::{compare, serialize, Agreement};
use safetensors_nano_test_support::tensors::Owned;

use crate::parse_touch::parse_and_touch;

/// One tensor for the writer target.
#[derive(arbitrary::Arbitrary, Debug)]
pub struct ArbTensor {
    name: String,
    dtype: u8,
    dims: Vec<u8>,
    fill: u8,
}

/// The writer target's input.
#[derive(arbitrary::Arbitrary, Debug)]
pub struct WriteInput {
    tensors: Vec<ArbTensor>,
    metadata: Option<Vec<(String, String)>>,
}

/// The target: writes `input`, reads the file back with our reader and the
/// reference's, and checks every tensor, the metadata, and (where
/// docs/format.md says they must be) the bytes against the reference
/// writer's.
pub fn check(input: &WriteInput) {
    let specs: Vec<(String, Dtype, Vec<u64>, Vec<u8>)> = input
        .tensors
        .iter()
        .take(16)
        .map(|t| {
            let dtype = Dtype::ALL[usize::from(t.dtype) % Dtype::ALL.len()];
            let dims: Vec<u64> = t.dims.iter().take(4).map(|&d| u64::from(d % 6)).collect();
            let elements: u64 = dims.iter().product();
            let len = (elements * u64::from(dtype.bits())).div_ceil(8) as usize;
            let data = (0..len)
                .map(|i| (i as u8).wrapping_mul(31).wrapping_add(t.fill))
                .collect();
            (t.name.clone(), dtype, dims, data)
        })
        .collect();
    let mut tensors: Vec<Tensor<'_>> = specs
        .iter()
        .map(|(n, d, s, b)| Tensor::new(n, *d, s, b))
        .collect();
    let mut meta: Option<Vec<(&str, &str)>> = input.metadata.as_ref().map(|m| {
        m.iter()
            .take(8)
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    });
    let written = serialize_to_vec(&mut tensors, meta.as_deref_mut());

    let names: HashSet<&str> = specs.iter().map(|s| s.0.as_str()).collect();
    let keys: HashSet<&str> = meta.iter().flatten().map(|p| p.0).collect();
    let sub_byte_partial = specs
        .iter()
        .any(|(_, d, s, _)| (s.iter().product::<u64>() * u64::from(d.bits())) % 8 != 0);
    let bad = names.len() != specs.len()
        || names.contains("__metadata__")
        || keys.len() != meta.as_ref().map_or(0, Vec::len)
        || sub_byte_partial;
    let file = match written {
        Ok(f) => {
            assert!(!bad, "the writer accepted a bad input: {input:?}");
            f
        }
        Err(e) => {
            assert!(bad, "the writer refused a good input: {e} {input:?}");
            return;
        }
    };
    // Our reader.
    let st = parse(&file).unwrap_or_else(|e| panic!("our reader rejects our writer's file: {e}"));
    assert_eq!(st.len(), specs.len());
    assert_eq!(st.header().header_len() % 8, 0, "padded to 8");
    for (name, dtype, dims, data) in &specs {
        let t = st.tensor(name).expect("tensor read back");
        assert_eq!((t.dtype(), t.data()), (*dtype, &data[..]));
        assert!(t.shape() == dims[..]);
        assert_eq!(
            t.data().as_ptr() as usize % dtype.align().max(1),
            file.as_ptr() as usize % dtype.align().max(1)
        );
    }
    let our_meta: Option<HashMap<String, String>> = st.metadata().map(|m| {
        m.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    });
    let want_meta: Option<HashMap<String, String>> = meta.as_ref().map(|m| {
        m.iter()
            .map(|&(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    });
    assert_eq!(our_meta, want_meta);
    parse_and_touch(&file);

    // The reference reads it the same way.
    assert_eq!(compare(&file), Agreement::Same);

    // And writes the same bytes, where docs/format.md says it does (W1…): at
    // most one metadata key (it writes a HashMap's order), and not its known
    // bugs (no tensors with empty metadata).
    let reference_comparable = meta.as_ref().is_none_or(|m| m.len() <= 1)
        && !(specs.is_empty() && meta.as_ref().is_some_and(Vec::is_empty));
    if reference_comparable {
        let owned: Vec<Owned> = specs
            .iter()
            .map(|(n, d, s, b)| Owned::new(n, *d, s, b))
            .collect();
        let pairs: Option<Vec<(String, String)>> = meta.as_ref().map(|m| {
            m.iter()
                .map(|&(k, v)| (k.to_owned(), v.to_owned()))
                .collect()
        });
        let theirs = serialize(&owned, pairs.as_deref());
        assert!(
            theirs == file,
            "bytes differ from the reference writer's for {input:?}"
        );
    }
}
