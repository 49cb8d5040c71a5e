//! With the `std` feature: reading headers and tensors from `std::io`
//! sources into buffers the caller owns and reuses (as httparse does).
//!
//! A file already in memory — a `Vec`, or a memory map made with any crate —
//! needs none of this: [`SafeTensors::parse`](crate::SafeTensors::parse)
//! takes the bytes as they are.

use std::fmt;
use std::io::{self, Read, Seek, SeekFrom};
use std::vec::Vec;

use crate::error::{Error, ErrorKind};
use crate::file::{Header, Parser, Status};
use crate::io::alloc::size_slots;
use crate::table::Slot;
use crate::view::slice::SliceIndex;
use crate::view::tensor::TensorInfo;

/// Why reading failed: a format error, or the reader's.
///
/// ```
/// use safetensors_nano::{ErrorKind, ReadError};
/// let mut buf = Vec::new();
/// let mut slots = Vec::new();
/// let err = safetensors_nano::read_header(&mut &b"\x02\x00"[..], &mut buf, &mut slots).unwrap_err();
/// assert!(matches!(err, ReadError::Format(e) if e.kind() == ErrorKind::HeaderTooSmall { len: 2 }));
/// ```
#[derive(Debug)]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub enum ReadError {
    /// The bytes break a rule of the format (or the output buffer is the
    /// wrong size).
    Format(Error),
    /// The reader failed.
    Io(io::Error),
}

impl ReadError {
    /// This error shown with its tensor's name, given the header bytes
    /// ([`Header::json`]): a format error as
    /// [`Error::display_in`] shows it, an I/O error as `Display` does.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use safetensors_nano::{read_header, read_tensor};
    /// let h = br#"{"m":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#;
    /// let mut file = (h.len() as u64).to_le_bytes().to_vec();
    /// file.extend_from_slice(h);
    /// file.extend_from_slice(&[1, 2]);
    /// let mut reader = Cursor::new(file);
    /// let (mut buf, mut slots) = (Vec::new(), Vec::new());
    /// let header = read_header(&mut reader, &mut buf, &mut slots)?;
    /// let m = header.tensor("m").unwrap();
    /// let err = read_tensor(&mut reader, header.data_start(), &m, &mut [0; 3]).unwrap_err();
    /// assert_eq!(
    ///     err.display_in(header.json()).to_string(),
    ///     r#"output buffer of 3 bytes where exactly 2 are needed (tensor "m")"#
    /// );
    /// # Ok::<(), safetensors_nano::ReadError>(())
    /// ```
    pub fn display_in<'e>(&'e self, header: &'e [u8]) -> impl fmt::Display + 'e {
        struct Shown<'e>(&'e ReadError, &'e [u8]);
        impl fmt::Display for Shown<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.0 {
                    ReadError::Format(e) => fmt::Display::fmt(&e.display_in(self.1), f),
                    other => fmt::Display::fmt(other, f),
                }
            }
        }
        Shown(self, header)
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Format(e) => fmt::Display::fmt(e, f),
            ReadError::Io(e) => write!(f, "I/O error: {e}"),
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::Format(e) => Some(e),
            ReadError::Io(e) => Some(e),
        }
    }
}

impl From<Error> for ReadError {
    fn from(e: Error) -> Self {
        ReadError::Format(e)
    }
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        ReadError::Io(e)
    }
}

/// Format errors become [`io::ErrorKind::InvalidData`], for functions that
/// return `io::Result`.
///
/// ```
/// use safetensors_nano::{Error, ErrorKind, ReadError};
/// let io: std::io::Error = ReadError::Format(Error::new(ErrorKind::InvalidUtf8)).into();
/// assert_eq!(io.kind(), std::io::ErrorKind::InvalidData);
/// ```
impl From<ReadError> for io::Error {
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::Format(e) => io::Error::new(io::ErrorKind::InvalidData, e),
            ReadError::Io(e) => e,
        }
    }
}

