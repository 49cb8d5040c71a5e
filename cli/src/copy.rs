//! Streaming one tensor's bytes from an input file into a [`FileWriter`],
//! converted on the way when its dtype changes: through two fixed buffers,
//! whatever the tensor's size, with the progress bar advanced and Ctrl-C
//! honoured between chunks.

use std::io::{self, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicI32, Ordering};

use indicatif::ProgressBar;
use safetensors_nano::write::{convert_into, AsSpec, FileWriter};
use safetensors_nano::{Dtype, TensorInfo};

use crate::source::Input;

/// The signal that stopped the command (SIGINT or SIGTERM; 0: none).
static STOPPED_BY: AtomicI32 = AtomicI32::new(0);

/// Makes Ctrl-C (SIGINT) and SIGTERM stop a writing command cleanly: the
/// copy fails with `Interrupted`, its `FileWriter` is dropped, and the
/// temporary file goes with it (docs/format.md W12). Without this the
/// process would die with its temporary file still on disk. A second
/// signal ends the process at once; the temporary file it leaves is removed
/// by the next writer of that target (W12's stale files).
pub fn stop_on_ctrl_c() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    // Signals that cannot be caught (never, in practice) keep their default.
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    std::thread::spawn(move || {
        for signal in signals.forever() {
            if STOPPED_BY.swap(signal, Ordering::SeqCst) != 0 {
                std::process::exit(128 + signal);
            }
        }
    });
}

/// Whether Ctrl-C or SIGTERM stopped the command.
pub fn interrupted() -> bool {
    STOPPED_BY.load(Ordering::SeqCst) != 0
}

/// The exit status for a stopped command: 128 + the signal's number (130
/// for Ctrl-C, 143 for SIGTERM), as a shell reports it.
pub fn stopped_status() -> i32 {
    128 + STOPPED_BY.load(Ordering::SeqCst)
}

/// As if SIGINT had come (tests of what a writer does once stopped).
#[cfg(test)]
pub fn pretend_interrupted() {
    STOPPED_BY.store(signal_hook::consts::SIGINT, Ordering::SeqCst);
}

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
