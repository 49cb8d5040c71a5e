//! `verify`: each file's header and exact length, and with `--hash` every
//! tensor's SHA-256 (streamed); for a `*.index.json`, every shard and the
//! index against them. Text (problems on stderr) or one JSON document.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::file::{with_header, Buffers, Failure};
use crate::output::{emit, emit_json};
use crate::source::Source;
use crate::{hash, sharded};

/// What `verify` found for one file or index.
struct Report {
    /// Problems, one line each (empty: valid).
    problems: Vec<String>,
    tensors: usize,
    /// File length, or for an index the tensor data's total.
    bytes: u64,
    /// For an index, its shard count.
    shards: Option<usize>,
    /// `(tensor, sha256)` with `--hash`.
    digests: Vec<(String, String)>,
    /// For an index: its findings (`checkShards`' shape) and the shard
    /// files their positions count.
    findings: Option<(Vec<Value>, Vec<String>)>,
}

/// Runs `verify` over `files`; `false` if any was rejected (exit 1).
pub fn run(files: &[PathBuf], hash: bool, json: bool, quiet: bool) -> bool {
    let mut bufs = Buffers::default();
    let mut all_ok = true;
    for path in files {
        let report = match Source::from_arg(path) {
            Ok(source) if source.is_index() => verify_index(&source, hash, quiet),
            Ok(source) => verify_file(&source, &mut bufs, hash, quiet),
            Err(f) => failed(f),
        };
        all_ok &= report.problems.is_empty();
        if json {
            emit_json(&to_json(path, &report));
        } else {
            print(path, &report, quiet);
        }
    }
    all_ok
}

fn print(path: &Path, r: &Report, quiet: bool) {
    let shown = path.display();
    for p in &r.problems {
        eprintln!("{shown}: {p}");
    }
    if !r.problems.is_empty() || quiet {
        return;
    }
    let mut out = match r.shards {
        Some(shards) => format!(
            "{shown}: ok, {} in {}, {} bytes of tensor data\n",
            crate::output::count(r.tensors, "tensor"),
            crate::output::count(shards, "shard"),
            r.bytes
        ),
        None => format!("{shown}: ok, {} tensors, {} bytes\n", r.tensors, r.bytes),
    };
    for (name, d) in &r.digests {
        out += &format!("  {d}  {name}\n");
    }
    emit(&out);
}

fn to_json(path: &Path, r: &Report) -> Value {
    let mut v = json!({
        "file": path.display().to_string(),
        "ok": r.problems.is_empty(),
        "problems": r.problems,
    });
    if let Some((findings, shards)) = &r.findings {
        v["findings"] = findings.clone().into();
        v["checkedShards"] = shards.clone().into();
    }
    if r.problems.is_empty() {
        v["tensors"] = r.tensors.into();
        v["bytes"] = r.bytes.into();
        if let Some(shards) = r.shards {
            v["shards"] = shards.into();
        }
        if !r.digests.is_empty() {
            let map: Map<String, Value> = r
                .digests
                .iter()
                .map(|(n, d)| (n.clone(), Value::String(d.clone())))
                .collect();
            v["sha256"] = Value::Object(map);
        }
    }
    v
}

fn verify_file(source: &Source, bufs: &mut Buffers, hash: bool, quiet: bool) -> Report {
    let result = with_header(source, bufs, |file, header| {
        let digests = if hash {
            hash::tensors(file, header, quiet)?
        } else {
            Vec::new()
        };
        Ok(Report {
            problems: Vec::new(),
            tensors: header.len(),
            bytes: header.file_len(),
            shards: None,
            findings: None,
            digests: header
                .iter()
                .map(|t| t.name().to_string())
                .zip(digests)
                .collect(),
        })
    });
    result.unwrap_or_else(failed)
}

/// The report of a file that could not be verified.
fn failed(f: Failure) -> Report {
    let problem = match f.tensor.filter(|_| f.kind.is_none()) {
        // An I/O error while hashing: say which tensor.
        Some(t) => format!("{} (tensor {t:?})", f.message),
        None => f.message,
    };
    Report {
        problems: vec![problem],
        tensors: 0,
        bytes: 0,
        shards: None,
        digests: Vec::new(),
        findings: None,
    }
}

/// A sharded checkpoint: every shard validated as a file, and the index
/// checked against them (every entry in its shard, no tensor missing or
/// extra, `total_size`).
fn verify_index(source: &Source, hash: bool, quiet: bool) -> Report {
    match sharded::load(source, hash, quiet) {
        Err(f) => Report {
            problems: vec![f.message],
            tensors: 0,
            bytes: 0,
            shards: None,
            digests: Vec::new(),
            findings: None,
        },
        Ok(s) => Report {
            tensors: s.rows.len(),
            bytes: s.data_len,
            shards: Some(s.shards.len()),
            digests: s
                .rows
                .into_iter()
                .filter_map(|r| r.sha256.map(|d| (r.name, d)))
                .collect(),
            problems: s.problems,
            findings: Some((
                s.findings.iter().map(sharded::finding_json).collect(),
                s.checked,
            )),
        },
    }
}
