//! Writing safetensors files, without allocating, byte-identical to the
//! reference writer.
//!
//! Two passes, as in `der`: first a [`Plan`] — made from the caller's list
//! of tensors and metadata, which it sorts in place — fixes the order, the
//! data offsets and the exact header length, and runs every check that can
//! fail. Then a [`Writer`] emits the 8-byte length, the header and the
//! tensor data into a [`Sink`]: a caller's buffer ([`SliceSink`]), a
//! `Vec<u8>` (feature `alloc`), any `std::io::Write` ([`IoSink`], feature
//! `std`), any `embedded_io::Write` ([`EmbeddedIoSink`], feature
//! `embedded-io`), or your own. Tensor data may arrive in chunks, in the
//! planned order; the writer checks every tensor gets exactly its bytes.
//!
//! ```
//! use safetensors_nano::{Dtype, write::{Plan, Tensor}};
//! let y = [1.0f32, -2.0];
//! let mut tensors = [
//!     Tensor::new("x", Dtype::U8, &[3], &[1, 2, 3]),
//!     Tensor::new("y", Dtype::F32, &[2], bytemuck::cast_slice(&y)),
//! ];
//! let mut metadata = [("format", "pt")];
//! let plan = Plan::with_metadata(&mut tensors, &mut metadata)?;
//! let mut buf = [0u8; 256];
//! let file = plan.write_to_slice(&mut buf)?;
//! assert_eq!(file.len(), 163);
//! assert_eq!(&file[..8], &144u64.to_le_bytes());
//! assert_eq!(
//!     &file[8..152],
//!     br#"{"__metadata__":{"format":"pt"},"y":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"x":{"dtype":"U8","shape":[3],"data_offsets":[8,11]}}      "#
//! );
//! assert_eq!(&file[152..], &[0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 1, 2, 3]);
//! # Ok::<(), safetensors_nano::Error>(())
//! ```
//!
//! # The layout written
//! - Tensors sorted by dtype descending in [`Dtype`](crate::Dtype) order
//!   (`U64` first, `BOOL` last), then by name bytewise; offsets from 0 with
//!   no gaps.
//! - Compact JSON: `__metadata__` first when given, then
//!   `"name":{"dtype":…,"shape":[…],"data_offsets":[b,e]}`; strings escaped
//!   as serde_json does.
//! - Header padded with spaces to a multiple of 8, so the data starts
//!   8-aligned and every tensor is aligned to its element size.
//!
//! This is byte for byte what the reference `serialize` writes, with these
//! differences: metadata keys are written sorted bytewise (the reference
//! writes hash-map order, which varies between runs when there are two or
//! more keys); no tensors with empty metadata give a valid
//! `{"__metadata__":{}}` (the reference writes invalid JSON); a repeated
//! tensor name or one named `__metadata__` is an error (the reference
//! panics, or writes a file it cannot read back).
//!
//! # Converting dtypes while streaming
//! [`convert_into`] turns chunks of any float dtype into `F64`, `F32`, `F16`
//! or `BF16`, correctly rounded (nearest, ties to even, one rounding even
//! from `F64`). The command-line tool (`cli/`, `safetensors-nano edit IN OUT
//! [--keep RE] [--drop RE] [--rename OLD=NEW] [--convert F32:BF16]`) puts the
//! reader, the writer and the conversion together, holding no more than the
//! header and fixed buffers.
//!
//! # Errors, with nothing written
//! [`Plan::new`] refuses a repeated name, a tensor named `__metadata__`, a
//! byte length that is not shape × dtype (sub-byte dtypes included), a
//! header over 100,000,000 bytes and any arithmetic overflow, before a byte
//! is written; a [`SliceSink`] too small for the file is refused at
//! [`Writer::begin`]. With `std`, [`write_file`] and [`Plan::create_file`]
//! write to a temporary file renamed into place only when complete.

mod convert;
mod json;
pub(crate) mod plan;
pub(crate) mod sink;
pub(crate) mod spec;
pub(crate) mod stream;

pub use self::convert::{convert_into, CONVERT_CHUNK};
pub use self::plan::{Iter, Placed, Plan};
pub use self::sink::{Sink, SliceSink};
pub use self::spec::{AsSpec, AsTensor, Existing, Tensor, TensorSpec};
pub use self::stream::Writer;
#[cfg(feature = "embedded-io")]
#[cfg_attr(docsrs, doc(cfg(feature = "embedded-io")))]
pub use crate::io::embedded_io::EmbeddedIoSink;
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use crate::io::std_write::{replace_file, FileWriter, IoSink};

