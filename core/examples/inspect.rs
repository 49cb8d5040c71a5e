//! Prints what a safetensors file holds.
//!
//! ```text
//! cargo run --release -p safetensors-nano --example inspect -- FILE [--json] [--no-hash]
//! ```
//!
//! The human table lists tensors in data-offset order. With `--json` it
//! prints exactly one JSON document, `{"ok":true,...}` or
//! `{"ok":false,"error":{...}}` (then exits 1), for other tools to consume.

use std::process::ExitCode;

use safetensors_nano::{Error, SafeTensors, Slot};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

struct Args {
    path: String,
    json: bool,
    hash: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut path = None;
    let (mut json, mut hash) = (false, true);
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--json" => json = true,
            "--no-hash" => hash = false,
            "-h" | "--help" => return Err(String::new()),
            a if a.starts_with("--") => return Err(format!("unknown option {a}")),
            a if path.is_none() => path = Some(a.to_string()),
            a => return Err(format!("unexpected argument {a}")),
        }
    }
    let path = path.ok_or("missing FILE")?;
    Ok(Args { path, json, hash })
}

/// Parses with a table sized to the header: a first try with a small table
/// tells how many slots are needed.
fn parse(bytes: &[u8]) -> Result<SafeTensors<'_, Vec<Slot>>, Error> {
    match SafeTensors::parse(bytes, vec![Slot::EMPTY; 256]) {
        Err(e) => match e.kind() {
            safetensors_nano::ErrorKind::CapacityExceeded { needed, .. } => {
                SafeTensors::parse(bytes, vec![Slot::EMPTY; needed as usize])
            }
            _ => Err(e),
        },
        ok => ok,
    }
}

fn error_json(e: &Error, bytes: &[u8]) -> Value {
    let header = header_bytes(bytes);
    json!({
        "ok": false,
        "error": {
            "kind": e.kind().name(),
            "message": e.display_in(header).to_string(),
            "offset": e.offset(),
            "tensor": e.tensor_name(header).map(|n| n.to_string()),
        }
    })
}

/// The header bytes as far as the file has them (for resolving names in errors).
fn header_bytes(bytes: &[u8]) -> &[u8] {
    let n = bytes.first_chunk::<8>().map_or(0, |b| {
        u64::from_le_bytes(*b).min(bytes.len() as u64) as usize
    });
    bytes
        .get(8..8 + n)
        .or_else(|| bytes.get(8..))
        .unwrap_or_default()
}

fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn ok_json(st: &SafeTensors<'_, Vec<Slot>>, hash: bool) -> Value {
    let metadata = st.metadata().map(|m| {
        m.iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect::<serde_json::Map<_, _>>()
    });
    let tensors: Vec<Value> = st
        .iter()
        .map(|t| {
            let (b, e) = t.data_offsets();
            let mut v = json!({
                "name": t.name().to_string(),
                "dtype": t.dtype().name(),
                "shape": t.shape().iter().collect::<Vec<_>>(),
                "data_offsets": [b, e],
            });
            if hash {
                v["sha256"] = Value::String(sha256_hex(t.data()));
            }
            v
        })
        .collect();
    json!({
        "ok": true,
        "header_size": st.header().header_len(),
        "metadata": metadata,
        "tensors": tensors,
    })
}

fn print_table(st: &SafeTensors<'_, Vec<Slot>>, path: &str, hash: bool) {
    let h = st.header();
    println!(
        "{path}: {} tensors, header {} bytes, data {} bytes",
        st.len(),
        h.header_len(),
        h.data_len()
    );
    if let Some(m) = st.metadata() {
        for (k, v) in m.iter() {
            println!("  metadata {k} = {v}");
        }
    }
    let width = st
        .iter()
        .map(|t| t.name().decoded_len())
        .max()
        .unwrap_or(4)
        .clamp(4, 60);
    println!(
        "  {:<width$}  {:<11}  {:<20}  {:>24}{}",
        "name",
        "dtype",
        "shape",
        "data_offsets",
        if hash { "  sha256" } else { "" }
    );
    for t in st.iter() {
        let shape = format!("{:?}", t.shape());
        let (b, e) = t.data_offsets();
        let digest = if hash {
            format!("  {}", &sha256_hex(t.data())[..16])
        } else {
            String::new()
        };
        println!(
            "  {:<width$}  {:<11}  {:<20}  {:>24}{digest}",
            t.name().to_string(),
            t.dtype().name(),
            shape,
            format!("[{b}, {e}]")
        );
    }
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(msg) => {
            if !msg.is_empty() {
                eprintln!("inspect: {msg}");
            }
            eprintln!("usage: inspect FILE [--json] [--no-hash]");
            return ExitCode::from(2);
        }
    };
    let bytes = match std::fs::read(&args.path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("inspect: cannot read {}: {e}", args.path);
            return ExitCode::from(2);
        }
    };
    match parse(&bytes) {
        Ok(st) => {
            if args.json {
                println!("{}", ok_json(&st, args.hash));
            } else {
                print_table(&st, &args.path, args.hash);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            if args.json {
                println!("{}", error_json(&e, &bytes));
            } else {
                // `display_in` names the tensor, where `Display` gives its header bytes.
                eprintln!("{}: {}", args.path, e.display_in(header_bytes(&bytes)));
            }
            ExitCode::from(1)
        }
    }
}
