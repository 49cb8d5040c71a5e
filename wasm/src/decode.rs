//! Decoding one bounded chunk of float elements through the core.

use alloc::vec::Vec;

use safetensors_nano::decode::{decode_f32_into, elements_in};
use safetensors_nano::Dtype;

use safetensors_nano::{Error, ErrorKind};

use crate::error::Failure;

/// Decodes `input` (whole elements of the dtype with index `dtype`) into
/// `floats` (reused scratch), returning the decoded values.
pub fn decode<'f>(dtype: u8, input: &[u8], floats: &'f mut Vec<f32>) -> Result<&'f [f32], Failure> {
    let Some(&dtype) = Dtype::ALL.get(usize::from(dtype)) else {
        return Err(Error::new(ErrorKind::UnknownDtype).into());
    };
    // A length that is not whole elements: let the core name the error.
    let n = elements_in(dtype, input.len() as u64)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(0);
    // Every element is overwritten: only new room is zeroed.
    floats.resize(n, 0.0);
    decode_f32_into(dtype, input, floats)?;
    Ok(floats)
}
