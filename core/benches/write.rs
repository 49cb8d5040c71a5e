//! Writer benchmarks, ours vs the reference `serialize`, side by side:
//! - 5 × 2 MB F32 tensors (the reference's own "Serialize 10_MB" benchmark);
//! - 10,000 small tensors (header-bound).
//!
//! Ours plans and writes into a preallocated buffer; a counting global
//! allocator (`allocation-counter`) checks that this makes 0 heap
//! allocations (asserted) and prints what each writer allocates per file.
//! A third line, copying only the tensor bytes into the same buffer, shows
//! the memory-bandwidth floor.
//!
//! `cargo bench -p safetensors-nano --bench write` (add `-- --quick` for a
//! short run).

#![allow(missing_docs)] // criterion_group! makes an undocumented fn

use std::collections::HashMap;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use safetensors::tensor::TensorView;
use safetensors_nano::write::{Plan, Tensor};
use safetensors_nano::Dtype;

fn ref_dtype(d: Dtype) -> safetensors::Dtype {
    match d {
        Dtype::F32 => safetensors::Dtype::F32,
        Dtype::F16 => safetensors::Dtype::F16,
        Dtype::BF16 => safetensors::Dtype::BF16,
        Dtype::I64 => safetensors::Dtype::I64,
        Dtype::U8 => safetensors::Dtype::U8,
        other => panic!("the write benchmark makes no {other} tensors"),
    }
}

/// One benchmark input, owned, viewable by both writers.
struct Input {
    names: Vec<String>,
    dtypes: Vec<Dtype>,
    shapes: Vec<Vec<u64>>,
    data: Vec<Vec<u8>>,
}

impl Input {
    fn ours(&self) -> Vec<Tensor<'_>> {
        (0..self.names.len())
            .map(|i| {
                Tensor::new(
                    &self.names[i],
                    self.dtypes[i],
                    &self.shapes[i],
                    &self.data[i],
                )
            })
            .collect()
    }

    fn reference(&self) -> HashMap<String, TensorView<'_>> {
        (0..self.names.len())
            .map(|i| {
                let shape = self.shapes[i].iter().map(|&d| d as usize).collect();
                let view =
                    TensorView::new(ref_dtype(self.dtypes[i]), shape, &self.data[i]).unwrap();
                (self.names[i].clone(), view)
            })
            .collect()
    }
}

/// The reference's own benchmark input: 5 layers of F32 [1000, 500] zeros.
fn five_layers() -> Input {
    let n = 5;
    Input {
        names: (0..n).map(|i| format!("weight{i}")).collect(),
        dtypes: vec![Dtype::F32; n],
        shapes: vec![vec![1000, 500]; n],
        data: vec![vec![0u8; 1000 * 500 * 4]; n],
    }
}

/// 10,000 small tensors of mixed dtypes, named like a model's layers.
fn many_small() -> Input {
    let n = 10_000;
    let dtypes = [Dtype::F32, Dtype::F16, Dtype::BF16, Dtype::I64, Dtype::U8];
    let dtypes: Vec<Dtype> = (0..n).map(|i| dtypes[i % dtypes.len()]).collect();
    let shapes: Vec<Vec<u64>> = (0..n).map(|i| vec![2, (i % 7 + 1) as u64]).collect();
    let data = (0..n)
        .map(|i| {
            vec![
                i as u8;
                (shapes[i].iter().product::<u64>() as usize) * (dtypes[i].bits() as usize / 8)
            ]
        })
        .collect();
    Input {
        names: (0..n)
            .map(|i| format!("model.layers.{}.mlp.w{}", i / 7, i % 7))
            .collect(),
        dtypes,
        shapes,
        data,
    }
}

/// Plans and writes into `buf` from a fresh copy of the caller's order
/// (`work` is reused: no allocation).
fn ours_once<'a>(original: &[Tensor<'a>], work: &mut [Tensor<'a>], buf: &mut [u8]) -> usize {
    work.copy_from_slice(original);
    let plan = Plan::new(work).unwrap();
    plan.write_to_slice(buf).unwrap().len()
}

fn bench_case(c: &mut Criterion, label: &str, input: &Input) {
    let original = input.ours();
    let mut work = original.clone();
    let file_len = Plan::new(&mut work).unwrap().file_len() as usize;
    let mut buf = vec![0u8; file_len];
    let reference = input.reference();

    // Same bytes (no metadata, so byte-identical).
    ours_once(&original, &mut work, &mut buf);
    let expected = safetensors::serialize(&reference, None).unwrap();
    assert!(
        buf == expected,
        "{label}: output differs from the reference"
    );

    // Heap allocations for one file each.
    let ours_stats = allocation_counter::measure(|| {
        black_box(ours_once(&original, &mut work, &mut buf));
    });
    let ref_stats = allocation_counter::measure(|| {
        black_box(safetensors::serialize(black_box(&reference), None).unwrap());
    });
    println!(
        "{label}: file {file_len} bytes; heap allocations per file: ours {} ({} bytes), reference {} ({} bytes)",
        ours_stats.count_total, ours_stats.bytes_total, ref_stats.count_total, ref_stats.bytes_total,
    );
    assert_eq!(ours_stats.count_total, 0, "ours allocated");

    let mut group = c.benchmark_group(label);
    group.throughput(Throughput::Bytes(file_len as u64));
    group.bench_function(BenchmarkId::new("reference serialize", file_len), |b| {
        b.iter(|| safetensors::serialize(black_box(&reference), None).unwrap())
    });
    group.bench_function(
        BenchmarkId::new("ours plan + write_to_slice", file_len),
        |b| b.iter(|| ours_once(black_box(&original), &mut work, &mut buf)),
    );
    // The floor: copying the tensor bytes alone into the same buffer.
    let data_start = file_len - input.data.iter().map(Vec::len).sum::<usize>();
    group.bench_function(BenchmarkId::new("memcpy of the data only", file_len), |b| {
        b.iter(|| {
            let mut pos = data_start;
            for data in black_box(&input.data) {
                buf[pos..pos + data.len()].copy_from_slice(data);
                pos += data.len();
            }
            pos
        })
    });
    group.finish();
}

fn bench_write(c: &mut Criterion) {
    bench_case(c, "write 5x2MB F32", &five_layers());
    bench_case(c, "write 10k small tensors", &many_small());
}

criterion_group!(benches, bench_write);
criterion_main!(benches);
