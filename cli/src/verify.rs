//! `verify`: each file's header and exact length, and with `--hash` every
//! tensor's SHA-256 (streamed).

use std::path::PathBuf;

use crate::file::{with_header, Buffers};
use crate::{emit, hash};

/// Runs `verify` over `files`; `false` if any was rejected (exit 1).
pub fn run(files: &[PathBuf], hash: bool, quiet: bool) -> bool {
    let mut bufs = Buffers::default();
    let mut all_ok = true;
    for path in files {
        let shown = path.display();
        let result = with_header(path, &mut bufs, |file, header| {
            let digests = if hash {
                hash::tensors(file, header, quiet)?
            } else {
                Vec::new()
            };
            if !quiet {
                let mut out = format!(
                    "{shown}: ok, {} tensors, {} bytes\n",
                    header.len(),
                    header.file_len()
                );
                for (t, d) in header.iter().zip(&digests) {
                    out += &format!("  {d}  {}\n", t.name());
                }
                emit(&out);
            }
            Ok(())
        });
        if let Err(f) = result {
            all_ok = false;
            match f.tensor.filter(|_| f.kind.is_none()) {
                // An I/O error while hashing: say which tensor.
                Some(t) => eprintln!("{shown}: {} (tensor {t:?})", f.message),
                None => eprintln!("{shown}: {}", f.message),
            }
        }
    }
    all_ok
}
