//! `edit IN OUT`: keep, drop, rename and convert tensors, and set or drop
//! metadata entries (crate::metadata; with no options, the canonical layout
//! the reference writer gives), streamed from IN into
//! OUT through the core's `Plan` and `FileWriter` (a temporary file renamed
//! into place, docs/format.md W12). Only the header is held in memory.

use std::path::{Path, PathBuf};

use regex::Regex;
use safetensors_nano::write::{AsSpec, Existing, FileWriter, Plan};
use safetensors_nano::{Dtype, ErrorKind, TensorRef};

use crate::copy::{self, CopyError};
use crate::file::{with_header, Buffers, Failure};
use crate::hash::progress;
use crate::metadata::{Changed, MetadataEdit};
use crate::source::Source;

/// The most dimensions a tensor may have here (the writer's entries hold
/// their dims inline).
pub const MAX_RANK: usize = 32;

/// What to change, from the command line.
#[derive(clap::Args, Debug)]
pub struct Edit {
    /// The input file.
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
pub fn run(edit: &Edit, quiet: bool) -> Result<(), String> {
    let shown = edit.input.display();
    let input = Source::Path(edit.input.clone());
    let summary = with_header(&input, &mut Buffers::default(), |file, header| {
        // Which tensors, under which names, as which dtype.
        let mut chosen = Vec::with_capacity(header.len());
        let (mut dropped, mut renamed, mut converted) = (0, 0, 0);
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
            chosen.push((info, name, dtype));
        }
        let (metadata, metadata_changed) = edit.metadata.apply(metadata_of(header));
        let summary = Summary {
            written: chosen.len(),
            dropped,
            renamed,
            converted,
            metadata: metadata_changed,
            file_len: 0,
        };
        let file_len = write(
            file,
            header.data_start(),
            &chosen,
            metadata,
            &edit.output,
            quiet,
        )?;
        Ok(Summary {
            file_len,
            ..summary
        })
    })
    .map_err(|f| format!("{shown}: {}", f.message))?;
    if !quiet {
        // The metadata's counts only when asked to edit it (the line stays
        // as it was for tensor edits).
        let metadata = if edit.metadata.is_empty() {
            String::new()
        } else {
            let m = summary.metadata;
            format!(
                ", {} ({} set, {} dropped)",
                crate::count(m.keys, "metadata key"),
                m.set,
                m.dropped
            )
        };
        crate::emit(&format!(
            "{}: {} ({} dropped, {} renamed, {} converted){metadata}, {} bytes\n",
            edit.output.display(),
            crate::count(summary.written, "tensor"),
            summary.dropped,
            summary.renamed,
            summary.converted,
            summary.file_len
        ));
    }
    Ok(())
}

/// A header's metadata as owned pairs (`None`: no `__metadata__`).
pub fn metadata_of<S>(header: &safetensors_nano::Header<'_, S>) -> Option<Vec<(String, String)>>
where
    S: AsRef<[safetensors_nano::Slot]>,
{
    header.metadata().map(|m| {
        m.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    })
}

/// One output tensor: an input tensor (from the file `usize` of a list),
/// under its output name, as its output dtype.
pub type Chosen<'a> = (safetensors_nano::TensorInfo<'a>, String, Dtype);

