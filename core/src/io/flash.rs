//! Reading a file from storage that is not memory-mapped, through
//! [`embedded_storage::nor_flash::ReadNorFlash`] (feature `embedded-storage`).
//!
//! A [`FlashReader`] reads the header into a RAM buffer the caller gives,
//! parses it into the caller's slots, and then reads tensor bytes by offset
//! into caller buffers, on demand: a whole tensor, or any part of one (a row
//! of a weight matrix at a time, say). Nothing is allocated and nothing is
//! cached; every read goes to the driver.
//!
//! Reads of any address and length work on a driver whose `READ_SIZE` is
//! larger than one byte: the aligned middle of a read goes straight into the
//! caller's buffer, the unaligned ends through a small buffer on the stack
//! (drivers with a `READ_SIZE` above 32 bytes get aligned reads only).
//!
//! Errors are the crate's [`Error`]; a driver failure is
//! [`ErrorKind::Storage`], and the driver's own error is kept for
//! [`FlashReader::storage_error`].
//!
//! ```
//! use embedded_storage::nor_flash::{ErrorType, NorFlashError, NorFlashErrorKind, ReadNorFlash};
//! use safetensors_nano::{flash::FlashReader, Parser, Table};
//!
//! /// A stand-in driver: a byte array read 4 bytes at a time.
//! struct Chip<'a>(&'a [u8]);
//! #[derive(Debug)]
//! struct ChipError;
//! impl NorFlashError for ChipError {
//!     fn kind(&self) -> NorFlashErrorKind { NorFlashErrorKind::Other }
//! }
//! impl ErrorType for Chip<'_> { type Error = ChipError; }
//! impl ReadNorFlash for Chip<'_> {
//!     const READ_SIZE: usize = 4;
//!     fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), ChipError> {
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
//! let mut reader = FlashReader::new(Chip(&chip), 16, file_len);
//! let mut header_buf = [0u8; 256];
//! let mut table = Table::<4>::new();
//! let header = reader.read_header(&Parser::new(), &mut header_buf, &mut table).unwrap();
//! let w = header.tensor("w").unwrap();
//!
//! let mut values = [0f32; 3];
//! reader.read_into(&header, &w, &mut values).unwrap();
//! assert_eq!(values, [1.0, 2.0, 3.0]);
//!
//! let mut second = [0u8; 4]; // bytes 4..8 of the tensor
//! reader.read_at(&header, &w, 4, &mut second).unwrap();
//! assert_eq!(f32::from_le_bytes(second), 2.0);
//! ```

use embedded_storage::nor_flash::ReadNorFlash;

use super::flash_plan::{self as plan, HeaderRead, Held};
use crate::error::Error;
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::file::{Header, Parser};
use crate::table::Slot;
use crate::view::tensor::{Element, TensorInfo};

/// Reads a safetensors file stored at `base` in a NOR flash (or anything
/// else with a [`ReadNorFlash`] driver) without mapping it into memory.
///
/// See the [module documentation](self) for a complete example.
///
/// ```
/// # use embedded_storage::nor_flash::{ErrorType, NorFlashError, NorFlashErrorKind, ReadNorFlash};
/// # struct Chip<'a>(&'a [u8]);
/// # #[derive(Debug)] struct ChipError;
/// # impl NorFlashError for ChipError { fn kind(&self) -> NorFlashErrorKind { NorFlashErrorKind::Other } }
/// # impl ErrorType for Chip<'_> { type Error = ChipError; }
/// # impl ReadNorFlash for Chip<'_> {
/// #     const READ_SIZE: usize = 1;
/// #     fn read(&mut self, o: u32, b: &mut [u8]) -> Result<(), ChipError> {
/// #         b.copy_from_slice(self.0.get(o as usize..o as usize + b.len()).ok_or(ChipError)?); Ok(())
/// #     }
/// #     fn capacity(&self) -> usize { self.0.len() }
/// # }
/// use safetensors_nano::{flash::FlashReader, Parser, Slot};
/// let file = b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ";
/// let mut reader = FlashReader::new(Chip(file), 0, file.len() as u32);
/// let mut buf = [0u8; 64];
/// let mut slots = [Slot::EMPTY; 2];
/// let header = reader.read_header(&Parser::new(), &mut buf, &mut slots[..]).unwrap();
/// assert!(header.is_empty());
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "embedded-storage")))]
pub struct FlashReader<F: ReadNorFlash>(Held<F, F::Error>);

