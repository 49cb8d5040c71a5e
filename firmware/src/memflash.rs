//! A NOR-flash driver over a memory region, standing in for an external
//! flash chip: reads go through `ReadNorFlash`, in whole 4-byte words, the
//! way an SPI or QSPI driver would transfer them. The firmware never takes a
//! pointer into the region through this path.

use embedded_storage::nor_flash::{
    check_read, ErrorType, NorFlashError, NorFlashErrorKind, ReadNorFlash,
};

/// Errors of [`MemFlash`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemFlashError {
    /// Offset or length not a multiple of [`MemFlash::READ_SIZE`].
    NotAligned,
    /// The read runs past the end of the region.
    OutOfBounds,
}

impl NorFlashError for MemFlashError {
    fn kind(&self) -> NorFlashErrorKind {
        match self {
            MemFlashError::NotAligned => NorFlashErrorKind::NotAligned,
            MemFlashError::OutOfBounds => NorFlashErrorKind::OutOfBounds,
        }
    }
}

/// Read-only flash over `region`, with read statistics. Its capacity is the
/// region's length rounded up to a whole word.
pub struct MemFlash {
    region: &'static [u8],
    /// Number of `read` calls served.
    pub reads: u32,
    /// Bytes transferred.
    pub bytes: u32,
}

impl MemFlash {
    pub const fn new(region: &'static [u8]) -> Self {
        MemFlash {
            region,
            reads: 0,
            bytes: 0,
        }
    }
}

impl ErrorType for MemFlash {
    type Error = MemFlashError;
}

impl ReadNorFlash for MemFlash {
    const READ_SIZE: usize = 4;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), Self::Error> {
        check_read(self, offset, bytes.len()).map_err(|e| match e {
            NorFlashErrorKind::NotAligned => MemFlashError::NotAligned,
            _ => MemFlashError::OutOfBounds,
        })?;
        // Word by word; past the end of the region (inside the last word)
        // the "chip" reads as erased, 0xFF.
        let mut address = offset as usize;
        for word in bytes.chunks_exact_mut(4) {
            for (i, byte) in word.iter_mut().enumerate() {
                *byte = self.region.get(address + i).copied().unwrap_or(0xFF);
            }
            address += 4;
        }
        self.reads += 1;
        self.bytes += bytes.len() as u32;
        Ok(())
    }

    fn capacity(&self) -> usize {
        // A whole number of words, like a real part.
        self.region.len().next_multiple_of(Self::READ_SIZE)
    }
}
