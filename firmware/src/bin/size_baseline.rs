//! Footprint baseline: `size-probe` without the parse (see there).

#![no_std]
#![no_main]

use core::hint::black_box;

use safetensors_nano::Table;
use safetensors_nano_firmware::board::entry;

safetensors_nano_firmware::probe_common!();
use probe::{exit, MODEL};

#[entry]
fn main() -> ! {
    let file: &[u8] = black_box(&MODEL.0);
    let mut table = Table::<16>::new();
    black_box((&file, &mut table));
    let ok = black_box(true);
    exit(if ok { 0 } else { 2 })
}
