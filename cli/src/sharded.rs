//! A sharded checkpoint (`*.index.json` and its shard files) seen as one:
//! each shard read and validated as a file, and the index checked against
//! them by the core (`ShardIndex`, `IndexCheck`).

use std::path::Path;

use safetensors_nano::{IndexError, ShardIndex};

use crate::edit::metadata_of;
use crate::file::{opened, with_opened, Buffers, Failure};
use crate::hash;
use crate::source::Source;

/// Whether `path` names an index (`….index.json`), not a safetensors file.
pub fn is_index(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".index.json"))
}

/// The most bytes of an index file read (real ones are well under 1 MiB).
pub const INDEX_LIMIT: u64 = 256 << 20;

/// Reads and parses the index at `source`.
pub fn read_index(source: &Source) -> Result<ShardIndex, Failure> {
    let bytes = source.read_small(INDEX_LIMIT)?;
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
    pub shards: Vec<Source>,
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

/// Reads the index at `source` and every shard's header (and, with `hash`,
/// every tensor's bytes), checking the index against them. A remote
/// index's shards are counted on a progress bar.
pub fn load(source: &Source, hash: bool, quiet: bool) -> Result<Sharded, Failure> {
    let index = read_index(source)?;
    // (Hashing shows its own bar, over bytes.)
    let bar = match source {
        #[cfg(feature = "http")]
        Source::Url(_) if !hash => {
            hash::count_progress(index.shards().len() as u64, quiet, "shards")
        }
        _ => indicatif::ProgressBar::hidden(),
    };
    let sources = index
        .shards()
        .iter()
        .map(|shard| source.shard(shard))
        .collect::<Result<Vec<_>, _>>()?;
    // Remote headers are fetched several at a time, each a round trip or
    // two; files on disk are opened one by one as they are read.
    let mut prefetched = match source {
        #[cfg(feature = "http")]
        Source::Url(_) if !hash => open_remote_shards(&sources, &bar),
        _ => Vec::new(),
    }
    .into_iter();
    let mut bufs = Buffers::default();
    let mut check = index.check();
    let (mut rows, mut problems, mut metadata, mut data_len) = (Vec::new(), Vec::new(), None, 0);
    let mut shards = Vec::new();
    // The shards that could not be read, by their names in the index.
    let mut unreadable: Vec<String> = Vec::new();
    for (shard, shard_source) in index.shards().iter().zip(sources) {
        let result = prefetched.next().unwrap_or_else(|| opened(&shard_source));
        let result = result.and_then(|file| {
            with_opened(file, &mut bufs, |file, header| {
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
                        shard: shard.to_string(),
                        name: t.name().to_string(),
                        dtype: t.dtype().name(),
                        shape: t.shape().iter().collect(),
                        data_offsets: t.data_offsets(),
                        sha256: digests.as_ref().and_then(|d| d.get(i).cloned()),
                    });
                }
                Ok(())
            })
        });
        if let Err(f) = result {
            problems.push(format!("{}: {}", shard_source.shown(), f.message));
            unreadable.push(shard.to_string());
        }
        shards.push(shard_source);
        if prefetched.len() == 0 {
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
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
        shards,
        metadata,
        rows,
        data_len,
        problems,
    })
}

/// Remote shards opened at once.
#[cfg(feature = "http")]
const CONCURRENT: usize = 8;

/// Opens remote shards with their headers ready, [`CONCURRENT`] at a time,
/// in order; each one's connection released, not held while the others
/// are read.
#[cfg(feature = "http")]
fn open_remote_shards(
    sources: &[Source],
    bar: &indicatif::ProgressBar,
) -> Vec<Result<(crate::source::Input, u64), Failure>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<_, Failure>>>> =
        Mutex::new(sources.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..CONCURRENT.min(sources.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(source) = sources.get(i) else { break };
                let result = opened(source).map(|(mut file, len)| {
                    file.release_connection();
                    (file, len)
                });
                bar.inc(1);
                if let Ok(mut results) = results.lock() {
                    results[i] = Some(result);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(Failure::other("not opened".into()))))
        .collect()
}
