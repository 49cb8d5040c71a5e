//! Footprint probe: the smallest program that parses and validates a file
//! with safetensors-nano. Its `.text` minus that of `size-baseline` (the same
//! program without the parse) is the code the parser and validator cost.
//! Exits 0 when the embedded model parses, 2 when it does not.

#![no_std]
#![no_main]

use core::hint::black_box;

use cortex_m_rt::entry;
use safetensors_nano::{Parser, Table};

#[repr(C, align(8))]
struct Aligned<B: ?Sized>(B);

static MODEL: &Aligned<[u8]> = &Aligned(*include_bytes!(env!("FIRMWARE_MODEL_PATH")));

#[entry]
fn main() -> ! {
    let file: &[u8] = black_box(&MODEL.0);
    let mut table = Table::<16>::new();
    let parsed = Parser::new().header_limit(16_384).parse(file, &mut table);
    let ok = parsed.is_ok();
    black_box(&parsed);
    exit(if ok { 0 } else { 2 })
}

fn exit(code: u32) -> ! {
    let block = [0x2_0026u32, code];
    // SAFETY: semihosting SYS_EXIT_EXTENDED with a two-word parameter block.
    unsafe { cortex_m_semihosting::syscall(0x20, &block) };
    loop {
        cortex_m::asm::wfi();
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    exit(101)
}
