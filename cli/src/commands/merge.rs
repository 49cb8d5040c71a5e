//! `merge INDEX_OR_SHARDS... -o OUT`: the tensors of several files (the
//! shards an index names, checked against it first, or files given one by
//! one) into one file, streamed and written atomically by the core
//! (docs/format.md W12). Metadata comes from the first file.

use std::path::PathBuf;

use crate::file::{metadata_of, open, Buffers};
use crate::sharded;
use crate::source::Source;
use crate::write::pipeline::{write_file, Chosen};

/// Arguments of `merge`.
#[derive(clap::Args, Debug)]
pub struct Merge {
    /// A `*.index.json` (its shards, checked against it), or safetensors files.
    #[arg(required = true, value_name = "INDEX_OR_SHARDS")]
    pub inputs: Vec<PathBuf>,
    /// The merged file.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
}

/// Runs `merge`; the message of what went wrong otherwise (nothing written).
pub fn run(merge: &Merge, quiet: bool) -> Result<(), String> {
    let paths: Vec<PathBuf> = match merge.inputs.as_slice() {
        [index] if Source::Path(index.clone()).is_index() => {
            let shown = index.display();
            let s = sharded::load(&Source::Path(index.clone()), false, true)
                .map_err(|f| format!("{shown}: {}", f.message))?;
            if let Some(p) = s.problems.first() {
                return Err(format!(
                    "{shown}: {p}{}; nothing written",
                    match s.problems.len() {
                        1 => String::new(),
                        n => format!(" (and {} more: see `verify`)", n - 1),
                    }
                ));
            }
            s.shards.into_iter().filter_map(Source::into_path).collect()
        }
        inputs => {
            if let Some(index) = inputs
                .iter()
                .find(|p| Source::Path(p.to_path_buf()).is_index())
            {
                return Err(format!(
                    "{}: give an index on its own, or shard files",
                    index.display()
                ));
            }
            inputs.to_vec()
        }
    };
    let mut all_bufs: Vec<Buffers> = paths.iter().map(|_| Buffers::default()).collect();
    let mut files = Vec::with_capacity(paths.len());
    let mut headers = Vec::with_capacity(paths.len());
    for (path, bufs) in paths.iter().zip(all_bufs.iter_mut()) {
        let (file, header) = open(&Source::Path(path.clone()), bufs)
            .map_err(|f| format!("{}: {}", path.display(), f.message))?;
        files.push(file);
        headers.push(header);
    }
    let metadata = headers.first().and_then(metadata_of);
    let data_starts: Vec<u64> = headers.iter().map(|h| h.data_start()).collect();
    let chosen: Vec<(usize, Chosen<'_>)> = headers
        .iter()
        .enumerate()
        .flat_map(|(i, h)| {
            h.iter()
                .map(move |t| (i, (t, t.name().to_string(), t.dtype())))
        })
        .collect();
    let mut sources: Vec<(&mut crate::source::Input, u64)> =
        files.iter_mut().zip(data_starts).collect();
    let sourced: Vec<_> = chosen.iter().map(|(i, c)| (*i, c)).collect();
    let file_len = write_file(
        &mut sources,
        &sourced,
        metadata.as_deref(),
        &merge.output,
        " (the same tensor is in two inputs)",
        quiet,
        "merging",
    )
    .map_err(|f| f.message)?;
    if !quiet {
        crate::output::emit(&format!(
            "{}: {} from {}, {file_len} bytes\n",
            merge.output.display(),
            crate::output::count(chosen.len(), "tensor"),
            crate::output::count(paths.len(), "file")
        ));
    }
    Ok(())
}
