//! `edit IN OUT`: keep, drop, rename and convert tensors, and set or drop
//! metadata entries (`metadata`; with no options, the canonical layout
//! the reference writer gives), streamed from IN into
//! OUT through the core's `Plan` and `FileWriter` (a temporary file renamed
//! into place, docs/format.md W12). Only the header is held in memory.

use std::path::PathBuf;

use regex::Regex;
use safetensors_nano::Dtype;

use serde_json::json;

use crate::file::{metadata_of, Failure};
use crate::model::{buffers, data_inputs, files_of, open_all};
use crate::output::{about, Written};
use crate::write::pipeline::{write_file, Chosen};
use metadata::{Changed, MetadataEdit};

pub mod metadata;

/// What to change, from the command line.
#[derive(clap::Args, Debug)]
pub struct Edit {
    /// The input: a safetensors file, or a sharded checkpoint's
    /// `*.index.json` (its shards edited as one model into the one file
    /// OUT; `split` OUT to shard it again); a path, an http(s):// URL or
    /// `hf://org/name[@revision][/file]` (read by ranges, streamed).
    pub input: PathBuf,
    /// The output file (written through a temporary file beside it and
    /// renamed when complete; may be IN itself).
    pub output: PathBuf,
    /// Keep only tensors whose name matches one of these regexes.
    #[arg(long, value_name = "RE", value_parser = regex)]
    pub keep: Vec<Regex>,
    /// Then drop tensors whose name matches one of these regexes.
    #[arg(long, value_name = "RE", value_parser = regex)]
    pub drop: Vec<Regex>,
    /// Replace every match of the regex OLD in each kept name with NEW
    /// ($1 and ${name} refer to groups); applied in the order given.
    #[arg(long, value_name = "OLD=NEW", value_parser = rename)]
    pub rename: Vec<(Regex, String)>,
    /// Write every tensor of float dtype FROM as TO (F64, F32, F16 or BF16),
    /// rounding to nearest, ties to even.
    #[arg(long, value_name = "FROM:TO", value_parser = convert)]
    pub convert: Vec<(Dtype, Dtype)>,
    /// Print one JSON document on one line instead of the status line (JSON
    /// Lines, as every --json): {"ok":true,"output","tensors","dropped",
    /// "renamed","converted","metadata","bytes"}, or {"ok":false,"error":{…}}.
    #[arg(long)]
    pub json: bool,
    /// Metadata entries to set, drop or clear.
    #[command(flatten)]
    pub metadata: MetadataEdit,
}

fn regex(s: &str) -> Result<Regex, String> {
    Regex::new(s).map_err(|e| e.to_string())
}

fn rename(s: &str) -> Result<(Regex, String), String> {
    let (old, new) = s.split_once('=').ok_or("expected OLD=NEW")?;
    Ok((regex(old)?, new.to_owned()))
}

fn convert(s: &str) -> Result<(Dtype, Dtype), String> {
    let (from, to) = s.split_once(':').ok_or("expected FROM:TO, e.g. F32:BF16")?;
    let dtype = |name: &str| {
        Dtype::from_name(name.as_bytes()).ok_or_else(|| format!("unknown dtype {name:?}"))
    };
    let (from, to) = (dtype(from)?, dtype(to)?);
    if !from.is_float() {
        return Err(format!("{from} is not a float dtype"));
    }
    if !matches!(to, Dtype::F64 | Dtype::F32 | Dtype::F16 | Dtype::BF16) {
        return Err("TO must be F64, F32, F16 or BF16".to_owned());
    }
    Ok((from, to))
}

/// What `edit` did, for its status line.
struct Summary {
    written: usize,
    dropped: usize,
    renamed: usize,
    converted: usize,
    metadata: Changed,
    file_len: u64,
}

