//! Streaming one tensor's bytes from an input file into a [`FileWriter`],
//! converted on the way when its dtype changes: through two fixed buffers,
//! whatever the tensor's size, with the progress bar advanced and Ctrl-C
//! honoured between chunks.

use std::io::{self, Read, Seek, SeekFrom};

use indicatif::ProgressBar;
use safetensors_nano::write::{convert_into, AsSpec, FileWriter};
use safetensors_nano::{Dtype, TensorInfo};

use super::signal::interrupted;
use crate::source::Input;

/// An `Interrupted` error once Ctrl-C or SIGTERM came.
fn check_interrupt() -> io::Result<()> {
    if interrupted() {
        Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"))
    } else {
        Ok(())
    }
}

/// Bytes read per step when copying as is.
const CHUNK: usize = 1 << 20;

/// Why a copy failed: reading the input or writing the output.
#[derive(Debug)]
pub enum CopyError {
    /// Reading the input failed (or it ended early).
    Read(io::Error),
    /// Writing the output failed, or Ctrl-C.
    Write(io::Error),
}

/// Reusable buffers for [`copy_tensor`].
pub struct Buffers {
    input: Vec<u8>,
    output: Vec<u8>,
}

impl Buffers {
    /// 1 MiB to read into; the conversion's output grows to its step's size.
    pub fn new() -> Self {
        Buffers {
            input: vec![0u8; CHUNK],
            output: Vec::new(),
        }
    }
}

/// Copies `source` (a tensor of the file `file` whose data starts at
/// `data_start`) into `out` as dtype `to`, then finishes the tensor.
pub fn copy_tensor<T: AsSpec>(
    file: &mut Input,
    data_start: u64,
    source: &TensorInfo<'_>,
    to: Dtype,
    out: &mut FileWriter<'_, T>,
    bufs: &mut Buffers,
    bar: &ProgressBar,
) -> Result<(), CopyError> {
    let from = source.dtype();
    file.seek(SeekFrom::Start(data_start + source.data_offsets().0))
        .map_err(CopyError::Read)?;
    let mut left = source.byte_len();
    // Converting: CHUNK / 8 elements per step (a multiple of 8, so whole
    // bytes for sub-byte dtypes; at most CHUNK bytes for 64-bit ones).
    let step = if from == to {
        CHUNK as u64
    } else {
        (CHUNK / 8) as u64 * u64::from(from.bits()) / 8
    };
    while left > 0 {
        check_interrupt().map_err(CopyError::Write)?;
        let n = step.min(left) as usize;
        let chunk = &mut bufs.input[..n];
        file.read_exact(chunk).map_err(CopyError::Read)?;
        if from == to {
            out.write_tensor_data(chunk).map_err(CopyError::Write)?;
        } else {
            let n_out = (n as u64 * 8 / u64::from(from.bits()) * u64::from(to.bits()) / 8) as usize;
            bufs.output.resize(n_out, 0);
            convert_into(from, chunk, to, &mut bufs.output)
                .map_err(|e| CopyError::Write(io::Error::new(io::ErrorKind::InvalidInput, e)))?;
            out.write_tensor_data(&bufs.output)
                .map_err(CopyError::Write)?;
        }
        left -= n as u64;
        bar.inc(n as u64);
    }
    out.finish_tensor().map_err(CopyError::Write)
}
