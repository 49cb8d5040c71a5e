//! The core's examples as programs: a test runs the example binary as a
//! user would, instead of compiling the example's source into itself.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::string::String;
use std::sync::Mutex;
use std::vec::Vec;
use std::{env, format};

/// The path of the core's example `name`, built first (once per test
/// process) with the calling test's profile, target and target directory,
/// so that it is never stale.
///
/// # Panics
/// When the build fails, or the test binary is not where cargo puts it.
pub fn example(name: &str) -> PathBuf {
    static BUILT: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    let exe = env::current_exe().expect("the test binary's path");
    // <target dir>[/<triple>]/<profile dir>/deps/<test binary>
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("a test binary in <profile>/deps/");
    let path = profile_dir
        .join("examples")
        .join(format!("{name}{}", env::consts::EXE_SUFFIX));
    if built.iter().any(|b| b == name) {
        return path;
    }
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev",
        Some(other) => other,
        None => panic!("no profile directory above {}", exe.display()),
    };
    let above = profile_dir.parent().expect("a target directory");
    let (target_dir, triple) = if above.join("CACHEDIR.TAG").exists() {
        (above, None)
    } else {
        let triple = above.file_name().and_then(|n| n.to_str());
        (above.parent().expect("a target directory"), triple)
    };
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args([
        "build",
        "--quiet",
        "-p",
        "safetensors-nano",
        "--example",
        name,
    ])
    .args(["--profile", profile])
    .arg("--target-dir")
    .arg(target_dir)
    .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    if let Some(triple) = triple {
        cmd.args(["--target", triple]);
    }
    let status = cmd.status().expect("run cargo");
    assert!(status.success(), "cargo build --example {name}: {status}");
    built.push(name.into());
    path
}

/// What a successful run of the `rewrite` example reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rewritten {
    /// Tensors written.
    pub written: u64,
    /// Tensors left out by `--keep` / `--drop`.
    pub dropped: u64,
    /// Tensors whose name changed.
    pub renamed: u64,
    /// Tensors whose dtype changed.
    pub converted: u64,
    /// Bytes in OUT.
    pub file_len: u64,
}

/// A failed run of an example: its exit status and what it printed on stderr.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failed {
    /// The exit status (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Its standard error.
    pub stderr: String,
}

/// Runs the `rewrite` example with `args` (`IN OUT [options]`).
///
/// # Errors
/// The run's exit status and standard error when it fails.
///
/// # Panics
/// When the example cannot be built or started, or its summary line is not
/// `wrote W tensors (D dropped, R renamed, C converted), B bytes`.
pub fn rewrite<S: AsRef<std::ffi::OsStr>>(
    args: impl IntoIterator<Item = S>,
) -> Result<Rewritten, Failed> {
    let out = Command::new(example("rewrite"))
        .args(args)
        .output()
        .expect("run the rewrite example");
    if !out.status.success() {
        return Err(Failed {
            code: out.status.code(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let numbers: Vec<u64> = stdout
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().expect("a number"))
        .collect();
    match numbers[..] {
        [written, dropped, renamed, converted, file_len] if stdout.starts_with("wrote ") => {
            Ok(Rewritten {
                written,
                dropped,
                renamed,
                converted,
                file_len,
            })
        }
        _ => panic!("rewrite printed {stdout:?}"),
    }
}
