//! `split IN -o DIR --max-shard-size SIZE`: Hub-style shards
//! (`model-00001-of-0000N.safetensors`, each at most SIZE of tensor data
//! unless one tensor alone is larger) and `model.safetensors.index.json`;
//! every file written atomically by the core (docs/format.md W12), none
//! replaced until all are written.

use std::path::{Path, PathBuf};

use safetensors_nano::write::replace_file;
use serde_json::{json, Map, Value};

use crate::file::{metadata_of, Failure};
use crate::model::{buffers, data_inputs, files_of, open_all};
use crate::output::{about, Written};
use crate::source::Input;
use crate::write::pipeline::{
    check_interrupt, commit, entries_of, fill, metadata_pairs, plan_of, Chosen, Sourced,
};

/// The index's file name, as the Hub's tools name it.
pub const INDEX_NAME: &str = "model.safetensors.index.json";

/// Arguments of `split`.
#[derive(clap::Args, Debug)]
pub struct Split {
    /// The model to split: a safetensors file, or a sharded checkpoint's
    /// `*.index.json` (sharded again); a path, an http(s):// URL or
    /// `hf://org/name[@revision][/file]` (read by ranges, streamed).
    pub input: PathBuf,
    /// The folder for the shards and the index (created if missing).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// The most tensor data per shard: bytes, or with a unit (KB, MB, GB,
    /// TB are powers of 1000; KiB, MiB, GiB, TiB of 1024), e.g. 5GB, 500MB.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_shard_size: u64,
    /// Print one JSON document on one line instead of the status line (JSON
    /// Lines, as every --json): {"ok":true,"output","tensors","shards",
    /// "bytes"}, or {"ok":false,"error":{…}}.
    #[arg(long)]
    pub json: bool,
}

