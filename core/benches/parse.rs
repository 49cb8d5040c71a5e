//! Header parsing, side by side in one run, on five headers
//! (headers/mod.rs): this crate's table path (`parse_header` into a
//! reused table), its convenient path (`parse_header_alloc`, which sizes a
//! `Vec` itself), the reference's `SafeTensors::read_metadata`, and
//! serde_json and serde-json-core skimming the same JSON into `IgnoredAny`.
//!
//! Every side runs on the system allocator: heap allocations are counted in
//! a separate run (`--bench parse_allocs`), so that no side pays a counting
//! allocator's toll. Each figure is a ratio against its baseline measured in
//! the same run: the fastest of interleaved batches (other work on the
//! machine only ever adds time), with the medians' ratio beside it.
//!
//! The table is labelled with the Cargo profile the binary was built with
//! (`bench`, Cargo's default, or `bench-lto`: fat LTO, one codegen unit).
//! Each run also saves its table in the target directory; when the other
//! profile's table is there too, both are printed side by side.
//!
//! `make bench`, or `cargo bench -p safetensors-nano --bench parse
//! [--profile bench-lto] [-- --quick]`.

mod headers;

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use safetensors_nano::{Parser, Slot, Status};
use serde::de::IgnoredAny;

fn ours(prefix: &[u8], slots: &mut [Slot]) -> usize {
    match Parser::new().parse_header(prefix, slots) {
        Ok(Status::Complete(h)) => h.len(),
        other => panic!("our parser failed: {other:?}"),
    }
}

fn ours_alloc(prefix: &[u8]) -> usize {
    match Parser::new().parse_header_alloc(prefix) {
        Ok(Status::Complete(h)) => h.len(),
        other => panic!("our parser failed: {other:?}"),
    }
}

fn reference(prefix: &[u8]) -> usize {
    // The prefix has no data, so the reference does all its work and then
    // reports the missing buffer: the last check it makes.
    match safetensors::SafeTensors::read_metadata(prefix) {
        Err(safetensors::SafeTensorError::MetadataIncompleteBuffer) => 1,
        other => panic!("reference: {other:?}"),
    }
}

fn serde_skim(json: &[u8]) -> usize {
    serde_json::from_slice::<IgnoredAny>(json)
        .map(|_| 1)
        .expect("valid JSON")
}

fn serde_core_skim(json: &[u8]) -> usize {
    serde_json_core::from_slice::<IgnoredAny>(json)
        .map(|_| 1)
        .expect("valid JSON")
}

/// Seconds per call: the fastest batch and the median batch.
#[derive(Clone, Copy)]
struct Time {
    best: f64,
    median: f64,
}

/// Runs the functions in turn, batch by batch (each batch at least
/// `batch` long and 3 calls), `rounds` times, after one calibration batch.
fn race(fs: &mut [&mut dyn FnMut() -> usize], rounds: usize, batch: Duration) -> Vec<Time> {
    let run = |f: &mut dyn FnMut() -> usize, n: u32| {
        let start = Instant::now();
        for _ in 0..n {
            black_box(f());
        }
        start.elapsed()
    };
    let sizes: Vec<u32> = fs
        .iter_mut()
        .map(|f| {
            let mut n = 1u32;
            loop {
                let t = run(&mut **f, n);
                if t >= batch {
                    break n.max(3);
                }
                n = if t < batch / 50 {
                    n * 8
                } else {
                    (f64::from(n) * batch.as_secs_f64() * 1.2 / t.as_secs_f64()).ceil() as u32
                };
            }
        })
        .collect();
    let mut samples = vec![Vec::with_capacity(rounds); fs.len()];
    for _ in 0..rounds {
        for ((f, &n), s) in fs.iter_mut().zip(&sizes).zip(&mut samples) {
            s.push(run(&mut **f, n).as_secs_f64() / f64::from(n));
        }
    }
    samples
        .into_iter()
        .map(|mut s| {
            s.sort_by(f64::total_cmp);
            Time {
                best: s[0],
                median: s[s.len() / 2],
            }
        })
        .collect()
}

/// The Cargo profile this binary was built with: the directory above `deps/`.
fn profile() -> (String, PathBuf) {
    let exe = std::env::current_exe().expect("own path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps");
    let name = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("?")
        .to_string();
    let target = profile_dir.parent().unwrap_or(profile_dir).to_path_buf();
    // `cargo bench` with no --profile builds into target/release.
    let name = if name == "release" {
        "bench".into()
    } else {
        name
    };
    (name, target)
}

