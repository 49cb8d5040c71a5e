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

use super::flash_plan::{self as plan, HeaderRead, Held};
use crate::error::Error;
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::file::{Header, Parser};
use crate::table::Slot;
use crate::view::tensor::{Element, TensorInfo};

/// Reads a safetensors file stored at `base` in a NOR flash (or anything
/// else with a [`ReadNorFlash`] driver) without mapping it into memory, with `async` reads.
///
/// See the [module documentation](self) for a complete example.
#[cfg_attr(docsrs, doc(cfg(feature = "embedded-storage-async")))]
pub struct AsyncFlashReader<F: ReadNorFlash>(Held<F, F::Error>);

impl<F: ReadNorFlash> AsyncFlashReader<F> {
    /// A reader for the file of `len` bytes that starts at address `base`.
    /// The header is checked against this length exactly (docs/format.md R3
    /// header-fits, R13 exact-length).
    pub const fn new(flash: F, base: u32, len: u32) -> Self {
        AsyncFlashReader(Held::new(flash, base, Some(len)))
    }

    /// A reader for a file that starts at address `base` and whose length
    /// is not known: the header decides it, and the file must fit in the
    /// storage's capacity. Bytes after the file are ignored.
    pub const fn at(flash: F, base: u32) -> Self {
        AsyncFlashReader(Held::new(flash, base, None))
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
        let mut steps = HeaderRead::new(self.0.region, || self.0.flash.capacity(), buf)?;
        let (at, prefix) = steps.prefix(buf)?;
        self.read_file(at, prefix).await?;
        let (at, json) = steps.json(parser, buf)?;
        self.read_file(at, json).await?;
        steps.parse(parser, buf, storage)
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
        plan::check_whole(tensor, out.len())?;
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
        let at = plan::tensor_at(header.data_start(), tensor, offset, out.len())?;
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
        let bytes = plan::element_bytes(tensor, out)?;
        self.read_at(header, tensor, 0, bytes).await?;
        plan::to_native::<T>(bytes);
        Ok(())
    }

    /// The driver's error from the last failed read, if a read failed.
    pub fn storage_error(&self) -> Option<&F::Error> {
        self.0.error.as_ref()
    }

    /// Gives the driver back.
    pub fn into_inner(self) -> F {
        self.0.flash
    }

    /// Reads `out.len()` bytes at byte `at` of the file: the driver calls
    /// the plan asks for, whatever the driver's alignment.
    async fn read_file(&mut self, at: u64, out: &mut [u8]) -> Result<(), Error> {
        let mut reads = self.0.region.reads(at, out, F::READ_SIZE)?;
        while let Some((address, bytes)) = reads.next_read()? {
            if let Err(e) = self.0.flash.read(address, bytes).await {
                self.0.error = Some(e);
                return Err(reads.failed());
            }
        }
        Ok(())
    }
}

impl<F: ReadNorFlash> core::fmt::Debug for AsyncFlashReader<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.0.debug(f, "AsyncFlashReader")
    }
}
