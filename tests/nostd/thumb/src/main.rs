//! Parses a file from flash into a static-capacity table and writes one into
//! a RAM buffer: links with no allocator on thumbv6m and thumbv7em.
#![no_std]
#![no_main]

use cortex_m_rt::entry;
use panic_halt as _;
use safetensors_nano::write::{serialize_to_slice, Tensor};
use safetensors_nano::{Dtype, Parser, Table};

static MODEL: &[u8] = include_bytes!("../../model.safetensors");

#[entry]
fn main() -> ! {
    let mut table = Table::<8>::new();
    let parser = Parser::new().header_limit(4096);
    let sum = match parser.parse(core::hint::black_box(MODEL), table.as_mut()) {
        Ok(st) => st.iter().map(|t| t.data().len()).sum::<usize>(),
        Err(e) => e.offset().unwrap_or(0) as usize,
    };
    core::hint::black_box(sum);
    let data = [0u8; 8];
    let mut tensors = [
        Tensor::new("weight", Dtype::F32, &[2], &data),
        Tensor::new("bias", Dtype::U8, &[4], &data[..4]),
    ];
    let mut meta = [("format", "pt")];
    let mut out = [0u8; 256];
    let written =
        serialize_to_slice(&mut tensors, Some(&mut meta), &mut out).map_or(0, |f| f.len());
    core::hint::black_box(written);
    loop {}
}
