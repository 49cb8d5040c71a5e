//! `inspect`: a file's header as a table or one line of JSON
//! (`{"ok":true,"header_size","metadata","tensors":[…]}`, or
//! `{"ok":false,"error":{kind,message,offset,tensor}}`), reading the header
//! with `read_header` and streaming the data for the hashes.

use std::fmt::Write as _;
use std::path::Path;

use safetensors_nano::{Header, Slot};
use serde_json::{json, Value};

use crate::file::{with_header, Buffers, Failure};
use crate::output::{emit, emit_json, error_json};
use crate::source::Source;
use crate::{hash, sharded};

mod summary;
use summary::Summary;

/// Runs `inspect`; `false` when the file was rejected (exit 1). `hash`:
/// whether to hash the tensors; by default (`None`) a local file's are, a
/// remote file's are not (that would download it).
pub fn run(path: &Path, json: bool, hash: Option<bool>, quiet: bool) -> bool {
    let shown = path.display().to_string();
    let source = match Source::from_arg(path) {
        Ok(source) => source,
        Err(f) => return rejected(&f, &shown, json),
    };
    let hash = hash.unwrap_or(matches!(source, Source::Path(_)));
    if source.is_index() {
        return run_index(&source, &shown, json, hash, quiet);
    }
    let result = with_header(&source, &mut Buffers::default(), |file, header| {
        let digests = if hash {
            Some(hash::tensors(file, header, quiet)?)
        } else {
            None
        };
        if json {
            emit_json(&ok_json(header, digests.as_deref()));
        } else {
            emit(&table(header, &shown, digests.as_deref()));
        }
        Ok(())
    });
    match result {
        Ok(()) => true,
        Err(f) => rejected(&f, &shown, json),
    }
}

/// Reports `f` (on stdout with `--json`, else on stderr); `false`.
fn rejected(f: &Failure, shown: &str, json: bool) -> bool {
    if json {
        emit_json(&error_json(f));
    } else {
        eprintln!("{shown}: {}", f.message);
    }
    false
}

fn ok_json(header: &Header<'_, &mut [Slot]>, digests: Option<&[String]>) -> Value {
    let metadata = header.metadata().map(|m| {
        m.iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect::<serde_json::Map<_, _>>()
    });
    let tensors: Vec<Value> = header
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let (b, e) = t.data_offsets();
            let mut v = json!({
                "name": t.name().to_string(),
                "dtype": t.dtype().name(),
                "shape": t.shape().iter().collect::<Vec<_>>(),
                "data_offsets": [b, e],
            });
            if let Some(d) = digests {
                v["sha256"] = Value::String(d[i].clone());
            }
            v
        })
        .collect();
    json!({
        "ok": true,
        "header_size": header.header_len(),
        "metadata": metadata,
        "tensors": tensors,
        "summary": file_summary(header).json(),
    })
}

/// The summary of one file's tensors.
fn file_summary(header: &Header<'_, &mut [Slot]>) -> Summary {
    let mut summary = Summary::default();
    for t in header.iter() {
        summary.add(t.dtype().name(), t.element_count(), t.byte_len());
    }
    summary
}

/// The summary of a sharded checkpoint's tensors.
fn index_summary(s: &sharded::Sharded) -> Summary {
    let mut summary = Summary::default();
    for r in &s.rows {
        let elements = r.shape.iter().fold(1u64, |n, &d| n.saturating_mul(d));
        summary.add(
            r.dtype,
            elements,
            r.data_offsets.1.saturating_sub(r.data_offsets.0),
        );
    }
    summary
}

