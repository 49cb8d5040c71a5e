//! Parses a file from flash into a static-capacity table: links with no
//! allocator on thumbv6m and thumbv7em.
#![no_std]
#![no_main]

use cortex_m_rt::entry;
use panic_halt as _;
use safetensors_nano::{Parser, Table};

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
    loop {}
}
