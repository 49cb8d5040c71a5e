//! `verify`: each file's header and exact length, and with `--hash` every
//! tensor's SHA-256 (streamed).

use std::path::PathBuf;

use crate::file::{with_header, Buffers};
use crate::{emit, hash, sharded};

/// Runs `verify` over `files`; `false` if any was rejected (exit 1).
pub fn run(files: &[PathBuf], hash: bool, quiet: bool) -> bool {
    let mut bufs = Buffers::default();
    let mut all_ok = true;
    for path in files {
        let shown = path.display();
        if sharded::is_index(path) {
            all_ok &= verify_index(path, hash, quiet);
            continue;
        }
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

/// `verify` of a sharded checkpoint: every shard validated as a file, and
/// the index checked against them (every entry in its shard, no tensor
/// missing or extra, `total_size`). One `INDEX: problem` line per problem.
fn verify_index(path: &std::path::Path, hash: bool, quiet: bool) -> bool {
    let shown = path.display();
    match sharded::load(path, hash, quiet) {
        Err(f) => {
            eprintln!("{shown}: {}", f.message);
            false
        }
        Ok(s) if !s.problems.is_empty() => {
            for p in &s.problems {
                eprintln!("{shown}: {p}");
            }
            false
        }
        Ok(s) => {
            if !quiet {
                let mut out = format!(
                    "{shown}: ok, {} in {}, {} bytes of tensor data\n",
                    crate::count(s.rows.len(), "tensor"),
                    crate::count(s.shard_paths.len(), "shard"),
                    s.data_len
                );
                for r in &s.rows {
                    if let Some(d) = &r.sha256 {
                        out += &format!("  {d}  {}\n", r.name);
                    }
                }
                emit(&out);
            }
            true
        }
    }
}
