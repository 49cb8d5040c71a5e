//! SHA-256 of every tensor's bytes, read from the file through one bounded
//! buffer, with a progress bar on stderr when it is a terminal.

use std::io::{Read, Seek, SeekFrom};

use safetensors_nano::{Header, Slot};
use sha2::{Digest, Sha256};

use crate::file::Failure;

/// The read buffer: the most memory hashing uses, whatever the file's size.
const CHUNK: usize = 1 << 20;

/// The lowercase hex SHA-256 of each tensor, in data-offset order
/// (`header.iter()`).
pub fn tensors(
    file: &mut (impl Read + Seek),
    header: &Header<'_, &mut [Slot]>,
    quiet: bool,
) -> Result<Vec<String>, Failure> {
    let bar = crate::progress::bytes(header.data_len(), quiet, "hashing");
    let mut buf = vec![0u8; CHUNK];
    let mut digests = Vec::with_capacity(header.len());
    for t in header.iter() {
        let (begin, _) = t.data_offsets();
        let fail = |e: &std::io::Error| {
            let mut f = Failure::io("cannot read", e);
            f.tensor = Some(t.name().to_string());
            f
        };
        file.seek(SeekFrom::Start(header.data_start() + begin))
            .map_err(|e| fail(&e))?;
        let mut left = t.byte_len();
        let mut hasher = Sha256::new();
        while left > 0 {
            let n = usize::try_from(left).map_or(CHUNK, |l| l.min(CHUNK));
            file.read_exact(&mut buf[..n]).map_err(|e| fail(&e))?;
            hasher.update(&buf[..n]);
            left -= n as u64;
            bar.inc(n as u64);
        }
        digests.push(hex(&hasher.finalize()));
    }
    bar.finish_and_clear();
    Ok(digests)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
