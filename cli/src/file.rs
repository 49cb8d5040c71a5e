//! Opening a file and reading its header with the core's `std` helpers: the
//! header bytes only, then the file length checked against it.

use std::io::Seek;

use safetensors_nano::{read_header, Error, Header, ReadError, Slot};

use crate::source::{Input, Source};

/// Why a file was rejected, ready to print.
#[derive(Debug)]
pub struct Failure {
    /// The format error's kind name; `None` for an I/O error.
    pub kind: Option<&'static str>,
    /// The message, naming the tensor (`Error::display_in`).
    pub message: String,
    /// The file offset the error points at.
    pub offset: Option<u64>,
    /// The tensor the error is about.
    pub tensor: Option<String>,
}

impl Failure {
    /// A format error, its tensor named from `header` (the header's JSON bytes).
    pub fn format(e: &Error, header: &[u8]) -> Self {
        Failure {
            kind: Some(e.kind().name()),
            message: e.display_in(header).to_string(),
            offset: e.offset(),
            tensor: e.tensor_name(header).map(|n| n.to_string()),
        }
    }

    /// Any other failure, by its message.
    pub fn other(message: String) -> Self {
        Failure {
            kind: None,
            message,
            offset: None,
            tensor: None,
        }
    }

    /// An I/O error (a remote file's error keeps its kind and message).
    pub fn io(what: &str, e: &std::io::Error) -> Self {
        #[cfg(feature = "http")]
        if let Some(remote) = crate::remote::inside(e) {
            return Failure {
                kind: Some(remote.kind.name()),
                message: remote.message.clone(),
                offset: None,
                tensor: None,
            };
        }
        Failure {
            kind: None,
            message: format!("{what}: {e}"),
            offset: None,
            tensor: None,
        }
    }

    /// A remote file's error.
    #[cfg(feature = "http")]
    pub fn remote(e: crate::remote::Error) -> Self {
        Failure {
            kind: Some(e.kind.name()),
            message: e.message,
            offset: None,
            tensor: None,
        }
    }
}

/// The header's JSON bytes as far as `buf` (the 8-byte prefix, then what was
/// read of the header) has them, for naming tensors in errors.
fn header_bytes(buf: &[u8]) -> &[u8] {
    let n = buf
        .first_chunk::<8>()
        .map_or(0, |b| u64::from_le_bytes(*b).min(buf.len() as u64) as usize);
    buf.get(8..8 + n)
        .or_else(|| buf.get(8..))
        .unwrap_or_default()
}

/// Reusable buffers: a loop over many files allocates only for the largest header.
#[derive(Default)]
pub struct Buffers {
    buf: Vec<u8>,
    slots: Vec<Slot>,
}

/// Opens `source` with its header's bytes ready to read: the open file
/// and its length.
pub fn opened(source: &Source) -> Result<(Input, u64), Failure> {
    let (mut file, file_len) = source.open()?;
    file.prefetch_header()?;
    Ok((file, file_len))
}

/// Opens `source`, reads and validates its header and checks the file's exact
/// length, then hands the open file and the header to `f`.
pub fn with_header<T>(
    source: &Source,
    bufs: &mut Buffers,
    f: impl FnOnce(&mut Input, &Header<'_, &mut [Slot]>) -> Result<T, Failure>,
) -> Result<T, Failure> {
    with_opened(opened(source)?, bufs, f)
}

/// As [`with_header`], for a file [`opened`] already.
pub fn with_opened<T>(
    (mut file, file_len): (Input, u64),
    bufs: &mut Buffers,
    f: impl FnOnce(&mut Input, &Header<'_, &mut [Slot]>) -> Result<T, Failure>,
) -> Result<T, Failure> {
    let header = match read_header(&mut file, &mut bufs.buf, &mut bufs.slots) {
        Ok(header) => header,
        Err(ReadError::Format(e)) => return Err(Failure::format(&e, header_bytes(&bufs.buf))),
        Err(ReadError::Io(e)) => return Err(Failure::io("cannot read", &e)),
    };
    header
        .check_file_len(file_len)
        .map_err(|e| Failure::format(&e, header.json()))?;
    f(&mut file, &header)
}

/// As [`with_header`], returning the open file and the header (which
/// borrows `bufs`), for holding several files' headers at once.
pub fn open<'b>(
    source: &Source,
    bufs: &'b mut Buffers,
) -> Result<(Input, Header<'b, &'b mut [Slot]>), Failure> {
    let (mut file, file_len) = opened(source)?;
    // Checked once, then read again for the header returned: an error's
    // message needs the buffer the returned header would keep borrowed.
    match read_header(&mut file, &mut bufs.buf, &mut bufs.slots) {
        Ok(header) => header
            .check_file_len(file_len)
            .map_err(|e| Failure::format(&e, header.json()))?,
        Err(ReadError::Format(e)) => return Err(Failure::format(&e, header_bytes(&bufs.buf))),
        Err(ReadError::Io(e)) => return Err(Failure::io("cannot read", &e)),
    }
    file.rewind().map_err(|e| Failure::io("cannot read", &e))?;
    let header = read_header(&mut file, &mut bufs.buf, &mut bufs.slots)
        .map_err(|e| Failure::other(format!("cannot read again: {e}")))?;
    Ok((file, header))
}

/// A header's metadata as owned pairs (`None`: no `__metadata__`).
pub fn metadata_of<S>(header: &Header<'_, S>) -> Option<Vec<(String, String)>>
where
    S: AsRef<[Slot]>,
{
    header.metadata().map(|m| {
        m.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    })
}