/// Plans the output from `chosen` (tensors of the one file `file`), then
/// streams it into `output` through the core's atomic `FileWriter`; returns
/// the output's length. Errors are messages (a `Failure` for the caller).
pub fn write(
    file: &mut crate::source::Input,
    data_start: u64,
    chosen: &[Chosen<'_>],
    metadata: Option<Vec<(String, String)>>,
    output: &Path,
    quiet: bool,
) -> Result<u64, crate::file::Failure> {
    let mut sources = [(file, data_start)];
    write_from(
        &mut sources,
        chosen.iter().map(|c| (0, c)),
        metadata,
        output,
        " (check --rename)",
        quiet,
        None,
    )
}

/// As [`write()`], from several input files: each tensor comes with the index
/// of its file in `sources` (the open file and its data start).
/// `duplicate_hint` follows the message for a name given twice. The
/// progress goes to `shared_bar` when given (several files, one bar), else
/// to a bar of its own.
pub fn write_from<'c, 'a: 'c>(
    sources: &mut [(&mut crate::source::Input, u64)],
    chosen: impl Iterator<Item = (usize, &'c Chosen<'a>)>,
    metadata: Option<Vec<(String, String)>>,
    output: &Path,
    duplicate_hint: &str,
    quiet: bool,
    shared_bar: Option<&indicatif::ProgressBar>,
) -> Result<u64, Failure> {
    let chosen: Vec<_> = chosen.collect();
    let mut entries = entries_of(&chosen)?;
    let mut pairs = metadata_pairs(metadata.as_deref());
    let plan = plan_of(
        &mut entries,
        pairs.as_deref_mut(),
        &chosen,
        output,
        duplicate_hint,
    )?;
    let own_bar;
    let bar = match shared_bar {
        Some(bar) => bar,
        None => {
            own_bar = progress(
                plan.iter().map(|p| p.tensor().source().byte_len()).sum(),
                quiet,
                "writing",
            );
            &own_bar
        }
    };
    let out = fill(&plan, sources, &chosen, output, bar)?;
    check_interrupt(output)?;
    commit(out, output)?;
    if shared_bar.is_none() {
        bar.finish_and_clear();
    }
    Ok(plan.file_len())
}

/// One output file's tensors, each with the index of its source file.
pub type Sourced<'c, 'a> = (usize, &'c Chosen<'a>);

/// A failure that is only a message.
fn fail(message: String) -> Failure {
    Failure {
        kind: None,
        message,
        offset: None,
        tensor: None,
    }
}

/// The writer's entries for `chosen`: their output names and dtypes.
pub fn entries_of<'c, 'a: 'c>(
    chosen: &[Sourced<'c, 'a>],
) -> Result<Vec<Existing<'c, MAX_RANK>>, Failure> {
    let mut entries = Vec::with_capacity(chosen.len());
    for (_, (info, name, dtype)) in chosen {
        let entry = Existing::<MAX_RANK>::with_name(info, name).ok_or_else(|| {
            fail(format!(
                "tensor {name:?} has more than {MAX_RANK} dimensions"
            ))
        })?;
        let entry = if *dtype == info.dtype() {
            entry
        } else {
            entry
                .with_dtype(*dtype)
                .map_err(|e| fail(format!("tensor {name:?}: {e}")))?
        };
        entries.push(entry);
    }
    Ok(entries)
}

/// Metadata pairs borrowed from owned ones, for [`plan_of`].
pub fn metadata_pairs(metadata: Option<&[(String, String)]>) -> Option<Vec<(&str, &str)>> {
    metadata.map(|m| m.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect())
}

/// Plans `output` from `entries` (made from `chosen` by [`entries_of`]);
/// `duplicate_hint` follows the message for a name given twice.
pub fn plan_of<'p, 'c>(
    entries: &'p mut [Existing<'c, MAX_RANK>],
    pairs: Option<&'p mut [(&'p str, &'p str)]>,
    chosen: &[Sourced<'_, '_>],
    output: &Path,
    duplicate_hint: &str,
) -> Result<Plan<'p, Existing<'c, MAX_RANK>>, Failure> {
    let out_shown = output.display();
    let planned = match pairs {
        Some(pairs) => Plan::with_metadata(entries, pairs),
        None => Plan::new(entries),
    };
    planned.map_err(|e| {
        let name = match e.tensor() {
            Some(TensorRef::Index(i)) => chosen.get(i as usize).map(|(_, c)| c.1.clone()),
            _ => None,
        };
        match (e.kind(), name) {
            (ErrorKind::DuplicateTensorName, Some(name)) => fail(format!(
                "two tensors would be named {name:?} in {out_shown}{duplicate_hint}; nothing written"
            )),
            (_, Some(name)) => fail(format!("cannot write {out_shown}: tensor {name:?}: {e}")),
            (_, None) => fail(format!("cannot write {out_shown}: {e}")),
        }
    })
}

