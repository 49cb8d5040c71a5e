//! Helpers shared by the writer tests: owned tensors, our writer into a
//! buffer, and the reference crate's `serialize` as the oracle.
#![allow(dead_code)]

use std::collections::HashMap;

use safetensors_nano::write::{Plan, Tensor};
use safetensors_nano::{Dtype, Error};

/// An owned tensor for tests.
#[derive(Clone, Debug)]
pub struct Owned {
    pub name: String,
    pub dtype: Dtype,
    pub shape: Vec<u64>,
    pub data: Vec<u8>,
}

impl Owned {
    pub fn new(name: &str, dtype: Dtype, shape: &[u64], data: &[u8]) -> Self {
        Owned {
            name: name.to_owned(),
            dtype,
            shape: shape.to_vec(),
            data: data.to_vec(),
        }
    }

    /// A tensor whose bytes come from `seed` ([`bytes_from_seed`]).
    pub fn seeded(name: String, dtype: Dtype, shape: Vec<u64>, seed: u64) -> Self {
        let data = bytes_from_seed(seed, byte_len(dtype, &shape));
        Owned {
            name,
            dtype,
            shape,
            data,
        }
    }

    pub fn view(&self) -> Tensor<'_> {
        Tensor::new(&self.name, self.dtype, &self.shape, &self.data)
    }
}

/// The reference crate's dtype for ours.
pub fn ref_dtype(d: Dtype) -> safetensors::Dtype {
    use safetensors::Dtype as R;
    match d {
        Dtype::BOOL => R::BOOL,
        Dtype::F4 => R::F4,
        Dtype::F6_E2M3 => R::F6_E2M3,
        Dtype::F6_E3M2 => R::F6_E3M2,
        Dtype::U8 => R::U8,
        Dtype::I8 => R::I8,
        Dtype::F8_E5M2 => R::F8_E5M2,
        Dtype::F8_E4M3 => R::F8_E4M3,
        Dtype::F8_E8M0 => R::F8_E8M0,
        Dtype::F8_E4M3FNUZ => R::F8_E4M3FNUZ,
        Dtype::F8_E5M2FNUZ => R::F8_E5M2FNUZ,
        Dtype::I16 => R::I16,
        Dtype::U16 => R::U16,
        Dtype::F16 => R::F16,
        Dtype::BF16 => R::BF16,
        Dtype::I32 => R::I32,
        Dtype::U32 => R::U32,
        Dtype::F32 => R::F32,
        Dtype::C64 => R::C64,
        Dtype::F64 => R::F64,
        Dtype::I64 => R::I64,
        Dtype::U64 => R::U64,
    }
}

/// Our writer: plan, then write into an exactly sized buffer (no features needed).
pub fn ours(tensors: &[Owned], metadata: Option<&[(String, String)]>) -> Result<Vec<u8>, Error> {
    let mut views: Vec<Tensor<'_>> = tensors.iter().map(Owned::view).collect();
    let mut meta: Option<Vec<(&str, &str)>> =
        metadata.map(|m| m.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect());
    let plan = match meta.as_mut() {
        Some(meta) => Plan::with_metadata(&mut views, meta)?,
        None => Plan::new(&mut views)?,
    };
    let mut buf = vec![0u8; usize::try_from(plan.file_len()).unwrap()];
    let written = plan.write_to_slice(&mut buf)?.len();
    assert_eq!(
        written,
        buf.len(),
        "write_to_slice wrote less than file_len"
    );
    Ok(buf)
}

/// The reference crate's `serialize` of the same tensors.
pub fn reference(tensors: &[Owned], metadata: Option<&[(String, String)]>) -> Vec<u8> {
    let views: Vec<(String, safetensors::tensor::TensorView<'_>)> = tensors
        .iter()
        .map(|t| {
            let shape = t
                .shape
                .iter()
                .map(|&d| usize::try_from(d).unwrap())
                .collect();
            let view = safetensors::tensor::TensorView::new(ref_dtype(t.dtype), shape, &t.data)
                .expect("reference TensorView");
            (t.name.clone(), view)
        })
        .collect();
    let metadata: Option<HashMap<String, String>> = metadata.map(|m| m.iter().cloned().collect());
    safetensors::tensor::serialize(views, metadata).expect("reference serialize")
}

/// The JSON header of a file (padding included), as text.
pub fn header(file: &[u8]) -> &str {
    let n = u64::from_le_bytes(file[..8].try_into().unwrap());
    std::str::from_utf8(&file[8..8 + usize::try_from(n).unwrap()]).unwrap()
}

/// A cheap deterministic byte generator (splitmix64).
pub fn bytes_from_seed(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out.truncate(len);
    out
}

/// Bytes that `shape` × `dtype` need (test-side arithmetic, small shapes only).
pub fn byte_len(dtype: Dtype, shape: &[u64]) -> usize {
    let elements: u64 = shape.iter().product();
    usize::try_from(elements * u64::from(dtype.bits()) / 8).unwrap()
}

/// The names of the files in `dir`, sorted.
pub fn dir_entries(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
