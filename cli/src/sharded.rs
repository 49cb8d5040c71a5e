//! A sharded checkpoint (`*.index.json` and its shard files) seen as one:
//! each shard read and validated as a file, and the index checked against
//! them by the core (`ShardIndex`, `IndexCheck`).

use std::io::Read;
use std::path::{Path, PathBuf};

use safetensors_nano::{IndexError, ShardIndex};

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
        f.kind = Some(match e {
            IndexError::TooLarge { .. } | IndexError::TooManyEntries { .. } => "IndexTooLarge",
            _ => "IndexInvalid",
        });
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
    let mut shard_paths = Vec::new();
    // The shards that could not be read, by their names in the index.
    let mut unreadable: Vec<String> = Vec::new();
    for shard in index.shards() {
        let shard_path = dir.join(shard);
        let result = with_header(&shard_path, &mut bufs, |file, header| {
            check.shard(shard, header);
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
                    shard: shard.to_owned(),
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
            unreadable.push(shard.to_owned());
        }
        shard_paths.push(shard_path);
    }
    // A shard that could not be read is reported as such, not as all its
    // tensors missing.
    for p in check.finish() {
        let missing_from_bad = matches!(&p, safetensors_nano::IndexProblem::Missing { shard, .. }
            if unreadable.iter().any(|u| u == shard));
        let size_after_bad =
            !unreadable.is_empty() && matches!(p, safetensors_nano::IndexProblem::TotalSize { .. });
        if !missing_from_bad && !size_after_bad {
            problems.push(p.to_string());
        }
    }
    Ok(Sharded {
        index,
        shard_paths,
        metadata,
        rows,
        data_len,
        problems,
    })
}
