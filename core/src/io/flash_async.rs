//! Reading a file from storage that is not memory-mapped, without blocking,
//! through [`embedded_storage_async::nor_flash::ReadNorFlash`] (feature
//! `embedded-storage-async`): for async firmware (embassy and the like) that
//! reads external QSPI/SPI flash while other tasks run.
//!
//! An [`AsyncFlashReader`] is [`FlashReader`](crate::flash::FlashReader)
//! with `async` reads: the same buffers the caller owns, the same verdicts on
//! any file, the same errors. A driver failure is [`ErrorKind::Storage`], and
//! the driver's own error is kept for [`AsyncFlashReader::storage_error`].
//! Nothing is allocated, and the futures hold only the caller's buffers and a
//! 32-byte bounce buffer for unaligned ends.
//!
//! ```
//! use embedded_storage_async::nor_flash::{ErrorType, NorFlashError, NorFlashErrorKind, ReadNorFlash};
//! use safetensors_nano::{flash_async::AsyncFlashReader, Parser, Table};
//!
//! /// A stand-in driver: a byte array read 4 bytes at a time; a real one
//! /// would start a QSPI transfer and await its completion.
//! struct Chip<'a>(&'a [u8]);
//! #[derive(Debug)]
//! struct ChipError;
//! impl NorFlashError for ChipError {
//!     fn kind(&self) -> NorFlashErrorKind { NorFlashErrorKind::Other }
//! }
//! impl ErrorType for Chip<'_> { type Error = ChipError; }
//! impl ReadNorFlash for Chip<'_> {
//!     const READ_SIZE: usize = 4;
//!     async fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), ChipError> {
//!         let start = offset as usize;
//!         let src = self.0.get(start..start + bytes.len()).ok_or(ChipError)?;
//!         bytes.copy_from_slice(src);
//!         Ok(())
//!     }
//!     fn capacity(&self) -> usize { self.0.len() }
//! }
//!
//! // A file with one F32 tensor, at address 16 of the chip.
//! let json = br#"{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}}"#;
//! let mut chip = vec![0xff; 16];
//! chip.extend_from_slice(&(json.len() as u64).to_le_bytes());
//! chip.extend_from_slice(json);
//! for v in [1.0f32, 2.0, 3.0] { chip.extend_from_slice(&v.to_le_bytes()); }
//! let file_len = (chip.len() - 16) as u32;
//! chip.resize(chip.len().next_multiple_of(4), 0xff);
//!
//! // Any executor runs it; embassy-futures' `block_on` here.
//! embassy_futures::block_on(async {
//!     let mut reader = AsyncFlashReader::new(Chip(&chip), 16, file_len);
//!     let mut header_buf = [0u8; 256];
//!     let mut table = Table::<4>::new();
//!     let header = reader
//!         .read_header(&Parser::new(), &mut header_buf, &mut table)
//!         .await
//!         .unwrap();
//!     let w = header.tensor("w").unwrap();
//!     let mut values = [0f32; 3];
//!     reader.read_into(&header, &w, &mut values).await.unwrap();
//!     assert_eq!(values, [1.0, 2.0, 3.0]);
//!     let mut second = [0u8; 4]; // bytes 4..8 of the tensor
//!     reader.read_at(&header, &w, 4, &mut second).await.unwrap();
//!     assert_eq!(f32::from_le_bytes(second), 2.0);
//! });
//! ```

use embedded_storage_async::nor_flash::ReadNorFlash;

use crate::error::{Error, ErrorKind};
use crate::file::{Header, Parser, Status};
use crate::table::Slot;
use crate::view::tensor::{Element, TensorInfo};

/// Largest `READ_SIZE` for which unaligned reads are supported.
const BOUNCE_LEN: usize = 32;

/// Reads a safetensors file stored at `base` in a NOR flash (or anything
/// else with a [`ReadNorFlash`] driver) without mapping it into memory, with `async` reads.
///
/// See the [module documentation](self) for a complete example.
#[cfg_attr(docsrs, doc(cfg(feature = "embedded-storage-async")))]
pub struct AsyncFlashReader<F: ReadNorFlash> {
    flash: F,
    base: u32,
    /// The file's length, when the caller knows it.
    len: Option<u32>,
    error: Option<F::Error>,
}

impl<F: ReadNorFlash> AsyncFlashReader<F> {
    /// A reader for the file of `len` bytes that starts at address `base`.
    /// The header is checked against this length exactly (docs/format.md R3
    /// header-fits, R13 exact-length).
    pub const fn new(flash: F, base: u32, len: u32) -> Self {
        AsyncFlashReader {
            flash,
            base,
            len: Some(len),
            error: None,
        }
    }