/// Reads until `buf` is full or the reader ends; returns the bytes read.
fn read_up_to<R: Read + ?Sized>(reader: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0usize;
    while let Some(rest) = buf.get_mut(filled..).filter(|r| !r.is_empty()) {
        match reader.read(rest) {
            Ok(0) => break,
            Ok(n) => filled = filled.saturating_add(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
impl Parser {
    /// Reads and parses the header at the reader's position (the start of a
    /// file): 8 bytes, then — after checking the limit, before allocating —
    /// the `N` header bytes into `buf`, whose capacity grows only as bytes
    /// arrive. `slots` grows to fit the header (as
    /// [`SafeTensors::parse_alloc`](crate::SafeTensors::parse_alloc) sizes
    /// its table). Both buffers are cleared or reused, never shrunk, so a
    /// loop over many files allocates only for the largest.
    ///
    /// The reader is left at the first data byte. Reading stops there: call
    /// [`Header::check_file_len`] when the file length is known.
    ///
    /// # Errors
    /// [`ReadError::Io`] from the reader. [`ReadError::Format`]:
    /// [`ErrorKind::HeaderTooSmall`] when the reader ends within 8 bytes,
    /// [`ErrorKind::HeaderTooLarge`] (nothing read past the 8 bytes),
    /// [`ErrorKind::InvalidHeaderLength`] when it ends within the header
    /// (`file_len` is the length read), else as [`Parser::parse_header`].
    ///
    /// ```
    /// use safetensors_nano::{ErrorKind, Parser, ReadError};
    /// let mut reader: &[u8] = b"\x00\x00\x01\x00\x00\x00\x00\x00{}";
    /// let (mut buf, mut slots) = (Vec::new(), Vec::new());
    /// let err = Parser::new().header_limit(1024).read_header(&mut reader, &mut buf, &mut slots).unwrap_err();
    /// assert!(matches!(err, ReadError::Format(e) if matches!(e.kind(), ErrorKind::HeaderTooLarge { .. })));
    /// assert_eq!(buf.capacity(), 0);
    /// ```
    pub fn read_header<'b, R: Read + ?Sized>(
        &self,
        reader: &mut R,
        buf: &'b mut Vec<u8>,
        slots: &'b mut Vec<Slot>,
    ) -> Result<Header<'b, &'b mut [Slot]>, ReadError> {
        buf.clear();
        let mut len = [0u8; 8];
        let got = read_up_to(reader, &mut len)?;
        if got < len.len() {
            return Err(Error::new(ErrorKind::HeaderTooSmall { len: got as u64 }).into());
        }
        let needed = self.bytes_needed(&len)?;
        let header_len = needed.saturating_sub(8);
        buf.extend_from_slice(&len);
        (&mut *reader).take(header_len).read_to_end(buf)?;
        let file_len = buf.len() as u64;
        if file_len < needed {
            return Err(Error::new(ErrorKind::InvalidHeaderLength {
                header_len,
                file_len,
            })
            .into());
        }
        size_slots(self, buf, slots)?;
        let buf: &'b [u8] = buf;
        match self.parse_header(buf, slots.as_mut_slice())? {
            Status::Complete(header) => Ok(header),
            // Unreachable: buf holds the 8 + N bytes the parser asked for.
            Status::Partial { .. } => Err(Error::new(ErrorKind::InvalidHeaderLength {
                header_len,
                file_len,
            })
            .into()),
        }
    }
}

/// [`Parser::read_header`] with the default settings: reads and parses the
/// header at the reader's position into caller-owned buffers.
///
/// A file already in memory needs no reader: parse the bytes — a `Vec`, or
/// a memory map made with any crate (`&mmap[..]`) — with
/// [`SafeTensors::parse`](crate::SafeTensors::parse); tensors then borrow
/// the mapped pages, nothing is copied.
///
/// # Errors
/// As [`Parser::read_header`].
///
/// ```
/// use std::io::Cursor;
/// use safetensors_nano::{read_header, read_tensor, SafeTensors, Table};
///
/// let h = br#"{"b":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#;
/// let mut file = (h.len() as u64).to_le_bytes().to_vec();
/// file.extend_from_slice(h);
/// file.extend_from_slice(&[7, 9]);
///
/// // From a reader (a `File`, a socket…), data read on demand:
/// let mut reader = Cursor::new(&file);
/// let (mut buf, mut slots) = (Vec::new(), Vec::new());
/// let header = read_header(&mut reader, &mut buf, &mut slots).unwrap();
/// let b = header.tensor("b").unwrap();
/// let mut out = vec![0u8; b.byte_len() as usize];
/// read_tensor(&mut reader, header.data_start(), &b, &mut out).unwrap();
/// assert_eq!(out, [7, 9]);
///
/// // From memory (here a Vec; a memory map works the same):
/// let mapped: &[u8] = &file[..];
/// let st = SafeTensors::parse(mapped, Table::<4>::new()).unwrap();
/// assert_eq!(st.tensor("b").unwrap().data(), &[7, 9]);
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub fn read_header<'b, R: Read + ?Sized>(
    reader: &mut R,
    buf: &'b mut Vec<u8>,
    slots: &'b mut Vec<Slot>,
) -> Result<Header<'b, &'b mut [Slot]>, ReadError> {
    Parser::new().read_header(reader, buf, slots)
}

/// Reads one tensor's bytes into `out`, which must be exactly
/// [`byte_len`](TensorInfo::byte_len) long. `data_start` is
/// [`Header::data_start`] (the file offset of the byte buffer).
///
/// # Errors
/// [`ReadError::Format`] with [`ErrorKind::ByteLengthMismatch`] (and the
/// tensor) for a wrong `out` length, [`ErrorKind::ValidationOverflow`] if
/// the file offset overflows; [`ReadError::Io`] from the reader, e.g.
/// `UnexpectedEof` for a truncated file.
///
/// ```
/// use std::io::Cursor;
/// use safetensors_nano::{read_header, read_tensor, ErrorKind, ReadError};
/// let h = br#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"I16","shape":[2],"data_offsets":[1,5]}}"#;
/// let mut file = (h.len() as u64).to_le_bytes().to_vec();
/// file.extend_from_slice(h);
/// file.extend_from_slice(&[1, 0xfe, 0xff, 3, 0]);
/// let mut reader = Cursor::new(file);
/// let (mut buf, mut slots) = (Vec::new(), Vec::new());
/// let header = read_header(&mut reader, &mut buf, &mut slots).unwrap();
/// let b = header.tensor("b").unwrap();
/// let mut out = [0u8; 4];
/// read_tensor(&mut reader, header.data_start(), &b, &mut out).unwrap();
/// assert_eq!([i16::from_le_bytes([out[0], out[1]]), i16::from_le_bytes([out[2], out[3]])], [-2, 3]);
/// let err = read_tensor(&mut reader, header.data_start(), &b, &mut [0u8; 3]).unwrap_err();
/// assert!(matches!(err, ReadError::Format(e) if e.kind() == ErrorKind::ByteLengthMismatch { expected: 4, found: 3 }));
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub fn read_tensor<R: Read + Seek + ?Sized>(
    reader: &mut R,
    data_start: u64,
    info: &TensorInfo<'_>,
    out: &mut [u8],
) -> Result<(), ReadError> {
    let fail = |kind| ReadError::Format(Error::new(kind).with_tensor(info.as_ref()));
    let expected = info.byte_len();
    if out.len() as u64 != expected {
        return Err(fail(ErrorKind::ByteLengthMismatch {
            expected,
            found: out.len() as u64,
        }));
    }
    let at = data_start
        .checked_add(info.data_offsets().0)
        .ok_or_else(|| fail(ErrorKind::ValidationOverflow))?;
    reader.seek(SeekFrom::Start(at))?;
    reader.read_exact(out)?;
    Ok(())
}

/// Reads a slice of one tensor into `out`, which must be exactly as long as
/// the slice ([`SliceRanges::byte_len`](crate::SliceRanges::byte_len)):
/// one seek and one read per contiguous run, nothing else read.
///
/// # Errors
/// The slice errors of [`TensorInfo::slice_ranges`] and the errors of
/// [`read_tensor`].
///
/// ```
/// use std::io::Cursor;
/// use safetensors_nano::{read_header, read_slice, SliceIndex};
/// let h = br#"{"m":{"dtype":"U8","shape":[3,3],"data_offsets":[0,9]}}"#;
/// let mut file = (h.len() as u64).to_le_bytes().to_vec();
/// file.extend_from_slice(h);
/// file.extend(1..=9u8);
/// let mut reader = Cursor::new(file);
/// let (mut buf, mut slots) = (Vec::new(), Vec::new());
/// let header = read_header(&mut reader, &mut buf, &mut slots).unwrap();
/// let m = header.tensor("m").unwrap();
/// let mut column = [0u8; 3];
/// read_slice(&mut reader, header.data_start(), &m, &[SliceIndex::Full, 2.into()], &mut column).unwrap();
/// assert_eq!(column, [3, 6, 9]);
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub fn read_slice<R: Read + Seek + ?Sized>(
    reader: &mut R,
    data_start: u64,
    info: &TensorInfo<'_>,
    indices: &[SliceIndex],
    out: &mut [u8],
) -> Result<(), ReadError> {
    let fail = |kind| ReadError::Format(Error::new(kind).with_tensor(info.as_ref()));
    let ranges = info.slice_ranges(indices)?;
    let expected = ranges.byte_len();
    if out.len() as u64 != expected {
        return Err(fail(ErrorKind::ByteLengthMismatch {
            expected,
            found: out.len() as u64,
        }));
    }
    let run = usize::try_from(ranges.run_len()).map_err(|_| fail(ErrorKind::TooLargeForTarget))?;
    if run == 0 {
        return Ok(());
    }
    for ((begin, _), chunk) in ranges.zip(out.chunks_exact_mut(run)) {
        let at = data_start
            .checked_add(begin)
            .ok_or_else(|| fail(ErrorKind::ValidationOverflow))?;
        reader.seek(SeekFrom::Start(at))?;
        reader.read_exact(chunk)?;
    }
    Ok(())
}
