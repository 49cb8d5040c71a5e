//! Heap allocations per header parse, on the five headers of the `parse`
//! bench: counted here, in a binary of its own, because the counting
//! allocator (`allocation-counter`) replaces the global allocator of the
//! whole process, and the `parse` bench times every side without it.
//!
//! `cargo bench -p safetensors-nano --bench parse_allocs`

mod headers;

use std::hint::black_box;

use safetensors_nano::{Parser, Slot, Status};

fn allocations(f: impl FnOnce() -> usize) -> (u64, u64) {
    let info = allocation_counter::measure(|| {
        black_box(f());
    });
    (info.count_total, info.bytes_max)
}

fn main() {
    println!("\n| header | tensors | table path: allocations | alloc path: allocations | alloc path: peak bytes | reference: allocations | reference: peak bytes |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (name, prefix) in headers::all() {
        let alloc_path = || match Parser::new().parse_header_alloc(&prefix) {
            Ok(Status::Complete(h)) => h.len(),
            other => panic!("{other:?}"),
        };
        let tensors = alloc_path();
        let mut slots = vec![Slot::EMPTY; tensors + 8];
        let (table, _) =
            allocations(
                || match Parser::new().parse_header(&prefix, &mut slots[..]) {
                    Ok(Status::Complete(h)) => h.len(),
                    other => panic!("{other:?}"),
                },
            );
        let (alloc, alloc_peak) = allocations(alloc_path);
        let (refer, ref_peak) =
            allocations(|| safetensors::SafeTensors::read_metadata(&prefix).map_or(1, |_| 0));
        println!(
            "| {name} | {tensors} | {table} | {alloc} | {alloc_peak} | {refer} | {ref_peak} |"
        );
    }
    println!();
}