/// The tensors `edit` writes (each with the index of its file), under
/// their new names and dtypes, and what it changed.
fn choose<'h>(
    edit: &Edit,
    headers: &[&safetensors_nano::Header<'h, &'h mut [safetensors_nano::Slot]>],
) -> (Vec<(usize, Chosen<'h>)>, Summary) {
    let mut chosen = Vec::new();
    let (mut dropped, mut renamed, mut converted) = (0, 0, 0);
    for (file, header) in headers.iter().enumerate() {
        for info in header.iter() {
            let original = info.name().to_string();
            let kept = edit.keep.is_empty() || edit.keep.iter().any(|r| r.is_match(&original));
            if !kept || edit.drop.iter().any(|r| r.is_match(&original)) {
                dropped += 1;
                continue;
            }
            let mut name = original.clone();
            for (pattern, replacement) in &edit.rename {
                name = pattern
                    .replace_all(&name, replacement.as_str())
                    .into_owned();
            }
            renamed += usize::from(name != original);
            let dtype = edit
                .convert
                .iter()
                .find(|&&(from, _)| from == info.dtype())
                .map_or(info.dtype(), |&(_, to)| to);
            converted += usize::from(dtype != info.dtype());
            chosen.push((file, (info, name, dtype)));
        }
    }
    let summary = Summary {
        written: chosen.len(),
        dropped,
        renamed,
        converted,
        metadata: Changed::default(),
        file_len: 0,
    };
    (chosen, summary)
}

/// The usage error in `edit`'s arguments that clap cannot see: one source
/// dtype given two targets, or a metadata key set twice, set and dropped,
/// or reserved.
pub fn usage_error(edit: &Edit) -> Option<String> {
    edit.convert
        .iter()
        .enumerate()
        .find(|(i, (f, _))| edit.convert[..*i].iter().any(|(g, _)| g == f))
        .map(|(_, (from, _))| format!("--convert: {from} given twice"))
        .or_else(|| edit.metadata.usage_error())
}

/// Runs `edit`; the message of what went wrong otherwise (nothing written).
/// A sharded checkpoint is read as one model and written as one file.
pub fn run(edit: &Edit, quiet: bool) -> Result<Written, Failure> {
    let sources = files_of(&edit.input)?;
    let mut bufs = buffers(sources.len());
    let mut files = open_all(&sources, &mut bufs)?;
    let headers: Vec<_> = files.iter().map(|(_, h)| h).collect();
    let (chosen, summary) = choose(edit, &headers);
    let (metadata, metadata_changed) = edit
        .metadata
        .apply(files.first().and_then(|(_, h)| metadata_of(h)));
    let sourced: Vec<_> = chosen.iter().map(|(i, c)| (*i, c)).collect();
    let mut inputs = data_inputs(&mut files);
    let file_len = write_file(
        &mut inputs,
        &sourced,
        metadata.as_deref(),
        &edit.output,
        " (check --rename)",
        quiet,
        "writing",
    )
    .map_err(about(&edit.input))?;
    let summary = Summary {
        metadata: metadata_changed,
        file_len,
        ..summary
    };
    // The metadata's counts only when asked to edit it (the line stays
    // as it was for tensor edits).
    let m = summary.metadata;
    let metadata = if edit.metadata.is_empty() {
        String::new()
    } else {
        format!(
            ", {} ({} set, {} dropped)",
            crate::output::count(m.keys, "metadata key"),
            m.set,
            m.dropped
        )
    };
    Ok(Written {
        line: format!(
            "{}: {} ({} dropped, {} renamed, {} converted){metadata}, {} bytes\n",
            edit.output.display(),
            crate::output::count(summary.written, "tensor"),
            summary.dropped,
            summary.renamed,
            summary.converted,
            summary.file_len
        ),
        doc: json!({
            "ok": true,
            "output": edit.output.display().to_string(),
            "tensors": summary.written,
            "dropped": summary.dropped,
            "renamed": summary.renamed,
            "converted": summary.converted,
            "metadata": {"keys": m.keys, "set": m.set, "dropped": m.dropped},
            "bytes": summary.file_len,
        }),
    })
}
