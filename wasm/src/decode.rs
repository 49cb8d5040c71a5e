//! Decoding one bounded chunk of float elements through the core.

use safetensors_nano::decode::{decode_f32_into, elements_in};
use safetensors_nano::Dtype;

use safetensors_nano::{Error, ErrorKind};

use crate::error::Failure;

/// Decodes the first `len` bytes of the room's input (its first
/// `input_words`, as bytes: whole elements of the dtype with index
/// `dtype`) into the start of the rest of the room, returning how many
/// values it wrote.
pub fn decode(dtype: u8, room: &mut [f64], input_words: usize, len: u32) -> Result<usize, Failure> {
    let Some(&dtype) = Dtype::ALL.get(usize::from(dtype)) else {
        return Err(Error::new(ErrorKind::UnknownDtype).into());
    };
    let (input, floats) = room.split_at_mut_checked(input_words).unwrap_or_default();
    // (Words as bytes and as `f32`s: always whole.)
    let input: &[u8] = bytemuck::try_cast_slice(input).unwrap_or_default();
    let floats: &mut [f32] = bytemuck::try_cast_slice_mut(floats).unwrap_or_default();
    let room = |expected: u64, found: usize| {
        Error::new(ErrorKind::LengthMismatch {
            expected,
            found: found as u64,
        })
    };
    let Some(input) = input.get(..len as usize) else {
        return Err(room(u64::from(len), input.len()).into());
    };
    // A length that is not whole elements: let the core name the error.
    let n = elements_in(dtype, input.len() as u64).unwrap_or(0);
    let Some(out) = usize::try_from(n).ok().and_then(|n| floats.get_mut(..n)) else {
        return Err(room(n, floats.len()).into());
    };
    decode_f32_into(dtype, input, out)?;
    Ok(out.len())
}
