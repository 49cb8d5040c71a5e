//! Decoding to `f32`, side by side in one run, on weight-like values
//! (normal(0, 0.02) rounded to the dtype, 4 Mi elements):
//!
//! - `F16` and `BF16`: `decode_f32_into` against the `half` crate's slice
//!   conversion (`convert_to_f32_slice`, with `std`: F16C where the CPU has
//!   it), and against the scalar spec (`half`'s one-value conversion in a
//!   loop: the decoder before the lane tricks);
//! - `F8_E4M3`: `decode_f32_into` against numpy + ml_dtypes
//!   `astype(np.float32)`, timed by a Python process (tests/.venv) that
//!   takes turns with us batch by batch, and against the scalar spec (the
//!   table lookup `f8_e4m3_to_f32` in a loop).
//!
//! Times are the fastest of interleaved batches of at least 20 ms (other
//! work on the machine only adds time), the medians' ratio beside them.
//!
//! `cargo bench -p safetensors-nano --bench decode` (part of `make bench`)

#![allow(missing_docs)]

use std::hint::black_box;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};
use safetensors_nano::decode::{decode_f32_into, f8_e4m3_to_f32};
use safetensors_nano::Dtype;

const N: usize = 1 << 22;
const ROUNDS: usize = 31;

/// normal(0, 0.02) from a seeded LCG (Box-Muller).
fn weights() -> Vec<f32> {
    let mut x: u64 = 12345;
    let mut uniform = move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let mut out = Vec::with_capacity(N);
    while out.len() < N {
        let r = (-2.0 * uniform().ln()).sqrt() * 0.02;
        let t = 2.0 * std::f64::consts::PI * uniform();
        out.push((r * t.cos()) as f32);
        out.push((r * t.sin()) as f32);
    }
    out
}

/// The nearest `F8_E4M3` code (ties to the even code), by the scalar spec.
fn to_e4m3(v: f32) -> u8 {
    let a = v.abs();
    let mut best = 0u8;
    for code in 1..127u8 {
        let (d, b) = (
            (f8_e4m3_to_f32(code) - a).abs(),
            (f8_e4m3_to_f32(best) - a).abs(),
        );
        if d < b || (d == b && code % 2 == 0) {
            best = code;
        }
    }
    best | if v < 0.0 { 0x80 } else { 0 }
}

/// Seconds per call: the fastest batch of at least 20 ms.
fn batch(f: &mut dyn FnMut()) -> f64 {
    let start = Instant::now();
    let mut runs = 0u32;
    while start.elapsed() < Duration::from_millis(20) || runs < 3 {
        f();
        runs += 1;
    }
    start.elapsed().as_secs_f64() / f64::from(runs)
}

/// The fastest and the median time of each side, taking turns batch by batch.
fn race(sides: &mut [&mut dyn FnMut() -> f64]) -> Vec<(f64, f64)> {
    let mut samples = vec![Vec::new(); sides.len()];
    for _ in 0..ROUNDS {
        for (side, s) in sides.iter_mut().zip(samples.iter_mut()) {
            s.push(side());
        }
    }
    samples
        .into_iter()
        .map(|mut s| {
            s.sort_by(f64::total_cmp);
            (s[0], s[s.len() / 2])
        })
        .collect()
}

/// numpy + ml_dtypes in a Python process that times one batch per line it reads.
struct Python {
    child: std::process::Child,
    answers: BufReader<std::process::ChildStdout>,
}

impl Python {
    fn start(codes: &[u8]) -> Option<Python> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let python = root.join("tests/.venv/bin/python");
        if !python.exists() {
            return None;
        }
        let file = std::env::temp_dir().join(format!("stn-bench-e4m3-{}.bin", std::process::id()));
        std::fs::write(&file, codes).ok()?;
        let script = r#"
import sys, time, numpy as np, ml_dtypes
a = np.fromfile(sys.argv[1], dtype=np.uint8).view(ml_dtypes.float8_e4m3fn)
a.astype(np.float32)
for line in sys.stdin:
    runs, start = 0, time.perf_counter()
    while time.perf_counter() - start < 0.02 or runs < 3:
        a.astype(np.float32)
        runs += 1
    print((time.perf_counter() - start) / runs, flush=True)
"#;
        let mut child = Command::new(python)
            .args(["-c", script])
            .arg(&file)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .ok()?;
        let answers = BufReader::new(child.stdout.take()?);
        Some(Python { child, answers })
    }

    fn batch(&mut self) -> f64 {
        let stdin = self.child.stdin.as_mut().expect("python's stdin");
        writeln!(stdin, "batch").expect("python is running");
        let mut line = String::new();
        self.answers.read_line(&mut line).expect("python answers");
        line.trim().parse().expect("seconds")
    }
}