/// Streams every tensor of `plan` from `sources` into a temporary file for
/// `output`, advancing `bar`; the writer comes back uncommitted, so the
/// caller decides when `output` is replaced ([`commit`]).
pub fn fill<'p, 'c>(
    plan: &'p Plan<'p, Existing<'c, MAX_RANK>>,
    sources: &mut [(&mut crate::source::Input, u64)],
    chosen: &[Sourced<'_, '_>],
    output: &Path,
    bar: &indicatif::ProgressBar,
) -> Result<FileWriter<'p, Existing<'c, MAX_RANK>>, Failure> {
    let out_shown = output.display();
    // The source file of each tensor, by output name (unique once planned).
    let origin: std::collections::HashMap<&str, usize> = chosen
        .iter()
        .map(|(i, (_, name, _))| (name.as_str(), *i))
        .collect();
    let mut out = plan
        .create_file(output)
        .map_err(|e| fail(format!("cannot write {out_shown}: {e}")))?;
    let mut bufs = copy::Buffers::new();
    for placed in plan.iter() {
        let entry = placed.tensor();
        let (source, spec) = (entry.source(), entry.spec());
        let i = origin.get(spec.name()).copied().unwrap_or(0);
        let Some((file, data_start)) = sources.get_mut(i) else {
            return Err(fail(format!(
                "internal: no source file for {:?}",
                spec.name()
            )));
        };
        copy::copy_tensor(
            file,
            *data_start,
            &source,
            spec.dtype(),
            &mut out,
            &mut bufs,
            bar,
        )
        .map_err(|e| match e {
            CopyError::Read(e) => {
                let mut f = Failure::io("cannot read", &e);
                f.tensor = Some(source.name().to_string());
                f.message = format!("{} (tensor {:?})", f.message, source.name().to_string());
                f
            }
            CopyError::Write(e) if copy::interrupted() => {
                fail(format!("interrupted; {out_shown} not written ({e})"))
            }
            CopyError::Write(e) => fail(format!("cannot write {out_shown}: {e}")),
        })?;
    }
    Ok(out)
}

/// A failure when Ctrl-C or SIGTERM came, checked just before an output
/// replaces its target: a signal during the last chunk then still means
/// nothing written.
pub fn check_interrupt(output: &Path) -> Result<(), Failure> {
    if copy::interrupted() {
        Err(fail(format!(
            "interrupted; {} not written",
            output.display()
        )))
    } else {
        Ok(())
    }
}

/// Makes `out`, filled by [`fill`], the file `output` (W12's rename).
pub fn commit<T: AsSpec>(out: FileWriter<'_, T>, output: &Path) -> Result<(), Failure> {
    out.commit()
        .map_err(|e| fail(format!("cannot write {}: {e}", output.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_after_the_last_chunk_still_means_nothing_written() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.safetensors");
        // One empty tensor: no chunk is copied, so only the check before the
        // rename can see the signal.
        let header = br#"{"e":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}  "#;
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend(header);
        std::fs::write(&input, bytes).unwrap();
        let output = dir.path().join("out.safetensors");
        copy::pretend_interrupted();
        let result = with_header(
            &Source::Path(input),
            &mut Buffers::default(),
            |file, header| {
                let chosen: Vec<Chosen<'_>> = header
                    .iter()
                    .map(|t| (t, t.name().to_string(), t.dtype()))
                    .collect();
                write(file, header.data_start(), &chosen, None, &output, true)
            },
        );
        let message = result.err().map(|f| f.message).unwrap_or_default();
        assert!(message.starts_with("interrupted;"), "{message}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }
}
