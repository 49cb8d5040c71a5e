//! Header parsing, side by side in one run: this crate, the reference's
//! `SafeTensors::read_metadata`, serde_json skimming the same JSON into
//! `IgnoredAny`, and serde-json-core doing the same. Prints throughput ratios
//! and heap allocations per parse (counted by `allocation-counter`).
//!
//! `cargo bench -p safetensors-nano --bench parse`

#![allow(missing_docs)] // criterion_group! generates undocumented items

mod headers;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use safetensors_nano::{Parser, Slot, Status};
use serde::de::IgnoredAny;

fn ours(prefix: &[u8], slots: &mut [Slot]) -> usize {
    match Parser::new().parse_header(prefix, slots) {
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

fn allocations(f: impl FnOnce() -> usize) -> u64 {
    allocation_counter::measure(|| {
        black_box(f());
    })
    .count_total
}

/// Seconds per call of each function: the best of 15 windows of about
/// 20 ms each, the four functions taking turns window by window, so that
/// noise from other processes (one core of two busy, say) does not tilt
/// the ratios.
fn best_times(fs: &mut [&mut dyn FnMut() -> usize]) -> Vec<f64> {
    let mut best = vec![f64::INFINITY; fs.len()];
    for _ in 0..15 {
        for (f, best) in fs.iter_mut().zip(best.iter_mut()) {
            let start = Instant::now();
            let mut runs = 0u32;
            while start.elapsed() < Duration::from_millis(20) || runs < 3 {
                black_box(f());
                runs += 1;
            }
            *best = best.min(start.elapsed().as_secs_f64() / f64::from(runs));
        }
    }
    best
}

fn bench(c: &mut Criterion) {
    let mut summary = Vec::new();
    for (name, prefix) in headers::all() {
        let json = prefix[8..].trim_ascii_end().to_vec();
        let mut slots = vec![Slot::EMPTY; 4096 * 4];
        let tensors = ours(&prefix, &mut slots);
        let mut group = c.benchmark_group(format!("parse/{name}"));
        group.throughput(Throughput::Bytes(prefix.len() as u64));
        group.bench_function("safetensors-nano", |b| {
            b.iter(|| ours(black_box(&prefix), &mut slots))
        });
        group.bench_function("reference read_metadata", |b| {
            b.iter(|| reference(black_box(&prefix)))
        });
        group.bench_function("serde_json IgnoredAny", |b| {
            b.iter(|| serde_skim(black_box(&json)))
        });
        group.bench_function("serde-json-core IgnoredAny", |b| {
            b.iter(|| serde_core_skim(black_box(&json)))
        });
        group.finish();

        let times = best_times(&mut [
            &mut || ours(&prefix, &mut slots),
            &mut || reference(&prefix),
            &mut || serde_skim(&json),
            &mut || serde_core_skim(&json),
        ]);
        let [t_ours, t_ref, t_skim, t_core] = times[..] else {
            unreachable!("four timings")
        };
        let alloc_ours = allocations(|| ours(&prefix, &mut slots));
        let alloc_ref = allocations(|| reference(&prefix));
        summary.push(format!(
            "| {name} | {tensors} | {:.2} MB | {:.0} MB/s | {:.1}x | {:.2}x | {:.2}x | {alloc_ours} | {alloc_ref} |",
            prefix.len() as f64 / 1e6,
            prefix.len() as f64 / t_ours / 1e6,
            t_ref / t_ours,
            t_skim / t_ours,
            t_core / t_ours,
        ));
    }
    println!("\n| header | tensors | size | ours | vs reference | vs serde_json skim | vs serde-json-core skim | allocs ours | allocs reference |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for line in summary {
        println!("{line}");
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = bench
}
criterion_main!(benches);