fn row(name: &str, sides: &[(f64, f64)], labels: &[&str]) {
    let (ours, ours_median) = sides[0];
    let rate = |t: f64| format!("{:.0} M/s", N as f64 / t / 1e6);
    let mut cells = vec![format!("| {name} | {}", rate(ours))];
    for ((t, median), label) in sides[1..].iter().zip(&labels[1..]) {
        cells.push(format!(
            "{label}: {} | {:.2}x (medians {:.2}x)",
            rate(*t),
            t / ours,
            median / ours_median
        ));
    }
    println!("{} |", cells.join(" | "));
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench -- --list`: nothing to list
    }
    let w = weights();
    let halves: Vec<f16> = w.iter().map(|&v| f16::from_f32(v)).collect();
    let brains: Vec<bf16> = w.iter().map(|&v| bf16::from_f32(v)).collect();
    let e4m3: Vec<u8> = w.iter().map(|&v| to_e4m3(v)).collect();
    let f16_bytes: Vec<u8> = halves.iter().flat_map(|h| h.to_le_bytes()).collect();
    let bf16_bytes: Vec<u8> = brains.iter().flat_map(|h| h.to_le_bytes()).collect();
    let mut out = vec![0.0f32; N];
    let mut check = vec![0.0f32; N];
    let mut scratch = vec![0.0f32; N];

    println!(
        "\n## Decoding to f32 ({} Mi weight-like elements, normal(0, 0.02) in the dtype)\n",
        N >> 20
    );
    println!(
        "Fastest of {ROUNDS} interleaved batches; each ratio is the other side's time ÷ ours.\n"
    );
    println!("| dtype | ours: decode_f32_into | other sides |");
    println!("|---|---:|---|");

    // F16
    decode_f32_into(Dtype::F16, &f16_bytes, &mut out).unwrap();
    halves.convert_to_f32_slice(&mut check);
    assert!(out
        .iter()
        .zip(&check)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    let t = race(&mut [
        &mut || {
            batch(&mut || decode_f32_into(Dtype::F16, black_box(&f16_bytes), &mut out).unwrap())
        },
        &mut || batch(&mut || black_box(&halves[..]).convert_to_f32_slice(&mut check)),
        &mut || {
            batch(&mut || {
                for (o, h) in scratch.iter_mut().zip(black_box(&halves)) {
                    *o = h.to_f32();
                }
            })
        },
    ]);
    row(
        "F16",
        &t,
        &["ours", "half convert_to_f32_slice", "scalar spec (before)"],
    );
    let f16_ratio = t[1].0 / t[0].0;

    // BF16
    decode_f32_into(Dtype::BF16, &bf16_bytes, &mut out).unwrap();
    brains.convert_to_f32_slice(&mut check);
    assert!(out
        .iter()
        .zip(&check)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    let t = race(&mut [
        &mut || {
            batch(&mut || decode_f32_into(Dtype::BF16, black_box(&bf16_bytes), &mut out).unwrap())
        },
        &mut || batch(&mut || black_box(&brains[..]).convert_to_f32_slice(&mut check)),
        &mut || {
            batch(&mut || {
                for (o, h) in scratch
                    .iter_mut()
                    .zip(black_box(&bf16_bytes).chunks_exact(2))
                {
                    *o = bf16::from_le_bytes([h[0], h[1]]).to_f32();
                }
            })
        },
    ]);
    row(
        "BF16",
        &t,
        &["ours", "half convert_to_f32_slice", "scalar spec (before)"],
    );
    let bf16_ratio = t[1].0 / t[0].0;

    // F8_E4M3
    decode_f32_into(Dtype::F8_E4M3, &e4m3, &mut out).unwrap();
    for (o, &c) in check.iter_mut().zip(&e4m3) {
        *o = f8_e4m3_to_f32(c);
    }
    assert!(out
        .iter()
        .zip(&check)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    let mut python = Python::start(&e4m3);
    let mut sides: Vec<&mut dyn FnMut() -> f64> = Vec::new();
    let mut ours =
        || batch(&mut || decode_f32_into(Dtype::F8_E4M3, black_box(&e4m3), &mut out).unwrap());
    let mut scalar = || {
        batch(&mut || {
            for (o, &c) in scratch.iter_mut().zip(black_box(&e4m3)) {
                *o = f8_e4m3_to_f32(c);
            }
        })
    };
    sides.push(&mut ours);
    sides.push(&mut scalar);
    let mut py = python.as_mut().map(|p| move || p.batch());
    let mut labels = vec!["ours", "scalar spec (before)"];
    if let Some(py) = py.as_mut() {
        sides.push(py);
        labels.push("numpy + ml_dtypes astype(float32)");
    }
    let t = race(&mut sides);
    row("F8_E4M3", &t, &labels);
    println!();
    println!("F16: half's slice conversion ÷ ours = {f16_ratio:.2}x (goal ≥ 1x)");
    println!("BF16: half's slice conversion ÷ ours = {bf16_ratio:.2}x (goal ≥ 1x)");
    match t.get(2) {
        Some((py, _)) => println!(
            "F8_E4M3: numpy + ml_dtypes ÷ ours = {:.1}x (goal ≥ 10x)",
            py / t[0].0
        ),
        None => println!(
            "F8_E4M3: no tests/.venv (scripts/setup.sh python): numpy + ml_dtypes not timed"
        ),
    }
    if let Some(mut p) = python {
        drop(p.child.stdin.take());
        let _ = p.child.wait();
    }
}