/// `5GB`, `500MB`, `1GiB`, `1048576`: a size in bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let unit = unit.trim().to_ascii_uppercase();
    let scale: u64 = match unit.as_str() {
        "" | "B" => 1,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        "KIB" => 1 << 10,
        "MIB" => 1 << 20,
        "GIB" => 1 << 30,
        "TIB" => 1 << 40,
        _ => {
            return Err(format!(
                "unknown unit {unit:?} (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)"
            ))
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{s:?} is not a size such as 5GB or 500MB"))?;
    let bytes = value * scale as f64;
    if !(bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(format!("{s:?}: the size must be at least 1 byte"));
    }
    Ok(bytes as u64)
}

/// Groups tensor sizes into shards as the Hub's tools do: in order, a new
/// shard when the next tensor would take the current one over `max`; a
/// tensor larger than `max` alone in a shard of its own.
pub fn plan_shards(sizes: impl Iterator<Item = u64>, max: u64) -> Vec<Vec<usize>> {
    let (mut shards, mut current, mut current_size) = (Vec::new(), Vec::new(), 0u64);
    for (i, size) in sizes.enumerate() {
        if size > max {
            shards.push(vec![i]);
            continue;
        }
        if current_size.saturating_add(size) > max && !current.is_empty() {
            shards.push(std::mem::take(&mut current));
            current_size = 0;
        }
        current.push(i);
        current_size += size;
    }
    if !current.is_empty() || shards.is_empty() {
        shards.push(current);
    }
    shards
}

/// The Hub's shard name: `model-00001-of-00003.safetensors`.
pub fn shard_name(i: usize, n: usize) -> String {
    format!("model-{:05}-of-{n:05}.safetensors", i + 1)
}

/// Runs `split`; the message of what went wrong otherwise.
pub fn run(split: &Split, quiet: bool) -> Result<Written, Failure> {
    let dir = &split.output;
    let sources = files_of(&split.input)?;
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::other(format!("cannot create {}: {e}", dir.display())))?;
    let mut bufs = buffers(sources.len());
    let mut files = open_all(&sources, &mut bufs)?;
    let tensors: Vec<(usize, Chosen<'_>)> = files
        .iter()
        .enumerate()
        .flat_map(|(i, (_, h))| {
            h.iter()
                .map(move |t| (i, (t, t.name().to_string(), t.dtype())))
        })
        .collect();
    let groups = plan_shards(
        tensors.iter().map(|(_, t)| t.0.byte_len()),
        split.max_shard_size,
    );
    let metadata = files.first().and_then(|(_, h)| metadata_of(h));
    let data_len: u64 = files.iter().map(|(_, h)| h.data_len()).sum();
    let n = groups.len();
    // One shard: `model.safetensors` and no index, as the Hub's tools write.
    let names: Vec<String> = if n == 1 {
        vec!["model.safetensors".to_owned()]
    } else {
        (0..n).map(|i| shard_name(i, n)).collect()
    };
    let chosen: Vec<Vec<Sourced<'_, '_>>> = groups
        .iter()
        .map(|g| {
            g.iter()
                .filter_map(|&i| tensors.get(i))
                .map(|(f, c)| (*f, c))
                .collect()
        })
        .collect();
    let mut inputs = data_inputs(&mut files);
    let paths: Vec<PathBuf> = names.iter().map(|name| dir.join(name)).collect();
    let bar = crate::progress::bytes(data_len, quiet, "splitting");
    let written = write_shards(&mut inputs, &chosen, metadata.as_deref(), &paths, &bar);
    bar.finish_and_clear();
    written.map_err(about(&split.input))?;
    if n > 1 {
        let weight_map = chosen
            .iter()
            .zip(&names)
            .flat_map(|(c, name)| c.iter().map(move |(_, t)| (t.1.clone(), name.clone())))
            .collect();
        write_index(dir, data_len, weight_map).map_err(Failure::other)?;
    }
    remove_earlier_split(dir, &names);
    let output = if n > 1 {
        dir.join(INDEX_NAME)
    } else {
        dir.join(&names[0])
    };
    Ok(Written {
        line: format!(
            "{}: {} in {}, {data_len} bytes of tensor data\n",
            output.display(),
            crate::output::count(tensors.len(), "tensor"),
            crate::output::count(n, "shard"),
        ),
        doc: json!({
            "ok": true,
            "output": output.display().to_string(),
            "tensors": tensors.len(),
            "shards": n,
            "bytes": data_len,
        }),
    })
}

/// Writes each shard (`chosen[i]` into `paths[i]`). Every shard is written
/// into its temporary file first and none replaces a file until all are
/// complete: a split that fails part way leaves the folder as it was (an
/// earlier split there intact), its temporary files removed as the
/// writers drop.
fn write_shards(
    inputs: &mut [(&mut Input, u64)],
    chosen: &[Vec<Sourced<'_, '_>>],
    metadata: Option<&[(String, String)]>,
    paths: &[PathBuf],
    bar: &indicatif::ProgressBar,
) -> Result<(), Failure> {
    let mut entries = Vec::with_capacity(chosen.len());
    for c in chosen {
        entries.push(entries_of(c)?);
    }
    let mut pairs: Vec<_> = chosen.iter().map(|_| metadata_pairs(metadata)).collect();
    let mut plans = Vec::with_capacity(chosen.len());
    for (((entries, pairs), chosen), path) in entries
        .iter_mut()
        .zip(pairs.iter_mut())
        .zip(chosen)
        .zip(paths)
    {
        plans.push(plan_of(entries, pairs.as_deref_mut(), chosen, path, "")?);
    }
    let writers = plans
        .iter()
        .zip(chosen)
        .zip(paths)
        .map(|((plan, chosen), path)| fill(plan, inputs, chosen, path, bar))
        .collect::<Result<Vec<_>, Failure>>()?;
    // Once the first shard replaces a file, the rest follow.
    if let Some(dir) = paths.first().and_then(|p| p.parent()) {
        check_interrupt(dir)?;
    }
    for (writer, path) in writers.into_iter().zip(paths) {
        commit(writer, path)?;
    }
    Ok(())
}

/// Removes what an earlier split left in `dir` that the new one does not
/// name (`names`, and the index when there is more than one): its shards
/// (`model.safetensors`, `model-NNNNN-of-NNNNN.safetensors`) and its index,
/// as the Hub's tools clean a folder they save into. Called only once the
/// new set is in place; a file that cannot be removed is left.
fn remove_earlier_split(dir: &Path, names: &[String]) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let ours = |file: &str| {
        if file == INDEX_NAME {
            return names.len() > 1;
        }
        names.iter().any(|n| n == file)
    };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(file) = file.to_str() else {
            continue;
        };
        if is_split_file(file) && !ours(file) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether `file` is a name `split` writes: `model.safetensors`,
/// `model-00001-of-00003.safetensors` (five digits each) or the index.
fn is_split_file(file: &str) -> bool {
    if file == INDEX_NAME || file == "model.safetensors" {
        return true;
    }
    let five = |s: &str| s.len() == 5 && s.bytes().all(|b| b.is_ascii_digit());
    file.strip_prefix("model-")
        .and_then(|r| r.strip_suffix(".safetensors"))
        .and_then(|r| r.split_once("-of-"))
        .is_some_and(|(i, n)| five(i) && five(n))
}

/// Writes `model.safetensors.index.json` as the Hub's tools do: keys
/// sorted, two-space indent, a final newline.
fn write_index(
    dir: &Path,
    total_size: u64,
    mut weight_map: Vec<(String, String)>,
) -> Result<(), String> {
    weight_map.sort();
    let map: Map<String, Value> = weight_map
        .into_iter()
        .map(|(t, s)| (t, Value::String(s)))
        .collect();
    let index = json!({"metadata": {"total_size": total_size}, "weight_map": map});
    let mut text = serde_json::to_string_pretty(&index).map_err(|e| e.to_string())?;
    text.push('\n');
    let path = dir.join(INDEX_NAME);
    replace_file(&path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_names_split_writes_count_as_an_earlier_split() {
        for name in [
            INDEX_NAME,
            "model.safetensors",
            "model-00002-of-00003.safetensors",
        ] {
            assert!(is_split_file(name), "{name}");
        }
        for name in [
            "model-2-of-3.safetensors",
            "model-00002-of-00003.safetensors.bak",
            "other.safetensors",
            "model-0000a-of-00003.safetensors",
            "config.json",
        ] {
            assert!(!is_split_file(name), "{name}");
        }
    }

    #[test]
    fn sizes_parse_with_decimal_and_binary_units() {
        assert_eq!(parse_size("5GB"), Ok(5_000_000_000));
        assert_eq!(parse_size("500MB"), Ok(500_000_000));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("1.5kb"), Ok(1500));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("5XB").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("GB").is_err());
    }

    #[test]
    fn shards_fill_in_order_and_big_tensors_go_alone() {
        assert_eq!(plan_shards([4, 4, 4].into_iter(), 8), [vec![0, 1], vec![2]]);
        assert_eq!(
            plan_shards([3, 20, 3, 3].into_iter(), 8),
            [vec![1], vec![0, 2], vec![3]]
        );
        assert_eq!(plan_shards([].into_iter(), 8), [Vec::<usize>::new()]);
    }
}
