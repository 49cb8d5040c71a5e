//! What the flash readers do apart from calling their driver, shared by the
//! blocking [`FlashReader`](crate::flash::FlashReader) and the async
//! `AsyncFlashReader`: where the file lies, the driver reads that fetch any
//! range of it whatever the driver's `READ_SIZE`, the header's checks and
//! parse, the checks on a tensor read, and the byte-order step after it.
//!
//! Nothing here touches a driver (sans-I/O): each reader is a loop that asks
//! [`Reads::next_read`] for the next address and buffer and calls its driver
//! on them, blocking or with `.await`. So both readers give the same verdicts,
//! bytes and errors by construction, and this logic is compiled once, not once
//! per driver type.

use core::fmt;

use crate::error::{Error, ErrorKind};
use crate::file::{Header, Parser, Status};
use crate::table::Slot;
use crate::view::tensor::{Element, TensorInfo};

/// Largest `READ_SIZE` for which unaligned reads are supported.
const BOUNCE_LEN: usize = 32;

/// Bytes of the header's length prefix (docs/format.md R1).
const PREFIX_LEN: usize = 8;

/// What a flash reader holds: its driver, where the file lies, and the
/// driver's error from the last failed read.
pub(crate) struct Held<F, E> {
    pub(crate) flash: F,
    pub(crate) region: Region,
    pub(crate) error: Option<E>,
}

impl<F, E> Held<F, E> {
    /// A reader's state for the file at address `base`, of `len` bytes when known.
    pub(crate) const fn new(flash: F, base: u32, len: Option<u32>) -> Self {
        Held {
            flash,
            region: Region { base, len },
            error: None,
        }
    }

    /// The readers' `Debug`: where the file is and whether a read failed,
    /// never its bytes.
    pub(crate) fn debug(&self, f: &mut fmt::Formatter<'_>, reader: &str) -> fmt::Result {
        f.debug_struct(reader)
            .field("base", &self.region.base)
            .field("len", &self.region.len)
            .field("failed", &self.error.is_some())
            .finish()
    }
}

/// Where a file lies in the storage.
#[derive(Clone, Copy)]
pub(crate) struct Region {
    base: u32,
    /// The file's length, when the caller knows it.
    len: Option<u32>,
}

impl Region {
    /// The driver reads for `out.len()` bytes at byte `at` of the file.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] (address `u64::MAX`) when the address overflows.
    pub(crate) fn reads(
        self,
        at: u64,
        out: &mut [u8],
        read_size: usize,
    ) -> Result<Reads<'_>, Error> {
        let Some(address) = u64::from(self.base).checked_add(at) else {
            return Err(storage_error(u64::MAX, out.len()));
        };
        Ok(Reads {
            start: address,
            len: out.len(),
            address,
            unit: read_size.max(1),
            out,
            bounce: [0; BOUNCE_LEN],
            copy: None,
        })
    }
}

/// The driver reads that fetch bytes at a storage address of any alignment:
/// an unaligned head through one unit of bounce buffer, the aligned middle
/// straight into the caller's buffer, a short tail through the bounce buffer.
pub(crate) struct Reads<'o> {
    /// What is still to be read.
    out: &'o mut [u8],
    /// The storage address of `out`'s first byte.
    address: u64,
    /// The driver's `READ_SIZE`, at least 1.
    unit: usize,
    bounce: [u8; BOUNCE_LEN],
    /// After a read into `bounce`: where the wanted bytes start in it, and how many.
    copy: Option<(usize, usize)>,
    /// The whole read's address and length, for its error.
    start: u64,
    len: usize,
}

