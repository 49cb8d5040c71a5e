//! The write pipeline every writing command shares: the tensors chosen
//! from open input files planned by the core (`Plan`: order, offsets, exact
//! length, before any byte is written), streamed into a temporary file by
//! the core's `FileWriter`, and renamed into place only when complete
//! (docs/format.md W12). Only headers are held in memory.

use std::path::Path;

use safetensors_nano::write::{AsSpec, Existing, FileWriter, Plan};
use safetensors_nano::{Dtype, ErrorKind, TensorRef};

use super::copy::{copy_tensor, Buffers as CopyBuffers, CopyError};
use super::signal::interrupted;
use crate::file::Failure;
use crate::source::Input;

/// The most dimensions a tensor may have here (the writer's entries hold
/// their dims inline).
pub const MAX_RANK: usize = 32;

/// One output tensor: an input tensor, under its output name, as its
/// output dtype.
pub type Chosen<'a> = (safetensors_nano::TensorInfo<'a>, String, Dtype);

/// Plans one output file from `chosen` (each tensor with the index of its
/// file in `sources`: the open file and its data start), then streams it
/// into `output` through the core's atomic `FileWriter`, with a progress
/// bar labelled `label`; returns the output's length. `duplicate_hint`
/// follows the message for a name given twice.
pub fn write_file(
    sources: &mut [(&mut Input, u64)],
    chosen: &[Sourced<'_, '_>],
    metadata: Option<&[(String, String)]>,
    output: &Path,
    duplicate_hint: &str,
    quiet: bool,
    label: &str,
) -> Result<u64, Failure> {
    let mut entries = entries_of(chosen)?;
    let mut pairs = metadata_pairs(metadata);
    let plan = plan_of(
        &mut entries,
        pairs.as_deref_mut(),
        chosen,
        output,
        duplicate_hint,
    )?;
    let bar = crate::progress::bytes(
        plan.iter().map(|p| p.tensor().source().byte_len()).sum(),
        quiet,
        label,
    );
    let out = fill(&plan, sources, chosen, output, &bar);
    bar.finish_and_clear();
    let out = out?;
    check_interrupt(output)?;
    commit(out, output)?;
    Ok(plan.file_len())
}

/// One output tensor with the index of its source file.
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
    sources: &mut [(&mut Input, u64)],
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
    let mut bufs = CopyBuffers::new();
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
        copy_tensor(
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
            CopyError::Write(e) if interrupted() => {
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
    if interrupted() {
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
    use crate::file::{with_header, Buffers};
    use crate::source::Source;

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
        super::super::signal::pretend_interrupted();
        let result = with_header(
            &Source::Path(input),
            &mut Buffers::default(),
            |file, header| {
                let chosen: Vec<Chosen<'_>> = header
                    .iter()
                    .map(|t| (t, t.name().to_string(), t.dtype()))
                    .collect();
                let chosen: Vec<Sourced<'_, '_>> = chosen.iter().map(|c| (0, c)).collect();
                let mut sources = [(file, header.data_start())];
                write_file(&mut sources, &chosen, None, &output, "", true, "writing")
            },
        );
        let message = result.err().map(|f| f.message).unwrap_or_default();
        assert!(message.starts_with("interrupted;"), "{message}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }
}
