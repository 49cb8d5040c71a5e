//! The chip that both flash readers' tests read from, and the file they
//! read. The chip reads whole units of `R` bytes, like a real driver: any
//! other offset or length is refused, and so is anything past the end.

use embedded_storage::nor_flash::{
    check_read, ErrorType, NorFlashError, NorFlashErrorKind, ReadNorFlash,
};
use safetensors::tensor::{serialize, Dtype as RefDtype, TensorView as RefView};

pub struct Chip<const R: usize> {
    pub bytes: Vec<u8>,
    /// Reads that touch this address fail.
    pub bad: Option<u32>,
    /// The read that fails, counting from 1.
    pub fail_on: Option<usize>,
    /// The driver reads so far.
    pub calls: usize,
}

#[derive(Debug, PartialEq)]
pub struct ChipError(pub NorFlashErrorKind);

impl NorFlashError for ChipError {
    fn kind(&self) -> NorFlashErrorKind {
        self.0
    }
}

impl<const R: usize> ErrorType for Chip<R> {
    type Error = ChipError;
}

impl<const R: usize> ReadNorFlash for Chip<R> {
    const READ_SIZE: usize = R;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), ChipError> {
        self.calls += 1;
        if self.fail_on == Some(self.calls) {
            return Err(ChipError(NorFlashErrorKind::Other));
        }
        check_read(self, offset, bytes.len()).map_err(ChipError)?;
        let start = offset as usize;
        if let Some(bad) = self.bad {
            if (start..start + bytes.len()).contains(&(bad as usize)) {
                return Err(ChipError(NorFlashErrorKind::Other));
            }
        }
        bytes.copy_from_slice(&self.bytes[start..start + bytes.len()]);
        Ok(())
    }

    fn capacity(&self) -> usize {
        self.bytes.len()
    }
}

/// `file` at address `base` of a chip filled with 0xFF, whose size is a
/// whole number of units with at least `slack` bytes after the file.
pub fn chip<const R: usize>(file: &[u8], base: usize, slack: usize) -> Chip<R> {
    let mut bytes = vec![0xff; base];
    bytes.extend_from_slice(file);
    bytes.resize((bytes.len() + slack).next_multiple_of(R), 0xff);
    Chip {
        bytes,
        bad: None,
        fail_on: None,
        calls: 0,
    }
}

/// A file from the reference writer with every element size, metadata and an odd length.
pub fn sample_file() -> Vec<u8> {
    let a: Vec<u8> = (0..24u8).collect(); // F32 [2, 3]
    let b: Vec<u8> = (100..106u8).collect(); // BF16 [3]
    let c: Vec<u8> = (200..207u8).collect(); // I8 [7]
    let d: Vec<u8> = (50..66u8).collect(); // U64 [2]
    let tensors = [
        ("a", RefView::new(RefDtype::F32, vec![2, 3], &a).unwrap()),
        ("b", RefView::new(RefDtype::BF16, vec![3], &b).unwrap()),
        ("c", RefView::new(RefDtype::I8, vec![7], &c).unwrap()),
        ("d", RefView::new(RefDtype::U64, vec![2], &d).unwrap()),
    ];
    let meta = std::collections::HashMap::from([("k".to_string(), "v".to_string())]);
    serialize(tensors, Some(meta)).unwrap()
}