impl<'o> Reads<'o> {
    /// The next driver read, as the address and the buffer to read into
    /// (whole units of `READ_SIZE`), or `None` when all bytes are in.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] with the whole read's address and length when
    /// the address does not fit in `u32`, or the read needs a bounce and
    /// `READ_SIZE` is above 32 bytes.
    pub(crate) fn next_read(&mut self) -> Result<Option<(u32, &mut [u8])>, Error> {
        if let Some((skip, take)) = self.copy.take() {
            let wanted = self
                .bounce
                .get(skip..skip.saturating_add(take))
                .ok_or_else(|| self.failed())?;
            let out = core::mem::take(&mut self.out);
            let (head, rest) = out
                .split_at_mut_checked(take)
                .ok_or_else(|| self.failed())?;
            head.copy_from_slice(wanted);
            self.advance(rest, take);
        }
        if self.out.is_empty() {
            return Ok(None);
        }
        // `skip < unit`, a usize.
        let skip = usize::try_from(self.address.checked_rem(self.unit as u64).unwrap_or(0))
            .map_err(|_| self.failed())?;
        let whole = self
            .out
            .len()
            .saturating_sub(self.out.len().checked_rem(self.unit).unwrap_or(0));
        if skip == 0 && whole > 0 {
            let address = u32::try_from(self.address).map_err(|_| self.failed())?;
            let out = core::mem::take(&mut self.out);
            let (head, rest) = out
                .split_at_mut_checked(whole)
                .ok_or_else(|| self.failed())?;
            self.advance(rest, whole);
            return Ok(Some((address, head)));
        }
        if self.unit > BOUNCE_LEN {
            return Err(self.failed());
        }
        let address = self.address.saturating_sub(skip as u64);
        let address = u32::try_from(address).map_err(|_| self.failed())?;
        self.copy = Some((skip, self.unit.saturating_sub(skip).min(self.out.len())));
        let unit_buf = self
            .bounce
            .get_mut(..self.unit)
            .ok_or(storage_error(self.start, self.len))?;
        Ok(Some((address, unit_buf)))
    }

    /// The error to return when the driver fails.
    pub(crate) fn failed(&self) -> Error {
        storage_error(self.start, self.len)
    }

    fn advance(&mut self, rest: &'o mut [u8], done: usize) {
        self.out = rest;
        // Cannot saturate: the address fits in u32 here and `done` in isize.
        self.address = self.address.saturating_add(done as u64);
    }
}

/// The header read in three steps: the length prefix, the JSON it
/// announces, then the parse and the checks against the file's length.
pub(crate) struct HeaderRead {
    /// The bytes the file may occupy: its length, or up to the end of the storage.
    room: u64,
    /// The file's length, when the caller knows it.
    len: Option<u32>,
    /// The caller's buffer's length.
    available: u64,
    /// The prefix and the JSON, once the prefix is in.
    needed: u64,
}

impl HeaderRead {
    /// Starts reading the header of the file in `region` into `buf`;
    /// `capacity` gives the storage's size, asked only when the file's
    /// length is not known.
    ///
    /// # Errors
    /// [`ErrorKind::HeaderTooSmall`] when the file has no room for the prefix.
    pub(crate) fn new(
        region: Region,
        capacity: impl FnOnce() -> usize,
        buf: &[u8],
    ) -> Result<Self, Error> {
        let room = match region.len {
            Some(len) => u64::from(len),
            None => (capacity() as u64).saturating_sub(u64::from(region.base)),
        };
        if room < PREFIX_LEN as u64 {
            return Err(Error::new(ErrorKind::HeaderTooSmall { len: room }));
        }
        Ok(HeaderRead {
            room,
            len: region.len,
            available: buf.len() as u64,
            needed: PREFIX_LEN as u64,
        })
    }

