//! What every subcommand prints on stdout: text written at once (a closed
//! pipe ends the program quietly), counts with their nouns, and the JSON
//! Lines of `--json` (one document per line, each with `"ok"`; a failure is
//! `{"ok":false,"error":{"kind","message","offset","tensor"}}`).

use std::io::Write;

use serde_json::{json, Value};

use crate::file::Failure;

/// `1 tensor`, `2 tensors`: a count and its noun.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Writes `text` to stdout. A closed pipe (`... | head`) ends the program
/// quietly with status 1 instead of the panic `println!` would give.
pub fn emit(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("safetensors-nano: cannot write to stdout: {e}");
        }
        std::process::exit(1);
    }
}

/// Writes one JSON Lines document: `value` on a line of its own.
pub fn emit_json(value: &Value) {
    emit(&format!("{value}\n"));
}

/// The `--json` document of a failure: `{"ok":false,"error":{…}}` (an I/O
/// error's kind is `Io`).
pub fn error_json(f: &Failure) -> Value {
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

/// What a writing command did: its status line (not printed with
/// `--quiet`) and its `--json` document (`{"ok":true,"output",…}`).
pub struct Written {
    /// The status line, with its newline.
    pub line: String,
    /// The `--json` document.
    pub doc: Value,
}

/// `f` with its message prefixed by what it is about (`FILE: …`).
pub fn about(what: &std::path::Path) -> impl Fn(Failure) -> Failure + '_ {
    move |mut f| {
        f.message = format!("{}: {}", what.display(), f.message);
        f
    }
}