impl<F: ReadNorFlash> FlashReader<F> {
    /// A reader for the file of `len` bytes that starts at address `base`.
    /// The header is checked against this length exactly (docs/format.md R3
    /// header-fits, R13 exact-length).
    ///
    /// ```
    /// # use embedded_storage::nor_flash::{ErrorType, NorFlashError, NorFlashErrorKind, ReadNorFlash};
    /// # struct Chip<'a>(&'a [u8]);
    /// # #[derive(Debug)] struct ChipError;
    /// # impl NorFlashError for ChipError { fn kind(&self) -> NorFlashErrorKind { NorFlashErrorKind::Other } }
    /// # impl ErrorType for Chip<'_> { type Error = ChipError; }
    /// # impl ReadNorFlash for Chip<'_> {
    /// #     const READ_SIZE: usize = 1;
    /// #     fn read(&mut self, o: u32, b: &mut [u8]) -> Result<(), ChipError> {
    /// #         b.copy_from_slice(self.0.get(o as usize..o as usize + b.len()).ok_or(ChipError)?); Ok(())
    /// #     }
    /// #     fn capacity(&self) -> usize { self.0.len() }
    /// # }
    /// use safetensors_nano::{flash::FlashReader, ErrorKind, Parser, Table};
    /// let file = b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ";
    /// // One byte too many: the header describes a file of 16 bytes.
    /// let mut reader = FlashReader::new(Chip(&file[..]), 0, 17);
    /// let err = reader.read_header(&Parser::new(), &mut [0; 64], Table::<1>::new()).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::MetadataIncompleteBuffer { expected: 0, found: 1 });
    /// ```
    pub const fn new(flash: F, base: u32, len: u32) -> Self {
        FlashReader(Held::new(flash, base, Some(len)))
    }

    /// A reader for a file that starts at address `base` and whose length
    /// is not known: the header decides it, and the file must fit in the
    /// storage's capacity. Bytes after the file are ignored.
    ///
    /// ```
    /// # use embedded_storage::nor_flash::{ErrorType, NorFlashError, NorFlashErrorKind, ReadNorFlash};
    /// # struct Chip<'a>(&'a [u8]);
    /// # #[derive(Debug)] struct ChipError;
    /// # impl NorFlashError for ChipError { fn kind(&self) -> NorFlashErrorKind { NorFlashErrorKind::Other } }
    /// # impl ErrorType for Chip<'_> { type Error = ChipError; }
    /// # impl ReadNorFlash for Chip<'_> {
    /// #     const READ_SIZE: usize = 1;
    /// #     fn read(&mut self, o: u32, b: &mut [u8]) -> Result<(), ChipError> {
    /// #         b.copy_from_slice(self.0.get(o as usize..o as usize + b.len()).ok_or(ChipError)?); Ok(())
    /// #     }
    /// #     fn capacity(&self) -> usize { self.0.len() }
    /// # }
    /// use safetensors_nano::{flash::FlashReader, Parser, Table};
    /// // The file, then erased flash.
    /// let chip = b"\x08\x00\x00\x00\x00\x00\x00\x00{}      \xff\xff\xff\xff";
    /// let mut reader = FlashReader::at(Chip(chip), 0);
    /// let mut buf = [0; 64];
    /// let header = reader.read_header(&Parser::new(), &mut buf, Table::<1>::new()).unwrap();
    /// assert_eq!(header.file_len(), 16);
    /// ```
    pub const fn at(flash: F, base: u32) -> Self {
        FlashReader(Held::new(flash, base, None))
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
    ///
    /// ```
    /// # use embedded_storage::nor_flash::{ErrorType, NorFlashError, NorFlashErrorKind, ReadNorFlash};
    /// # struct Chip<'a>(&'a [u8]);
    /// # #[derive(Debug)] struct ChipError;
    /// # impl NorFlashError for ChipError { fn kind(&self) -> NorFlashErrorKind { NorFlashErrorKind::Other } }
    /// # impl ErrorType for Chip<'_> { type Error = ChipError; }
    /// # impl ReadNorFlash for Chip<'_> {
    /// #     const READ_SIZE: usize = 1;
    /// #     fn read(&mut self, o: u32, b: &mut [u8]) -> Result<(), ChipError> {
    /// #         b.copy_from_slice(self.0.get(o as usize..o as usize + b.len()).ok_or(ChipError)?); Ok(())
    /// #     }
    /// #     fn capacity(&self) -> usize { self.0.len() }
    /// # }
    /// use safetensors_nano::{flash::FlashReader, ErrorKind, Parser, Table};
    /// let file = b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ";
    /// let mut reader = FlashReader::new(Chip(file), 0, 16);
    /// let parser = Parser::new().header_limit(4); // buffer of 12 bytes
    /// let err = reader.read_header(&parser, &mut [0; 12], Table::<1>::new()).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::HeaderTooLarge { header_len: 8, limit: 4 });
    /// ```
    pub fn read_header<'b, S>(
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
        self.read_file(at, prefix)?;
        let (at, json) = steps.json(parser, buf)?;
        self.read_file(at, json)?;
        steps.parse(parser, buf, storage)
    }