    /// Step 1: the file byte to read the length prefix from, and where in `buf`.
    ///
    /// # Errors
    /// [`ErrorKind::BufferTooSmall`] when `buf` cannot hold the prefix.
    pub(crate) fn prefix<'a>(&self, buf: &'a mut [u8]) -> Result<(u64, &'a mut [u8]), Error> {
        let prefix = buf.get_mut(..PREFIX_LEN).ok_or(self.too_small())?;
        Ok((0, prefix))
    }

    /// Step 2, once the prefix is in `buf`: the file byte to read the JSON
    /// from, and where in `buf`.
    ///
    /// # Errors
    /// The prefix's errors ([`Parser::bytes_needed`]);
    /// [`ErrorKind::InvalidHeaderLength`] when the header runs past the
    /// file; [`ErrorKind::BufferTooSmall`] when `buf` cannot hold it.
    pub(crate) fn json<'a>(
        &mut self,
        parser: &Parser,
        buf: &'a mut [u8],
    ) -> Result<(u64, &'a mut [u8]), Error> {
        let (prefix, rest) = buf
            .split_at_mut_checked(PREFIX_LEN)
            .ok_or(self.too_small())?;
        self.needed = parser.bytes_needed(prefix)?;
        if self.needed > self.room {
            return Err(Error::new(ErrorKind::InvalidHeaderLength {
                header_len: self.json_len(),
                file_len: self.room,
            }));
        }
        let json_len = usize::try_from(self.json_len()).map_err(|_| self.too_small())?;
        let json = rest.get_mut(..json_len).ok_or(self.too_small())?;
        Ok((PREFIX_LEN as u64, json))
    }

    /// Step 3, once the JSON is in `buf`: the parse into `storage`, and the
    /// check of the data's length against the file's or the storage's.
    ///
    /// # Errors
    /// Every error [`Parser::parse`] gives; with an unknown file length,
    /// [`ErrorKind::MetadataIncompleteBuffer`] when the data runs past the storage.
    pub(crate) fn parse<'b, S>(
        &self,
        parser: &Parser,
        buf: &'b [u8],
        storage: S,
    ) -> Result<Header<'b, S>, Error>
    where
        S: AsRef<[Slot]> + AsMut<[Slot]>,
    {
        let file = usize::try_from(self.needed)
            .ok()
            .and_then(|needed| buf.get(..needed))
            .ok_or(self.too_small())?;
        let header = match parser.parse_header(file, storage)? {
            Status::Complete(header) => header,
            // Not reachable: `file` holds the `needed` bytes.
            Status::Partial { needed } => {
                return Err(Error::new(ErrorKind::BufferTooSmall {
                    needed,
                    available: self.available,
                }))
            }
        };
        match self.len {
            Some(len) => header.check_file_len(u64::from(len))?,
            None if header.file_len() > self.room => {
                return Err(Error::new(ErrorKind::MetadataIncompleteBuffer {
                    expected: header.data_len(),
                    found: self.room.saturating_sub(header.data_start()),
                }))
            }
            None => {}
        }
        Ok(header)
    }

    fn json_len(&self) -> u64 {
        self.needed.saturating_sub(PREFIX_LEN as u64)
    }

    fn too_small(&self) -> Error {
        Error::new(ErrorKind::BufferTooSmall {
            needed: self.needed,
            available: self.available,
        })
    }
}

/// Checks that `out_len` bytes are exactly `tensor`'s data.
///
/// # Errors
/// [`ErrorKind::ByteLengthMismatch`] for another length.
pub(crate) fn check_whole(tensor: &TensorInfo<'_>, out_len: usize) -> Result<(), Error> {
    let len = tensor.byte_len();
    if out_len as u64 != len {
        return Err(Error::new(ErrorKind::ByteLengthMismatch {
            expected: len,
            found: out_len as u64,
        })
        .with_tensor(tensor.as_ref()));
    }
    Ok(())
}

/// The file byte at `offset` bytes into `tensor`'s data, after checking
/// that `out_len` bytes from there stay inside the tensor; `data_start` is
/// the header's [`Header::data_start`].
///
/// # Errors
/// [`ErrorKind::ReadOutOfRange`] past the tensor's end;
/// [`ErrorKind::Storage`] (address `u64::MAX`) when the address overflows.
pub(crate) fn tensor_at(
    data_start: u64,
    tensor: &TensorInfo<'_>,
    offset: u64,
    out_len: usize,
) -> Result<u64, Error> {
    let (begin, end) = tensor.data_offsets();
    let len = end.saturating_sub(begin);
    let stop = offset.checked_add(out_len as u64);
    if stop.is_none_or(|stop| stop > len) {
        return Err(Error::new(ErrorKind::ReadOutOfRange {
            end: stop.unwrap_or(u64::MAX),
            len,
        })
        .with_tensor(tensor.as_ref()));
    }
    data_start
        .checked_add(begin)
        .and_then(|a| a.checked_add(offset))
        .ok_or_else(|| storage_error(u64::MAX, out_len).with_tensor(tensor.as_ref()))
}

