//! A model named on the command line, as every subcommand reads it: one
//! safetensors file, or a sharded checkpoint's `*.index.json` (its shards,
//! checked against it first), on disk or remote (`Source`: read by ranges,
//! never held whole). Tensors are found by name across the shards.

use std::path::Path;

use safetensors_nano::{Header, Slot};

use crate::file::{open, Buffers, Failure};
use crate::sharded;
use crate::source::{Input, Source};

/// The files `arg` names: the file itself, or an index's shards once the
/// index and the shards agree (a problem is an error naming the first; see
/// `verify` for all). Messages name `arg`.
pub fn files_of(arg: &Path) -> Result<Vec<Source>, Failure> {
    let named = |mut f: Failure| {
        f.message = format!("{}: {}", arg.display(), f.message);
        f
    };
    let source = Source::from_arg(arg).map_err(named)?;
    if !source.is_index() {
        return Ok(vec![source]);
    }
    let loaded = sharded::load(&source, false, true).map_err(named)?;
    if let Some(p) = loaded.problems.first() {
        let more = match loaded.problems.len() {
            1 => String::new(),
            n => format!(" (and {} more: see `verify`)", n - 1),
        };
        let mut f = Failure::other(format!("{p}{more}"));
        f.kind = Some("IndexMismatch");
        return Err(named(f));
    }
    Ok(loaded.shards)
}

/// One open file of a model: the file, and its header (borrowing its buffers).
pub type OpenFile<'b> = (Input, Header<'b, &'b mut [Slot]>);

/// Opens every file of `sources`, each with its buffers from `bufs` (one
/// per source); messages name the file.
pub fn open_all<'b>(
    sources: &[Source],
    bufs: &'b mut [Buffers],
) -> Result<Vec<OpenFile<'b>>, Failure> {
    sources
        .iter()
        .zip(bufs.iter_mut())
        .map(|(source, bufs)| {
            open(source, bufs).map_err(|mut f| {
                f.message = format!("{}: {}", source.shown(), f.message);
                f
            })
        })
        .collect()
}

/// Each open file with where its data starts: what the write pipeline reads
/// tensors from.
pub fn data_inputs<'a>(files: &'a mut [OpenFile<'_>]) -> Vec<(&'a mut Input, u64)> {
    files
        .iter_mut()
        .map(|(file, header)| {
            let start = header.data_start();
            (file, start)
        })
        .collect()
}

/// Buffers for `n` files.
pub fn buffers(n: usize) -> Vec<Buffers> {
    (0..n).map(|_| Buffers::default()).collect()
}