    /// Reads all of `tensor`'s bytes into `out`, which must be exactly
    /// [`byte_len`](TensorInfo::byte_len) long. `tensor` must come from
    /// `header`, the header this reader read.
    ///
    /// # Errors
    /// [`ErrorKind::ByteLengthMismatch`] for another length;
    /// [`ErrorKind::Storage`] when the driver fails.
    ///
    /// ```
    /// # use embedded_storage::nor_flash::{ErrorType, NorFlashError, NorFlashErrorKind, ReadNorFlash};
    /// # struct Chip<'a>(&'a [u8]);
    /// # #[derive(Debug)] struct ChipError;
    /// # impl NorFlashError for ChipError { fn kind(&self) -> NorFlashErrorKind { NorFlashErrorKind::Other } }
    /// # impl ErrorType for Chip<'_> { type Error = ChipError; }
    /// # impl ReadNorFlash for Chip<'_> {
    /// #     const READ_SIZE: usize = 1;
    /// #     fn read(&mut self, o: u32, b: &mut [u8]) -> Result<(), ChipError> {
    /// #         b.copy_from_slice(self.0.get(o as usize..o as usize + b.len()).ok_or(ChipError)?); Ok(())
    /// #     }
    /// #     fn capacity(&self) -> usize { self.0.len() }
    /// # }
    /// use safetensors_nano::{flash::FlashReader, Parser, Table};
    /// let file = b"\x38\x00\x00\x00\x00\x00\x00\x00{\"b\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]}}   abc";
    /// let mut reader = FlashReader::new(Chip(file), 0, file.len() as u32);
    /// let mut buf = [0u8; 64];
    /// let header = reader.read_header(&Parser::new(), &mut buf, Table::<1>::new()).unwrap();
    /// let mut out = [0u8; 3];
    /// reader.read(&header, &header.tensor("b").unwrap(), &mut out).unwrap();
    /// assert_eq!(&out, b"abc");
    /// ```
    pub fn read<S: AsRef<[Slot]>>(
        &mut self,
        header: &Header<'_, S>,
        tensor: &TensorInfo<'_>,
        out: &mut [u8],
    ) -> Result<(), Error> {
        plan::check_whole(tensor, out.len())?;
        self.read_at(header, tensor, 0, out)
    }

