//! Owned tensors, our writer into a buffer, and deterministic test data.

use std::borrow::ToOwned;
use std::string::{String, ToString};
use std::vec;
use std::vec::Vec;

use safetensors_nano::write::{Plan, Tensor};
use safetensors_nano::{Dtype, Error};

/// An owned tensor for tests.
#[derive(Clone, Debug)]
pub struct Owned {
    /// Its name.
    pub name: String,
    /// Its dtype.
    pub dtype: Dtype,
    /// Its dimensions.
    pub shape: Vec<u64>,
    /// Its bytes.
    pub data: Vec<u8>,
}

impl Owned {
    /// A tensor with these fields.
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

    /// The writer's view of it.
    pub fn view(&self) -> Tensor<'_> {
        Tensor::new(&self.name, self.dtype, &self.shape, &self.data)
    }
}

/// Our writer: plan, then write into an exactly sized buffer (no features needed).
///
/// # Errors
/// The writer's error.
pub fn write(tensors: &[Owned], metadata: Option<&[(String, String)]>) -> Result<Vec<u8>, Error> {
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
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    names
}
