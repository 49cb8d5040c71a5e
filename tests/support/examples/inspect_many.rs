//! `inspect --json --no-hash` for many files in one process, for the
//! differential fuzzing across the JS boundary (tests/js/lib/boundary.js):
//! one process per case would spend its time starting processes.
//!
//! ```text
//! inspect_many < FRAMES
//! ```
//!
//! Input on stdin: files one after another, each a little-endian u32 byte
//! count and that many bytes; the count [`FLUSH`] instead asks for the lines
//! so far to be written out (the harness waits for each batch's lines). Output on stdout: one line per file, the JSON
//! document `inspect FILE --json --no-hash` prints for it
//! (`{"ok":true,"header_size":…,"metadata":…,"tensors":[…]}` or
//! `{"ok":false,"error":{"kind","message","offset","tensor"}}`), built the
//! same way: the whole file parsed with a table sized to its header. The
//! harness checks that it agrees with the `inspect` command itself on a
//! sample of every run.

use std::io::{self, BufRead, BufWriter, Read, Write};
use std::process::ExitCode;

use safetensors_nano::{Error, ErrorKind, SafeTensors, Slot};
use serde_json::{json, Value};

/// The byte count that is no file but a request to flush the output.
const FLUSH: u32 = u32::MAX;

/// Parses with a table sized to the header: a first try with a small table
/// tells how many slots are needed.
fn parse(bytes: &[u8]) -> Result<SafeTensors<'_, Vec<Slot>>, Error> {
    match SafeTensors::parse(bytes, vec![Slot::EMPTY; 256]) {
        Err(e) => match e.kind() {
            ErrorKind::CapacityExceeded { needed, .. } => {
                SafeTensors::parse(bytes, vec![Slot::EMPTY; needed as usize])
            }
            _ => Err(e),
        },
        ok => ok,
    }
}

/// The header bytes as far as the file has them (for naming a tensor in an error).
fn header_bytes(bytes: &[u8]) -> &[u8] {
    let n = bytes.first_chunk::<8>().map_or(0, |b| {
        u64::from_le_bytes(*b).min(bytes.len() as u64) as usize
    });
    bytes
        .get(8..8 + n)
        .or_else(|| bytes.get(8..))
        .unwrap_or_default()
}

fn describe(bytes: &[u8]) -> Value {
    match parse(bytes) {
        Ok(st) => {
            let metadata = st.metadata().map(|m| {
                m.iter()
                    .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
                    .collect::<serde_json::Map<_, _>>()
            });
            let tensors: Vec<Value> = st
                .iter()
                .map(|t| {
                    let (b, e) = t.data_offsets();
                    json!({
                        "name": t.name().to_string(),
                        "dtype": t.dtype().name(),
                        "shape": t.shape().iter().collect::<Vec<_>>(),
                        "data_offsets": [b, e],
                    })
                })
                .collect();
            json!({
                "ok": true,
                "header_size": st.header().header_len(),
                "metadata": metadata,
                "tensors": tensors,
            })
        }
        Err(e) => {
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
    }
}

fn run() -> io::Result<()> {
    let mut input = io::stdin().lock();
    let mut out = BufWriter::new(io::stdout().lock());
    let mut file = Vec::new();
    loop {
        let mut len = [0u8; 4];
        // A clean end of input between files ends the run.
        if input.fill_buf()?.is_empty() {
            break;
        }
        input.read_exact(&mut len)?;
        let len = u32::from_le_bytes(len);
        if len == FLUSH {
            out.flush()?;
            continue;
        }
        file.clear();
        file.resize(len as usize, 0);
        input.read_exact(&mut file)?;
        writeln!(out, "{}", describe(&file))?;
    }
    out.flush()
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("inspect_many: {e}");
            ExitCode::from(2)
        }
    }
}