    /// A reader for a file that starts at address `base` and whose length
    /// is not known: the header decides it, and the file must fit in the
    /// storage's capacity. Bytes after the file are ignored.
    pub const fn at(flash: F, base: u32) -> Self {
        AsyncFlashReader {
            flash,
            base,
            len: None,
            error: None,
        }
    }

    /// Reads the header into `buf` and parses it into `storage`.
    ///
    /// `buf` must hold `8 + N` bytes (N = the header length); a parser
    /// whose [`header_limit`](Parser::header_limit) is `buf.len() - 8`
    /// turns a header that does not fit into [`ErrorKind::HeaderTooLarge`].
    /// With a known file length the verdict on any file is the one
    /// [`Parser::parse`] gives on the same bytes; otherwise the file the
    /// header describes must fit in the storage.
    ///
    /// # Errors
    /// Every error [`Parser::parse`] gives; [`ErrorKind::BufferTooSmall`]
    /// when `buf` cannot hold the header; [`ErrorKind::Storage`] when the
    /// driver fails (its error is then in [`storage_error`](Self::storage_error)).
    pub async fn read_header<'b, S>(
        &mut self,
        parser: &Parser,
        buf: &'b mut [u8],
        storage: S,
    ) -> Result<Header<'b, S>, Error>
    where
        S: AsRef<[Slot]> + AsMut<[Slot]>,
    {
        // The bytes the file may occupy: its length, or up to the end of the storage.
        let room = match self.len {
            Some(len) => u64::from(len),
            None => (self.flash.capacity() as u64).saturating_sub(u64::from(self.base)),
        };
        if room < 8 {
            return Err(Error::new(ErrorKind::HeaderTooSmall { len: room }));
        }
        let available = buf.len() as u64;
        let too_small = |needed: u64| Error::new(ErrorKind::BufferTooSmall { needed, available });
        let (prefix, rest) = buf.split_first_chunk_mut::<8>().ok_or(too_small(8))?;
        self.read_file(0, prefix).await?;
        let needed = parser.bytes_needed(prefix)?;
        if needed > room {
            return Err(Error::new(ErrorKind::InvalidHeaderLength {
                header_len: needed.saturating_sub(8),
                file_len: room,
            }));
        }
        let json_len = usize::try_from(needed.saturating_sub(8)).map_err(|_| too_small(needed))?;
        let json = rest.get_mut(..json_len).ok_or(too_small(needed))?;
        self.read_file(8, json).await?;
        let buf: &'b [u8] = buf;
        let file = buf
            .get(..json_len.saturating_add(8))
            .ok_or(too_small(needed))?;
        let header = match parser.parse_header(file, storage)? {
            Status::Complete(header) => header,
            // Not reachable: `file` holds the `needed` bytes.
            Status::Partial { needed } => return Err(too_small(needed)),
        };
        match self.len {
            Some(len) => header.check_file_len(u64::from(len))?,
            None if header.file_len() > room => {
                return Err(Error::new(ErrorKind::MetadataIncompleteBuffer {
                    expected: header.data_len(),
                    found: room.saturating_sub(header.data_start()),
                }))
            }
            None => {}
        }
        Ok(header)
    }

    /// Reads all of `tensor`'s bytes into `out`, which must be exactly
    /// [`byte_len`](TensorInfo::byte_len) long. `tensor` must come from
    /// `header`, the header this reader read.
    ///
    /// # Errors
    /// [`ErrorKind::ByteLengthMismatch`] for another length;
    /// [`ErrorKind::Storage`] when the driver fails.
    pub async fn read<S: AsRef<[Slot]>>(
        &mut self,
        header: &Header<'_, S>,
        tensor: &TensorInfo<'_>,
        out: &mut [u8],
    ) -> Result<(), Error> {
        let len = tensor.byte_len();
        if out.len() as u64 != len {
            return Err(Error::new(ErrorKind::ByteLengthMismatch {
                expected: len,
                found: out.len() as u64,
            })
            .with_tensor(tensor.as_ref()));
        }
        self.read_at(header, tensor, 0, out).await
    }

    /// Reads `out.len()` bytes of `tensor`'s data, starting `offset` bytes
    /// into it. `tensor` must come from `header`, the header this reader read.
    ///
    /// # Errors
    /// [`ErrorKind::ReadOutOfRange`] when the bytes run past the tensor's
    /// end; [`ErrorKind::Storage`] when the driver fails.
    pub async fn read_at<S: AsRef<[Slot]>>(
        &mut self,
        header: &Header<'_, S>,
        tensor: &TensorInfo<'_>,
        offset: u64,
        out: &mut [u8],
    ) -> Result<(), Error> {
        let (begin, end) = tensor.data_offsets();
        let len = end.saturating_sub(begin);
        let stop = offset.checked_add(out.len() as u64);
        if stop.is_none_or(|stop| stop > len) {
            return Err(Error::new(ErrorKind::ReadOutOfRange {
                end: stop.unwrap_or(u64::MAX),
                len,
            })
            .with_tensor(tensor.as_ref()));
        }
        let at = header
            .data_start()
            .checked_add(begin)
            .and_then(|a| a.checked_add(offset));
        let Some(at) = at else {
            return Err(self
                .storage_fail(u64::MAX, out.len())
                .with_tensor(tensor.as_ref()));
        };
        self.read_file(at, out)
            .await
            .map_err(|e| e.with_tensor(tensor.as_ref()))
    }

    /// Reads all of `tensor`'s elements into `out` as `T`, which must be
    /// the tensor's dtype; `out` must hold exactly
    /// [`element_count`](TensorInfo::element_count) elements.
    ///
    /// # Errors
    /// [`ErrorKind::DtypeMismatch`], [`ErrorKind::LengthMismatch`] (in
    /// elements), [`ErrorKind::Storage`].
    pub async fn read_into<T: Element, S: AsRef<[Slot]>>(
        &mut self,
        header: &Header<'_, S>,
        tensor: &TensorInfo<'_>,
        out: &mut [T],
    ) -> Result<(), Error> {
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
        self.read_at(header, tensor, 0, bytes).await?;
        if cfg!(target_endian = "big") {
            for element in bytes.chunks_exact_mut(core::mem::size_of::<T>()) {
                element.reverse();
            }
        }
        Ok(())
    }

    /// The driver's error from the last failed read, if a read failed.
    pub fn storage_error(&self) -> Option<&F::Error> {
        self.error.as_ref()
    }

    /// Gives the driver back.
    pub fn into_inner(self) -> F {
        self.flash
    }

    /// Reads `out.len()` bytes at byte `at` of the file.
    async fn read_file(&mut self, at: u64, out: &mut [u8]) -> Result<(), Error> {
        match u64::from(self.base).checked_add(at) {
            Some(address) => self.read_storage(address, out).await,
            None => Err(self.storage_fail(u64::MAX, out.len())),
        }
    }

    /// Reads `out.len()` bytes at storage `address`, whatever its alignment.
    async fn read_storage(&mut self, address: u64, out: &mut [u8]) -> Result<(), Error> {
        let unit = F::READ_SIZE.max(1);
        let fail = self.storage_fail(address, out.len());
        let mut bounce = [0u8; BOUNCE_LEN];
        let mut address = address;
        let mut out = out;
        while !out.is_empty() {
            let skip = address.checked_rem(unit as u64).unwrap_or(0);
            // `skip < unit`, a usize.
            let skip = usize::try_from(skip).map_err(|_| fail)?;
            let whole = out
                .len()
                .saturating_sub(out.len().checked_rem(unit).unwrap_or(0));
            let (done, rest) = if skip == 0 && whole > 0 {
                // Aligned: straight into the caller's buffer.
                let (head, rest) = out.split_at_mut(whole);
                self.read_units(address, head, fail).await?;
                (whole, rest)
            } else {
                // An unaligned start or a short end: one unit through the bounce buffer.
                let unit_buf = bounce.get_mut(..unit).ok_or(fail)?;
                self.read_units(address.saturating_sub(skip as u64), unit_buf, fail)
                    .await?;
                let take = unit.saturating_sub(skip).min(out.len());
                let (head, rest) = out.split_at_mut(take);
                head.copy_from_slice(unit_buf.get(skip..skip.saturating_add(take)).ok_or(fail)?);
                (take, rest)
            };
            address = address.checked_add(done as u64).ok_or(fail)?;
            out = rest;
        }
        Ok(())
    }

    /// One driver call, for an address and length that are whole units.
    async fn read_units(&mut self, address: u64, out: &mut [u8], fail: Error) -> Result<(), Error> {
        let address = u32::try_from(address).map_err(|_| fail)?;
        self.flash.read(address, out).await.map_err(|e| {
            self.error = Some(e);
            fail
        })
    }

    fn storage_fail(&self, address: u64, len: usize) -> Error {
        Error::new(ErrorKind::Storage {
            address,
            len: len as u64,
        })
    }
}

impl<F: ReadNorFlash> core::fmt::Debug for AsyncFlashReader<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AsyncFlashReader")
            .field("base", &self.base)
            .field("len", &self.len)
            .field("failed", &self.error.is_some())
            .finish()
    }
}