    /// Reads `out.len()` bytes of `tensor`'s data, starting `offset` bytes
    /// into it. `tensor` must come from `header`, the header this reader read.
    ///
    /// # Errors
    /// [`ErrorKind::ReadOutOfRange`] when the bytes run past the tensor's
    /// end; [`ErrorKind::Storage`] when the driver fails.
    ///
    /// ```
    /// # use embedded_storage::nor_flash::{ErrorType, NorFlashError, NorFlashErrorKind, ReadNorFlash};
    /// # struct Chip<'a>(&'a [u8]);
    /// # #[derive(Debug)] struct ChipError;
    /// # impl NorFlashError for ChipError { fn kind(&self) -> NorFlashErrorKind { NorFlashErrorKind::Other } }
    /// # impl ErrorType for Chip<'_> { type Error = ChipError; }
    /// # impl ReadNorFlash for Chip<'_> {
    /// #     const READ_SIZE: usize = 1;
    /// #     fn read(&mut self, o: u32, b: &mut [u8]) -> Result<(), ChipError> {
    /// #         b.copy_from_slice(self.0.get(o as usize..o as usize + b.len()).ok_or(ChipError)?); Ok(())
    /// #     }
    /// #     fn capacity(&self) -> usize { self.0.len() }
    /// # }
    /// use safetensors_nano::{flash::FlashReader, ErrorKind, Parser, Table};
    /// let file = b"\x38\x00\x00\x00\x00\x00\x00\x00{\"b\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]}}   abc";
    /// let mut reader = FlashReader::new(Chip(file), 0, file.len() as u32);
    /// let mut buf = [0u8; 64];
    /// let header = reader.read_header(&Parser::new(), &mut buf, Table::<1>::new()).unwrap();
    /// let b = header.tensor("b").unwrap();
    /// let mut out = [0u8; 2];
    /// reader.read_at(&header, &b, 1, &mut out).unwrap();
    /// assert_eq!(&out, b"bc");
    /// let err = reader.read_at(&header, &b, 2, &mut out).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::ReadOutOfRange { end: 4, len: 3 });
    /// ```
    pub fn read_at<S: AsRef<[Slot]>>(
        &mut self,
        header: &Header<'_, S>,
        tensor: &TensorInfo<'_>,
        offset: u64,
        out: &mut [u8],
    ) -> Result<(), Error> {
        let at = plan::tensor_at(header.data_start(), tensor, offset, out.len())?;
        self.read_file(at, out)
            .map_err(|e| e.with_tensor(tensor.as_ref()))
    }

    /// Reads all of `tensor`'s elements into `out` as `T`, which must be
    /// the tensor's dtype; `out` must hold exactly
    /// [`element_count`](TensorInfo::element_count) elements.
    ///
    /// # Errors
    /// [`ErrorKind::DtypeMismatch`], [`ErrorKind::LengthMismatch`] (in
    /// elements), [`ErrorKind::Storage`].
    ///
    /// ```
    /// # use embedded_storage::nor_flash::{ErrorType, NorFlashError, NorFlashErrorKind, ReadNorFlash};
    /// # struct Chip<'a>(&'a [u8]);
    /// # #[derive(Debug)] struct ChipError;
    /// # impl NorFlashError for ChipError { fn kind(&self) -> NorFlashErrorKind { NorFlashErrorKind::Other } }
    /// # impl ErrorType for Chip<'_> { type Error = ChipError; }
    /// # impl ReadNorFlash for Chip<'_> {
    /// #     const READ_SIZE: usize = 1;
    /// #     fn read(&mut self, o: u32, b: &mut [u8]) -> Result<(), ChipError> {
    /// #         b.copy_from_slice(self.0.get(o as usize..o as usize + b.len()).ok_or(ChipError)?); Ok(())
    /// #     }
    /// #     fn capacity(&self) -> usize { self.0.len() }
    /// # }
    /// use safetensors_nano::{flash::FlashReader, ErrorKind, Parser, Table};
    /// let file = b"\x38\x00\x00\x00\x00\x00\x00\x00{\"h\":{\"dtype\":\"I16\",\"shape\":[2],\"data_offsets\":[0,4]}}  \x01\x00\xff\xff";
    /// let mut reader = FlashReader::new(Chip(file), 0, file.len() as u32);
    /// let mut buf = [0u8; 64];
    /// let header = reader.read_header(&Parser::new(), &mut buf, Table::<1>::new()).unwrap();
    /// let h = header.tensor("h").unwrap();
    /// let mut out = [0i16; 2];
    /// reader.read_into(&header, &h, &mut out).unwrap();
    /// assert_eq!(out, [1, -1]);
    /// let err = reader.read_into(&header, &h, &mut [0u16; 2]).unwrap_err();
    /// assert!(matches!(err.kind(), ErrorKind::DtypeMismatch { .. }));
    /// ```
    pub fn read_into<T: Element, S: AsRef<[Slot]>>(
        &mut self,
        header: &Header<'_, S>,
        tensor: &TensorInfo<'_>,
        out: &mut [T],
    ) -> Result<(), Error> {
        let bytes = plan::element_bytes(tensor, out)?;
        self.read_at(header, tensor, 0, bytes)?;
        plan::to_native::<T>(bytes);
        Ok(())
    }

