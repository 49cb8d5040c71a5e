//! Files built from header text, and our parser's verdict on any bytes.

use std::vec;
use std::vec::Vec;

use safetensors_nano::{Error, SafeTensors, Slot};

/// A file from a header text and a data length (data bytes are 0, 1, 2, …).
pub fn file(header: &str, data_len: usize) -> Vec<u8> {
    let mut f = (header.len() as u64).to_le_bytes().to_vec();
    f.extend_from_slice(header.as_bytes());
    f.extend((0..data_len).map(|i| i as u8));
    f
}

/// A file whose header is `prefix + middle + suffix`, with a data buffer of
/// `data_len` zero bytes.
pub fn file_with(prefix: &[u8], middle: &[u8], suffix: &[u8], data_len: usize) -> Vec<u8> {
    let n = prefix.len() + middle.len() + suffix.len();
    let mut f = (n as u64).to_le_bytes().to_vec();
    f.extend_from_slice(prefix);
    f.extend_from_slice(middle);
    f.extend_from_slice(suffix);
    f.resize(f.len() + data_len, 0);
    f
}

/// The JSON header bytes, if the length prefix fits in the input.
pub fn json_of(bytes: &[u8]) -> Option<&[u8]> {
    let n = u64::from_le_bytes(*bytes.first_chunk::<8>()?);
    let end = usize::try_from(n).ok()?.checked_add(8)?;
    bytes.get(8..end)
}

/// Slots enough for any header in `bytes`: every tensor entry or metadata
/// pair takes at least 4 header bytes (`"":""` plus a separator).
pub fn slots_for(bytes: &[u8]) -> Vec<Slot> {
    vec![Slot::EMPTY; 1 + bytes.len() / 4]
}

/// Our parse of `bytes`, with a table big enough for anything.
///
/// # Errors
/// Our parser's error.
pub fn parse(bytes: &[u8]) -> Result<SafeTensors<'_, Vec<Slot>>, Error> {
    SafeTensors::parse(bytes, slots_for(bytes))
}

/// Our verdict on `bytes`: the number of tensors, or the error.
///
/// # Errors
/// Our parser's error.
pub fn verdict(bytes: &[u8]) -> Result<usize, Error> {
    parse(bytes).map(|st| st.len())
}
