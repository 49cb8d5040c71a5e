//! Parses a file from a static buffer: links as a wasm32 module with no
//! allocator.
#![no_std]

use safetensors_nano::{Parser, Table};

static MODEL: &[u8] = include_bytes!("../../model.safetensors");

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}

/// Returns the number of tensors in the embedded model, or -1.
#[unsafe(no_mangle)]
pub extern "C" fn tensor_count() -> i32 {
    let mut table = Table::<8>::new();
    match Parser::new().parse(core::hint::black_box(MODEL), table.as_mut()) {
        Ok(st) => st.len() as i32,
        Err(_) => -1,
    }
}
