//! Footprint probe: the smallest program that parses and validates a file
//! with safetensors-nano. Its `.text` minus that of `size-baseline` (the same
//! program without the parse) is the code the parser and validator cost.
//! Exits 0 when the embedded model parses, 2 when it does not.

#![no_std]
#![no_main]

use core::hint::black_box;

use safetensors_nano::{Parser, Table};
use safetensors_nano_firmware::board::entry;

safetensors_nano_firmware::probe_common!();
use probe::{exit, MODEL};

#[entry]
fn main() -> ! {
    let file: &[u8] = black_box(&MODEL.0);
    let mut table = Table::<16>::new();
    let parsed = Parser::new().header_limit(16_384).parse(file, &mut table);
    let ok = parsed.is_ok();
    black_box(&parsed);
    exit(if ok { 0 } else { 2 })
}
