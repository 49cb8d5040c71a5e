//! Footprint baseline: `size-probe` without the parse (see there).

#![no_std]
#![no_main]

use core::hint::black_box;

use cortex_m_rt::entry;
use safetensors_nano::Table;

#[repr(C, align(8))]
struct Aligned<B: ?Sized>(B);

static MODEL: &Aligned<[u8]> = &Aligned(*include_bytes!(env!("FIRMWARE_MODEL_PATH")));

#[entry]
fn main() -> ! {
    let file: &[u8] = black_box(&MODEL.0);
    let mut table = Table::<16>::new();
    black_box((&file, &mut table));
    let ok = black_box(true);
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
