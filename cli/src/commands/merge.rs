//! `merge INDEX_OR_SHARDS... -o OUT`: the tensors of several files (the
//! shards an index names, checked against it first, or files given one by
//! one) into one file, streamed and written atomically by the core
//! (docs/format.md W12). Metadata comes from the first file.

use std::path::PathBuf;

use serde_json::json;

use crate::file::{metadata_of, Failure};
use crate::model::{buffers, files_of, open_all};
use crate::output::Written;
use crate::write::pipeline::{write_file, Chosen};

/// Arguments of `merge`.
#[derive(clap::Args, Debug)]
pub struct Merge {
    /// Safetensors files and `*.index.json` (their shards, checked against
    /// them), in order: paths, http(s):// URLs or
    /// `hf://org/name[@revision][/file]` (read by ranges, streamed).
    #[arg(required = true, value_name = "INDEX_OR_SHARDS")]
    pub inputs: Vec<PathBuf>,
    /// The merged file.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Print one JSON document on one line instead of the status line (JSON
    /// Lines, as every --json): {"ok":true,"output","tensors","files",
    /// "bytes"}, or {"ok":false,"error":{…}}.
    #[arg(long)]
    pub json: bool,
}

/// Runs `merge`; the message of what went wrong otherwise (nothing written).
pub fn run(merge: &Merge, quiet: bool) -> Result<Written, Failure> {
    let mut sources = Vec::new();
    for input in &merge.inputs {
        sources.extend(files_of(input)?);
    }
    let mut all_bufs = buffers(sources.len());
    let opened = open_all(&sources, &mut all_bufs)?;
    let (mut files, headers): (Vec<_>, Vec<_>) = opened.into_iter().unzip();
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
    )?;
    Ok(Written {
        line: format!(
            "{}: {} from {}, {file_len} bytes\n",
            merge.output.display(),
            crate::output::count(chosen.len(), "tensor"),
            crate::output::count(sources.len(), "file")
        ),
        doc: json!({
            "ok": true,
            "output": merge.output.display().to_string(),
            "tensors": chosen.len(),
            "files": sources.len(),
            "bytes": file_len,
        }),
    })
}