/// One header's figures, each a ratio within this run.
struct Row {
    name: &'static str,
    tensors: usize,
    bytes: usize,
    mb_s: f64,
    /// Time of the alloc path ÷ time of the table path (goal ≤ 1.2).
    alloc: (f64, f64),
    /// Time of the other side ÷ time of our table path.
    reference: (f64, f64),
    skim: (f64, f64),
    core_skim: (f64, f64),
}

fn ratio(num: Time, den: Time) -> (f64, f64) {
    (num.best / den.best, num.median / den.median)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (rounds, batch) = if quick {
        (5, Duration::from_millis(10))
    } else {
        (31, Duration::from_millis(20))
    };
    let (profile, target) = profile();
    let mut rows = Vec::new();
    for (name, prefix) in headers::all() {
        let json = prefix[8..].trim_ascii_end().to_vec();
        let tensors = ours_alloc(&prefix);
        let mut slots = vec![Slot::EMPTY; tensors + 8];
        assert_eq!(
            ours(&prefix, &mut slots),
            tensors,
            "{name}: both paths agree"
        );
        let times = race(
            &mut [
                &mut || ours(&prefix, &mut slots),
                &mut || ours_alloc(&prefix),
                &mut || reference(&prefix),
                &mut || serde_skim(&json),
                &mut || serde_core_skim(&json),
            ],
            rounds,
            batch,
        );
        let [table, alloc, refer, skim, core_skim] = times[..] else {
            unreachable!("five timings")
        };
        let row = Row {
            name,
            tensors,
            bytes: prefix.len(),
            mb_s: prefix.len() as f64 / table.best / 1e6,
            alloc: ratio(alloc, table),
            reference: ratio(refer, table),
            skim: ratio(skim, table),
            core_skim: ratio(core_skim, table),
        };
        eprintln!("{name}: done");
        rows.push(row);
    }

    let x = |(best, median): (f64, f64)| format!("{best:.2}× ({median:.2}×)");
    let mut table = format!(
        "Profile `{profile}`: fastest of {rounds} interleaved batches, the medians' ratio in brackets.\n\n\
         | header | tensors | bytes | ours (table path) | alloc path ÷ table path | reference ÷ ours | serde_json skim ÷ ours | serde-json-core skim ÷ ours |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n"
    );
    let mut saved = String::new();
    for r in &rows {
        table += &format!(
            "| {} | {} | {} | {:.0} MB/s | {} | {} | {} | {} |\n",
            r.name,
            r.tensors,
            r.bytes,
            r.mb_s,
            x(r.alloc),
            x(r.reference),
            x(r.skim),
            x(r.core_skim)
        );
        saved += &format!(
            "{}\t{}\t{}\t{}\t{}\t{}\n",
            r.name,
            r.tensors,
            x(r.alloc),
            x(r.reference),
            x(r.skim),
            x(r.core_skim)
        );
    }
    println!("\n{table}");
    if profile == "bench" {
        let floors = rows
            .iter()
            .all(|r| r.reference.0 >= 10.0 && r.skim.0 >= 1.0);
        let alloc = rows.iter().all(|r| r.alloc.0 <= 1.2);
        println!(
            "Floors under Cargo's default profile (≥ 10× the reference, ≥ 1× the serde_json skim): {}.",
            if floors { "met" } else { "MISSED" }
        );
        println!(
            "Alloc path within 1.2× of the table path: {}.\n",
            if alloc { "yes" } else { "NO" }
        );
    }

    // Both profiles side by side, when the other one has run too.
    let file = |p: &str| target.join(format!("parse-bench-{p}.tsv"));
    if !quick {
        let _ = std::fs::write(file(&profile), &saved);
    }
    let other = if profile == "bench" {
        "bench-lto"
    } else {
        "bench"
    };
    if let Ok(other_saved) = std::fs::read_to_string(file(other)) {
        let (default, lto) = if profile == "bench" {
            (saved, other_saved)
        } else {
            (other_saved, saved)
        };
        println!(
            "Both profiles (each from its own run; `bench-lto`: fat LTO, one codegen unit):\n"
        );
        println!("| header | tensors | alloc ÷ table: default | LTO | reference ÷ ours: default | LTO | serde_json skim ÷ ours: default | LTO | serde-json-core skim ÷ ours: default | LTO |");
        println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (d, l) in default.lines().zip(lto.lines()) {
            let d: Vec<&str> = d.split('\t').collect();
            let l: Vec<&str> = l.split('\t').collect();
            if d.len() == 6 && l.len() == 6 && d[0] == l[0] {
                println!(
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    d[0], d[1], d[2], l[2], d[3], l[3], d[4], l[4], d[5], l[5]
                );
            }
        }
        println!();
    }
}
