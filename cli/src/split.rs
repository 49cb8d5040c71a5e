//! `split IN -o DIR --max-shard-size SIZE`: Hub-style shards
//! (`model-00001-of-0000N.safetensors`, each at most SIZE of tensor data
//! unless one tensor alone is larger) and `model.safetensors.index.json`;
//! every file written atomically by the core (docs/format.md W12).

use std::path::{Path, PathBuf};

use safetensors_nano::write::replace_file;
use serde_json::{json, Map, Value};

use crate::edit::{metadata_of, write_from, Chosen};
use crate::file::{open, Buffers, Failure};
use crate::hash::progress;

/// The index's file name, as the Hub's tools name it.
pub const INDEX_NAME: &str = "model.safetensors.index.json";

/// Arguments of `split`.
#[derive(clap::Args, Debug)]
pub struct Split {
    /// The safetensors file to split.
    pub input: PathBuf,
    /// The folder for the shards and the index (created if missing).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// The most tensor data per shard: bytes, or with a unit (KB, MB, GB,
    /// TB are powers of 1000; KiB, MiB, GiB, TiB of 1024), e.g. 5GB, 500MB.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_shard_size: u64,
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
pub fn run(split: &Split, quiet: bool) -> Result<(), String> {
    let shown = split.input.display();
    let dir = &split.output;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut bufs = Buffers::default();
    let (mut file, header) =
        open(&split.input, &mut bufs).map_err(|f| format!("{shown}: {}", f.message))?;
    let tensors: Vec<Chosen<'_>> = header
        .iter()
        .map(|t| (t, t.name().to_string(), t.dtype()))
        .collect();
    let groups = plan_shards(tensors.iter().map(|t| t.0.byte_len()), split.max_shard_size);
    let metadata = metadata_of(&header);
    let data_start = header.data_start();
    let bar = progress(header.data_len(), quiet, "splitting");
    let n = groups.len();
    // One shard: `model.safetensors` and no index, as the Hub's tools write.
    let names: Vec<String> = if n == 1 {
        vec!["model.safetensors".to_owned()]
    } else {
        (0..n).map(|i| shard_name(i, n)).collect()
    };
    let mut weight_map = Vec::with_capacity(tensors.len());
    // A split that fails part way removes the shards it wrote: a set of
    // shards without its index is not a checkpoint.
    let mut written = Vec::with_capacity(n);
    let mut result = Ok(());
    for (group, name) in groups.iter().zip(&names) {
        let mut sources = [(&mut file, data_start)];
        let chosen = group.iter().filter_map(|&i| tensors.get(i)).map(|c| (0, c));
        let path = dir.join(name);
        result = write_from(
            &mut sources,
            chosen,
            metadata.clone(),
            &path,
            "",
            true,
            Some(&bar),
        )
        .map(|_| ())
        .map_err(|f: Failure| format!("{shown}: {}", f.message));
        if result.is_err() {
            break;
        }
        written.push(path);
        for &i in group {
            if let Some(t) = tensors.get(i) {
                weight_map.push((t.1.clone(), name.clone()));
            }
        }
    }
    bar.finish_and_clear();
    if result.is_ok() && n > 1 {
        result = write_index(dir, header.data_len(), weight_map);
    }
    if let Err(message) = result {
        for path in &written {
            let _ = std::fs::remove_file(path);
        }
        return Err(message);
    }
    if !quiet {
        crate::emit(&format!(
            "{}: {} in {}, {} bytes of tensor data\n",
            if n > 1 {
                dir.join(INDEX_NAME)
            } else {
                dir.join(&names[0])
            }
            .display(),
            crate::count(tensors.len(), "tensor"),
            crate::count(n, "shard"),
            header.data_len()
        ));
    }
    Ok(())
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
