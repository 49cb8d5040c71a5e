//! A sharded checkpoint (`*.index.json` and its shard files) seen as one:
//! each shard read and validated as a file, and the index checked against
//! them by the core (`ShardIndex`, `IndexCheck`): the same findings as the
//! npm package's `checkShards` for the same files.

use std::io::Read;
use std::path::{Path, PathBuf};

use safetensors_nano::{FindingValue, IndexError, IndexProblem, ShardIndex};

use crate::edit::metadata_of;
use crate::file::{with_header, Buffers, Failure};
use crate::hash;

/// Whether `path` names an index (`….index.json`), not a safetensors file.
pub fn is_index(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".index.json"))
}

/// The most bytes of an index file read (real ones are well under 1 MiB).
const INDEX_LIMIT: u64 = 256 << 20;

/// Reads and parses the index at `path`.
pub fn read_index(path: &Path) -> Result<ShardIndex, Failure> {
    let file = std::fs::File::open(path).map_err(|e| Failure::io("cannot open", &e))?;
    let mut bytes = Vec::new();
    file.take(INDEX_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::io("cannot read", &e))?;
    if bytes.len() as u64 > INDEX_LIMIT {
        return Err(Failure::other(format!(
            "index is over {} MiB: not an index file",
            INDEX_LIMIT >> 20
        )));
    }
    ShardIndex::parse(&bytes).map_err(|e| {
        let mut f = Failure::other(e.to_string());
        f.kind = Some("IndexInvalid");
        if let IndexError::Json(j) = &e {
            f.offset = j.offset();
        }
        f
    })
}

/// One tensor of a sharded checkpoint.
pub struct Row {
    /// The shard file (as the index names it).
    pub shard: String,
    /// Tensor name.
    pub name: String,
    /// Dtype name.
    pub dtype: &'static str,
    /// Shape.
    pub shape: Vec<u64>,
    /// Offsets in its shard's data buffer.
    pub data_offsets: (u64, u64),
    /// SHA-256 of its bytes, when hashed.
    pub sha256: Option<String>,
}

/// A sharded checkpoint as one.
pub struct Sharded {
    /// The index.
    pub index: ShardIndex,
    /// The shard files, beside the index.
    pub shard_paths: Vec<PathBuf>,
    /// The first shard's metadata.
    pub metadata: Option<Vec<(String, String)>>,
    /// Every tensor, shard by shard, each in data order.
    pub rows: Vec<Row>,
    /// Sum of the tensors' byte sizes.
    pub data_len: u64,
    /// What is wrong: a shard that is not a valid file, or a disagreement
    /// between the index and the shards. Empty when all is well.
    pub problems: Vec<String>,
    /// The disagreements between the index and the shards (also in
    /// `problems`, worded), as `verify --json` lists them.
    pub findings: Vec<IndexProblem>,
    /// The shards the findings' positions count: the index's and the
    /// unnamed ones beside it, by file name, without the missing ones.
    pub checked: Vec<String>,
}

/// The shard files beside the index at `path` that are named like its
/// shards (`model-00003-of-00004.safetensors` for
/// `model.safetensors.index.json`), by file name.
fn shard_like_files(dir: &Path, path: &Path) -> Vec<String> {
    let Some(stem) = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".safetensors.index.json"))
    else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let like_shard = |name: &str| {
        let Some(rest) = name
            .strip_prefix(stem)
            .and_then(|r| r.strip_prefix('-'))
            .and_then(|r| r.strip_suffix(".safetensors"))
        else {
            return false;
        };
        rest.split_once("-of-").is_some_and(|(i, n)| {
            [i, n]
                .iter()
                .all(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| like_shard(n))
        .collect();
    names.sort();
    names
}

/// A finding as JSON: `{"kind": …, its fields…}`, as the npm package's
/// `checkShards` gives it.
pub fn finding_json(p: &IndexProblem) -> serde_json::Value {
    let mut object = serde_json::Map::new();
    object.insert("kind".into(), p.info().name.into());
    for (field, value) in p.info().fields.iter().zip(p.values()) {
        let value = match value {
            FindingValue::Text(t) => t.into(),
            FindingValue::Number(n) => n.into(),
        };
        object.insert(field.name.into(), value);
    }
    serde_json::Value::Object(object)
}

/// Reads the index at `path` and every shard's header (and, with `hash`,
/// every tensor's bytes), checking the index against them.
pub fn load(path: &Path, hash: bool, quiet: bool) -> Result<Sharded, Failure> {
    let index = read_index(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut bufs = Buffers::default();
    let mut check = index.check();
    let (mut rows, mut problems, mut metadata, mut data_len) = (Vec::new(), Vec::new(), None, 0);
    let named = index.shards();
    let shard_paths: Vec<PathBuf> = named.iter().map(|s| dir.join(s)).collect();
    // The index's shards and the unnamed ones beside it, by file name (the
    // order the package's checkShards is given them in the comparison test).
    let mut shards: Vec<String> = named.iter().map(|s| s.to_string()).collect();
    shards.extend(shard_like_files(&dir, path));
    shards.sort();
    shards.dedup();
    let mut checked = Vec::new();
    for shard in shards {
        let shard_path = dir.join(&shard);
        if matches!(std::fs::metadata(&shard_path), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
        {
            continue;
        }
        let is_named = named.contains(&shard.as_str());
        let mut read = false;
        let result = with_header(&shard_path, &mut bufs, |file, header| {
            check.shard(&shard, header);
            read = true;
            if !is_named {
                return Ok(());
            }
            let digests = if hash {
                Some(hash::tensors(file, header, quiet)?)
            } else {
                None
            };
            if metadata.is_none() {
                metadata = metadata_of(header);
            }
            data_len += header.data_len();
            for (i, t) in header.iter().enumerate() {
                rows.push(Row {
                    shard: shard.clone(),
                    name: t.name().to_string(),
                    dtype: t.dtype().name(),
                    shape: t.shape().iter().collect(),
                    data_offsets: t.data_offsets(),
                    sha256: digests.as_ref().and_then(|d| d.get(i).cloned()),
                });
            }
            Ok(())
        });
        if let Err(f) = result {
            problems.push(format!("{}: {}", shard_path.display(), f.message));
            if !read {
                check.unread(&shard);
            }
        }
        checked.push(shard);
    }
    let findings = check.finish();
    problems.extend(findings.iter().map(|p| p.message(&checked).to_string()));
    Ok(Sharded {
        index,
        shard_paths,
        metadata,
        rows,
        data_len,
        problems,
        findings,
        checked,
    })
}
