//! `inspect`: the `inspect` example's table and `--json` contract
//! (core/examples/inspect.rs), reading the header with `read_header` and
//! streaming the data for the hashes.

use std::fmt::Write as _;
use std::path::Path;

use safetensors_nano::{Header, Slot};
use serde_json::{json, Value};

use crate::file::{with_header, Buffers, Failure};
use crate::{emit, hash};

/// Runs `inspect`; `false` when the file was rejected (exit 1).
pub fn run(path: &Path, json: bool, hash: bool, quiet: bool) -> bool {
    let shown = path.display().to_string();
    let result = with_header(path, &mut Buffers::default(), |file, header| {
        let digests = if hash {
            Some(hash::tensors(file, header, quiet)?)
        } else {
            None
        };
        if json {
            emit(&format!("{}\n", ok_json(header, digests.as_deref())));
        } else {
            emit(&table(header, &shown, digests.as_deref()));
        }
        Ok(())
    });
    match result {
        Ok(()) => true,
        Err(f) => {
            if json {
                emit(&format!("{}\n", error_json(&f)));
            } else {
                eprintln!("{shown}: {}", f.message);
            }
            false
        }
    }
}

fn error_json(f: &Failure) -> Value {
    json!({
        "ok": false,
        "error": {
            "kind": f.kind.unwrap_or("Io"),
            "message": f.message,
            "offset": f.offset,
            "tensor": f.tensor,
        }
    })
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
    })
}

/// The example's table, as one string (written at once: see [`emit`]).
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
    out
}
