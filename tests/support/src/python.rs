//! The reference's Python side for tests: the project's venv
//! (`tests/.venv`, made by `scripts/setup.sh python`, with `safetensors`,
//! numpy and ml_dtypes) and running scripts in it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::string::String;

/// The repository's root (this crate lives in `tests/support`).
pub fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The venv's interpreter, or `None` (with a `SKIPPED` line on stderr) when
/// the venv is missing. Under CI (`CI` set) a missing venv is a failure, so
/// tests against the reference can't pass by being skipped.
pub fn venv() -> Option<PathBuf> {
    let python = repo().join("tests/.venv/bin/python");
    if python.exists() {
        return Some(python);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} is missing (run scripts/setup.sh python); required under CI",
        python.display()
    );
    std::eprintln!(
        "SKIPPED: {} is missing (run scripts/setup.sh python)",
        python.display()
    );
    None
}

/// Runs `python` with `args` and returns its standard output; a failure
/// fails the test with Python's standard error.
pub fn run(python: &Path, args: &[&str]) -> String {
    let out = Command::new(python)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
    assert!(
        out.status.success(),
        "python {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("python printed UTF-8")
}
