//! A sharded checkpoint (`*.index.json` and its shard files) seen as one:
//! each shard read and validated as a file, and the index checked against
//! them by the core (`ShardIndex`, `IndexCheck`): the same findings as the
//! npm package's `checkShards` for the same files.

use std::path::Path;

use safetensors_nano::{FindingValue, IndexError, IndexLimits, IndexProblem, ShardIndex};

use crate::file::{metadata_of, opened, with_opened, Buffers, Failure};
use crate::hash;
use crate::source::Source;

/// How large an index is read: the core's defaults, as in the npm package.
pub const INDEX_LIMITS: IndexLimits = IndexLimits::DEFAULT;

/// Reads and parses the index at `source`, within [`INDEX_LIMITS`].
pub fn read_index(source: &Source) -> Result<ShardIndex, Failure> {
    let bytes = source.read_prefix(INDEX_LIMITS.bytes as u64)?;
    ShardIndex::parse_with(&bytes, INDEX_LIMITS).map_err(|e| {
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

/// The names of the shards to read: the index's, and on disk the files
/// beside it named like its shards but not in it (`unnamedShard`), by file
/// name (the order the package's `checkShards` is given them in the
/// comparison test). A remote folder cannot be listed: its index's alone.
fn shard_names(source: &Source, index: &ShardIndex) -> Vec<String> {
    let mut names: Vec<String> = index.shards().iter().map(|s| s.to_string()).collect();
    if let Some(path) = source.path() {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        names.extend(shard_like_files(dir, path));
    }
    names.sort();
    names.dedup();
    names
}

/// Whether `f`, the failure to open `source`, says that the shard does not
/// exist: the finding `missingShard`, not an unreadable file.
fn is_missing(source: &Source, f: &Failure) -> bool {
    match source.path() {
        Some(p) => {
            matches!(std::fs::metadata(p), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
        }
        None => {
            f.kind == Some("HubNotFound")
                || (f.kind == Some("Http") && f.message.contains("HTTP 404"))
        }
    }
}

/// Reads the index at `source` and every shard's header (and, with `hash`,
/// every tensor's bytes), checking the index against them. A remote
/// index's shards are counted on a progress bar.
pub fn load(source: &Source, hash: bool, quiet: bool) -> Result<Sharded, Failure> {
    let index = read_index(source)?;
    let names = shard_names(source, &index);
    // (Hashing shows its own bar, over bytes.)
    let bar = match source {
        #[cfg(feature = "http")]
        Source::Url(_) if !hash => crate::progress::things(names.len() as u64, quiet, "shards"),
        _ => indicatif::ProgressBar::hidden(),
    };
    let sources = names
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
    let named = index.shards();
    let mut bufs = Buffers::default();
    let mut check = index.check();
    let (mut rows, mut problems, mut metadata, mut data_len) = (Vec::new(), Vec::new(), None, 0);
    let (mut shards, mut checked) = (Vec::new(), Vec::new());
    for (shard, shard_source) in names.iter().zip(sources) {
        let opening = prefetched.next().unwrap_or_else(|| opened(&shard_source));
        if prefetched.len() == 0 {
            bar.inc(1);
        }
        if matches!(&opening, Err(f) if is_missing(&shard_source, f)) {
            continue;
        }
        let is_named = named.contains(&shard.as_str());
        let mut read = false;
        let result = opening.and_then(|file| {
            with_opened(file, &mut bufs, |file, header| {
                check.shard(shard, header);
                read = true;
                if !is_named {
                    return Ok(());
                }
                rows.extend(rows_of(shard, file, header, hash, quiet)?);
                if metadata.is_none() {
                    metadata = metadata_of(header);
                }
                data_len += header.data_len();
                Ok(())
            })
        });
        if let Err(f) = result {
            problems.push(format!("{}: {}", shard_source.shown(), f.message));
            if !read {
                check.unread(shard);
            }
        }
        if is_named {
            shards.push(shard_source);
        }
        checked.push(shard.clone());
    }
    bar.finish_and_clear();
    let findings = check.finish();
    problems.extend(findings.iter().map(|p| p.message(&checked).to_string()));
    Ok(Sharded {
        index,
        shards,
        metadata,
        rows,
        data_len,
        problems,
        findings,
        checked,
    })
}

/// The rows of one shard's tensors, hashed when asked.
fn rows_of(
    shard: &str,
    file: &mut crate::source::Input,
    header: &safetensors_nano::Header<'_, &mut [safetensors_nano::Slot]>,
    hash: bool,
    quiet: bool,
) -> Result<Vec<Row>, Failure> {
    let digests = if hash {
        Some(hash::tensors(file, header, quiet)?)
    } else {
        None
    };
    Ok(header
        .iter()
        .enumerate()
        .map(|(i, t)| Row {
            shard: shard.to_owned(),
            name: t.name().to_string(),
            dtype: t.dtype().name(),
            shape: t.shape().iter().collect(),
            data_offsets: t.data_offsets(),
            sha256: digests.as_ref().and_then(|d| d.get(i).cloned()),
        })
        .collect())
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