use crate::error::Error;

fn plan<'p, T: AsSpec>(
    tensors: &'p mut [T],
    metadata: Option<&'p mut [(&str, &str)]>,
) -> Result<Plan<'p, T>, Error> {
    match metadata {
        Some(metadata) => Plan::with_metadata(tensors, metadata),
        None => Plan::new(tensors),
    }
}

/// Plans and writes a whole file into `buf`; returns the written prefix.
/// `metadata: None` writes no `__metadata__` entry, `Some` writes one (even
/// empty). Both slices are sorted in place.
///
/// # Errors
/// As [`Plan::new`] and [`Plan::with_metadata`];
/// [`BufferTooSmall`](crate::ErrorKind::BufferTooSmall) with the size needed when
/// `buf` is too short. Nothing is written on error.
///
/// ```
/// use safetensors_nano::{Dtype, ErrorKind, write::{serialize_to_slice, Tensor}};
/// let mut tensors = [Tensor::new("t", Dtype::I16, &[2], &[1, 0, 2, 0])];
/// let mut buf = [0u8; 72];
/// let file = serialize_to_slice(&mut tensors, None, &mut buf)?;
/// assert_eq!(file.len(), 8 + 56 + 4);
///
/// let mut small = [0u8; 8];
/// let err = serialize_to_slice(&mut tensors, None, &mut small).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::BufferTooSmall { needed: 68, available: 8 });
/// # Ok::<(), safetensors_nano::Error>(())
/// ```
pub fn serialize_to_slice<'b, T: AsTensor>(
    tensors: &mut [T],
    metadata: Option<&mut [(&str, &str)]>,
    buf: &'b mut [u8],
) -> Result<&'b mut [u8], Error> {
    plan(tensors, metadata)?.write_to_slice(buf)
}

/// Plans and writes a whole file into a new `Vec` (feature `alloc`), like
/// the reference's `serialize`. `metadata: None` writes no `__metadata__`
/// entry, `Some` writes one (even empty). Both slices are sorted in place.
///
/// # Errors
/// As [`Plan::new`] and [`Plan::with_metadata`].
///
/// ```
/// use safetensors_nano::{Dtype, write::{serialize_to_vec, Tensor}};
/// let mut tensors = [Tensor::new("t", Dtype::U8, &[1], &[9])];
/// let file = serialize_to_vec(&mut tensors, Some(&mut [("k", "v")]))?;
/// assert!(file.windows(7).any(|w| w == br#""k":"v""#));
/// # Ok::<(), safetensors_nano::Error>(())
/// ```
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub fn serialize_to_vec<T: AsTensor>(
    tensors: &mut [T],
    metadata: Option<&mut [(&str, &str)]>,
) -> Result<alloc::vec::Vec<u8>, Error> {
    plan(tensors, metadata)?.to_vec()
}

/// Plans and writes a whole file at `path` (feature `std`), through a
/// temporary file in the same folder renamed into place when complete: the
/// destination gets the whole file or is left as it was.
///
/// # Errors
/// Our [`Error`] (as `InvalidInput`, inside the `io::Error`) before any
/// file is created; the `io::Error`s of writing, syncing and renaming.
///
/// ```
/// use safetensors_nano::{Dtype, Error, ErrorKind, write::{write_file, Tensor}};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("model.safetensors");
/// let mut tensors = [Tensor::new("w", Dtype::U8, &[2], &[1, 2])];
/// write_file(&path, &mut tensors, None)?;
/// assert_eq!(std::fs::read(&path)?.len(), 8 + 56 + 2);
///
/// let mut dup = [Tensor::new("w", Dtype::U8, &[0], &[]), Tensor::new("w", Dtype::I8, &[0], &[])];
/// let err = write_file(dir.path().join("dup.safetensors"), &mut dup, None).unwrap_err();
/// let ours = err.get_ref().and_then(|e| e.downcast_ref::<Error>()).unwrap();
/// assert_eq!(ours.kind(), ErrorKind::DuplicateTensorName);
/// assert!(!dir.path().join("dup.safetensors").exists());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub fn write_file<T: AsTensor>(
    path: impl AsRef<std::path::Path>,
    tensors: &mut [T],
    metadata: Option<&mut [(&str, &str)]>,
) -> std::io::Result<()> {
    plan(tensors, metadata)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?
        .write_file(path)
}