/// The table, as one string (written at once: see [`emit`]).
fn table(header: &Header<'_, &mut [Slot]>, path: &str, digests: Option<&[String]>) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = writeln!(
        out,
        "{path}: {} tensors, header {} bytes, data {} bytes",
        header.len(),
        header.header_len(),
        header.data_len()
    );
    if let Some(m) = header.metadata() {
        for (k, v) in m.iter() {
            let _ = writeln!(out, "  metadata {k} = {v}");
        }
    }
    let width = header
        .iter()
        .map(|t| t.name().decoded_len())
        .max()
        .unwrap_or(4)
        .clamp(4, 60);
    let _ = writeln!(
        out,
        "  {:<width$}  {:<11}  {:<20}  {:>24}{}",
        "name",
        "dtype",
        "shape",
        "data_offsets",
        if digests.is_some() { "  sha256" } else { "" }
    );
    for (i, t) in header.iter().enumerate() {
        let shape = format!("{:?}", t.shape());
        let (b, e) = t.data_offsets();
        let digest = digests.map_or(String::new(), |d| format!("  {}", &d[i][..16]));
        let _ = writeln!(
            out,
            "  {:<width$}  {:<11}  {:<20}  {:>24}{digest}",
            t.name().to_string(),
            t.dtype().name(),
            shape,
            format!("[{b}, {e}]")
        );
    }
    out.push_str(&file_summary(header).text());
    out
}

/// `inspect` of a sharded checkpoint (`*.index.json`): its tensors as one
/// table (with each one's shard), or one JSON document; an index that
/// disagrees with its shards is an error (`IndexMismatch`).
fn run_index(source: &Source, shown: &str, json: bool, hash: bool, quiet: bool) -> bool {
    let result = sharded::load(source, hash, quiet).and_then(|s| {
        if s.problems.is_empty() {
            Ok(s)
        } else {
            let mut f = Failure::other(s.problems.join("; "));
            f.kind = Some("IndexMismatch");
            Err(f)
        }
    });
    match result {
        Ok(s) if json => {
            emit_json(&index_json(&s));
            true
        }
        Ok(s) => {
            emit(&index_table(&s, shown));
            true
        }
        Err(f) => rejected(&f, shown, json),
    }
}

fn index_json(s: &sharded::Sharded) -> Value {
    let metadata = s.metadata.as_ref().map(|m| {
        m.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect::<serde_json::Map<_, _>>()
    });
    let tensors: Vec<Value> = s
        .rows
        .iter()
        .map(|r| {
            let mut v = json!({
                "name": r.name,
                "dtype": r.dtype,
                "shape": r.shape,
                "data_offsets": [r.data_offsets.0, r.data_offsets.1],
                "shard": r.shard,
            });
            if let Some(d) = &r.sha256 {
                v["sha256"] = Value::String(d.clone());
            }
            v
        })
        .collect();
    json!({
        "ok": true,
        "total_size": s.index.total_size(),
        "shards": s.index.shards(),
        "metadata": metadata,
        "tensors": tensors,
        "summary": index_summary(s).json(),
    })
}

fn index_table(s: &sharded::Sharded, path: &str) -> String {
    let mut out = String::new();
    let shards = s.index.shards();
    let _ = writeln!(
        out,
        "{path}: {} in {}, data {} bytes",
        crate::output::count(s.rows.len(), "tensor"),
        crate::output::count(shards.len(), "shard"),
        s.data_len
    );
    if let Some(m) = &s.metadata {
        for (k, v) in m {
            let _ = writeln!(out, "  metadata {k} = {v}");
        }
    }
    let width = s
        .rows
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 60);
    let shard_width = shards
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let hashed = s.rows.iter().any(|r| r.sha256.is_some());
    let _ = writeln!(
        out,
        "  {:<width$}  {:<11}  {:<20}  {:<shard_width$}  {:>24}{}",
        "name",
        "dtype",
        "shape",
        "shard",
        "data_offsets",
        if hashed { "  sha256" } else { "" }
    );
    for r in &s.rows {
        let digest = r
            .sha256
            .as_ref()
            .map_or(String::new(), |d| format!("  {}", &d[..16]));
        let _ = writeln!(
            out,
            "  {:<width$}  {:<11}  {:<20}  {:<shard_width$}  {:>24}{digest}",
            r.name,
            r.dtype,
            format!("{:?}", r.shape),
            r.shard,
            format!("[{}, {}]", r.data_offsets.0, r.data_offsets.1)
        );
    }
    out.push_str(&index_summary(s).text());
    out
}