    /// The driver's error from the last failed read, if a read failed.
    ///
    /// ```
    /// # use embedded_storage::nor_flash::{ErrorType, NorFlashError, NorFlashErrorKind, ReadNorFlash};
    /// # struct Chip<'a>(&'a [u8]);
    /// # #[derive(Debug)] struct ChipError;
    /// # impl NorFlashError for ChipError { fn kind(&self) -> NorFlashErrorKind { NorFlashErrorKind::OutOfBounds } }
    /// # impl ErrorType for Chip<'_> { type Error = ChipError; }
    /// # impl ReadNorFlash for Chip<'_> {
    /// #     const READ_SIZE: usize = 1;
    /// #     fn read(&mut self, o: u32, b: &mut [u8]) -> Result<(), ChipError> {
    /// #         b.copy_from_slice(self.0.get(o as usize..o as usize + b.len()).ok_or(ChipError)?); Ok(())
    /// #     }
    /// #     fn capacity(&self) -> usize { 1 << 20 } // claims more than it has
    /// # }
    /// use safetensors_nano::{flash::FlashReader, ErrorKind, Parser, Table};
    /// let mut reader = FlashReader::at(Chip(b"\x08\x00"), 0);
    /// let err = reader.read_header(&Parser::new(), &mut [0; 64], Table::<1>::new()).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::Storage { address: 0, len: 8 });
    /// assert_eq!(reader.storage_error().unwrap().kind(), NorFlashErrorKind::OutOfBounds);
    /// ```
    pub fn storage_error(&self) -> Option<&F::Error> {
        self.0.error.as_ref()
    }

    /// Gives the driver back.
    ///
    /// ```
    /// # use embedded_storage::nor_flash::{ErrorType, NorFlashError, NorFlashErrorKind, ReadNorFlash};
    /// # struct Chip<'a>(&'a [u8]);
    /// # #[derive(Debug)] struct ChipError;
    /// # impl NorFlashError for ChipError { fn kind(&self) -> NorFlashErrorKind { NorFlashErrorKind::Other } }
    /// # impl ErrorType for Chip<'_> { type Error = ChipError; }
    /// # impl ReadNorFlash for Chip<'_> {
    /// #     const READ_SIZE: usize = 1;
    /// #     fn read(&mut self, o: u32, b: &mut [u8]) -> Result<(), ChipError> {
    /// #         b.copy_from_slice(self.0.get(o as usize..o as usize + b.len()).ok_or(ChipError)?); Ok(())
    /// #     }
    /// #     fn capacity(&self) -> usize { self.0.len() }
    /// # }
    /// use safetensors_nano::flash::FlashReader;
    /// let reader = FlashReader::new(Chip(b""), 0, 0);
    /// assert_eq!(reader.into_inner().0, b"");
    /// ```
    pub fn into_inner(self) -> F {
        self.0.flash
    }

    /// Reads `out.len()` bytes at byte `at` of the file: the driver calls
    /// the plan asks for, whatever the driver's alignment.
    fn read_file(&mut self, at: u64, out: &mut [u8]) -> Result<(), Error> {
        let mut reads = self.0.region.reads(at, out, F::READ_SIZE)?;
        while let Some((address, bytes)) = reads.next_read()? {
            if let Err(e) = self.0.flash.read(address, bytes) {
                self.0.error = Some(e);
                return Err(reads.failed());
            }
        }
        Ok(())
    }
}

impl<F: ReadNorFlash> core::fmt::Debug for FlashReader<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.0.debug(f, "FlashReader")
    }
}