/// `out` as the bytes to read `tensor`'s elements into, after checking
/// that `T` is the tensor's dtype and `out` holds all its elements.
///
/// # Errors
/// [`ErrorKind::DtypeMismatch`], [`ErrorKind::LengthMismatch`] (in elements).
pub(crate) fn element_bytes<'o, T: Element>(
    tensor: &TensorInfo<'_>,
    out: &'o mut [T],
) -> Result<&'o mut [u8], Error> {
    if T::DTYPE != tensor.dtype() {
        return Err(Error::new(ErrorKind::DtypeMismatch {
            found: tensor.dtype(),
            asked: T::DTYPE,
        })
        .with_tensor(tensor.as_ref()));
    }
    let out_len = out.len();
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(out);
    if bytes.len() as u64 != tensor.byte_len() {
        return Err(Error::new(ErrorKind::LengthMismatch {
            expected: tensor.element_count(),
            found: out_len as u64,
        })
        .with_tensor(tensor.as_ref()));
    }
    Ok(bytes)
}

/// After [`element_bytes`] got the file's bytes: puts each little-endian
/// element into the machine's byte order.
pub(crate) fn to_native<T: Element>(bytes: &mut [u8]) {
    if cfg!(target_endian = "big") {
        for element in bytes.chunks_exact_mut(core::mem::size_of::<T>()) {
            element.reverse();
        }
    }
}

/// A driver failure, or an address past what the storage can name.
fn storage_error(address: u64, len: usize) -> Error {
    Error::new(ErrorKind::Storage {
        address,
        len: len as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn region(base: u32, len: Option<u32>) -> Region {
        Region { base, len }
    }

    /// Reads `len` bytes at byte `at` of the file in `region` through the
    /// plan, from `storage` read in units of `unit` bytes; returns the bytes
    /// and the number of driver calls.
    fn read(
        storage: &[u8],
        region: Region,
        at: u64,
        len: usize,
        unit: usize,
    ) -> Result<(Vec<u8>, usize), Error> {
        let mut out = vec![0; len];
        let mut calls = 0;
        let mut reads = region.reads(at, &mut out, unit)?;
        while let Some((address, bytes)) = reads.next_read()? {
            calls += 1;
            assert_eq!(address as usize % unit, 0, "address {address}");
            assert_eq!(bytes.len() % unit, 0, "length {}", bytes.len());
            let start = address as usize;
            bytes.copy_from_slice(&storage[start..start + bytes.len()]);
        }
        Ok((out, calls))
    }

    #[test]
    fn reads_fetch_any_range_at_any_alignment_in_at_most_three_calls() {
        let storage: Vec<u8> = (0..=255).collect();
        for unit in [1, 2, 3, 4, 8, 32] {
            for base in 0..5 {
                for at in 0..12 {
                    for len in 0..40 {
                        let region = region(base, None);
                        let (got, calls) = read(&storage, region, at, len, unit).unwrap();
                        let start = base as usize + at as usize;
                        assert_eq!(got, &storage[start..start + len], "unit {unit} at {start}");
                        assert!(
                            calls <= 3,
                            "{calls} calls: unit {unit} at {start} len {len}"
                        );
                        if unit == 1 {
                            assert_eq!(calls, usize::from(len > 0));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_read_size_above_the_bounce_buffer_takes_aligned_reads_only() {
        let storage = vec![7; 256];
        let (got, calls) = read(&storage, region(64, None), 0, 128, 64).unwrap();
        assert_eq!((got, calls), (vec![7; 128], 1));
        let err = read(&storage, region(64, None), 1, 10, 64).unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::Storage {
                address: 65,
                len: 10
            }
        );
    }

    #[test]
    fn addresses_past_what_u32_names_are_storage_errors() {
        let err = read(&[], region(u32::MAX, None), 1, 4, 1).unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::Storage {
                address: 1 << 32,
                len: 4
            }
        );
        let err = read(&[], region(1, None), u64::MAX, 4, 1).unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::Storage {
                address: u64::MAX,
                len: 4
            }
        );
    }

    #[test]
    fn a_driver_failure_is_the_whole_read_s_storage_error() {
        let mut out = [0u8; 9];
        let mut reads = region(10, None).reads(3, &mut out, 4).unwrap();
        assert!(reads.next_read().unwrap().is_some());
        assert_eq!(
            reads.failed().kind(),
            ErrorKind::Storage {
                address: 13,
                len: 9
            }
        );
    }
}
