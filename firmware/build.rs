//! Picks the board from the target (one board per target, see [`BOARDS`]):
//! puts its `boards/<board>/memory.x` on the linker path and sets
//! `cfg(board = "<board>")`, which selects `src/board/<module>.rs`.
//!
//! Also picks the files the firmware embeds: `FIRMWARE_MODEL` (default
//! model/model.safetensors), `FIRMWARE_SAMPLES` (default
//! model/samples.safetensors) and `FIRMWARE_STRESS` (a pack of extra files
//! to parse; default none). Make the default files with
//! `python3 scripts/train_digits.py` from the repository root.

use std::{env, fs, path::PathBuf};

/// The boards: (name, target). A port to another board adds a row here.
const BOARDS: &[(&str, &str)] = &[
    ("mps2-an386", "thumbv7em-none-eabihf"),
    ("microbit", "thumbv6m-none-eabi"),
    ("sifive_e", "riscv32imac-unknown-none-elf"),
];

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let target = env::var("TARGET").expect("TARGET");

    let names: Vec<String> = BOARDS.iter().map(|(b, _)| format!("\"{b}\"")).collect();
    println!(
        "cargo::rustc-check-cfg=cfg(board, values({}))",
        names.join(", ")
    );
    let Some((board, _)) = BOARDS.iter().find(|(_, t)| *t == target) else {
        panic!(
            "no board for target {target}; the boards are {BOARDS:?} (see firmware/README.md, \
             \"Port to a fourth board\")"
        );
    };
    println!("cargo::rustc-cfg=board=\"{board}\"");
    let memory = manifest.join("boards").join(board).join("memory.x");
    fs::copy(&memory, out.join("memory.x")).unwrap_or_else(|e| panic!("{}: {e}", memory.display()));
    println!("cargo::rustc-link-search={}", out.display());
    println!("cargo::rerun-if-changed={}", memory.display());

    embed(
        "FIRMWARE_MODEL",
        Some(manifest.join("model/model.safetensors")),
        &out,
    );
    embed(
        "FIRMWARE_SAMPLES",
        Some(manifest.join("model/samples.safetensors")),
        &out,
    );
    embed("FIRMWARE_STRESS", None, &out);
}

/// Tells the crate, through env var `<var>_PATH`, which file to `include_bytes!`.
fn embed(var: &str, default: Option<PathBuf>, out: &std::path::Path) {
    println!("cargo::rerun-if-env-changed={var}");
    let path = match (env::var_os(var).filter(|v| !v.is_empty()), default) {
        (Some(p), _) => PathBuf::from(p),
        (None, Some(p)) => p,
        (None, None) => {
            let empty = out.join(format!("{var}.empty"));
            fs::write(&empty, b"").expect("write empty file");
            empty
        }
    };
    let path = path.canonicalize().unwrap_or_else(|_| {
        panic!(
            "{var}: {} not found. Generate the model and samples first:\n    \
             python3 scripts/train_digits.py   (from the repository root; see firmware/README.md)",
            path.display()
        )
    });
    println!("cargo::rerun-if-changed={}", path.display());
    println!("cargo::rustc-env={var}_PATH={}", path.display());
}
