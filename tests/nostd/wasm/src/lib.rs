//! Parses a file from a static buffer: links as a wasm32 module with no
//! allocator.
#![no_std]

use safetensors_nano::write::{serialize_to_slice, Tensor};
use safetensors_nano::{Dtype, Parser, Table};

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

/// Writes a two-tensor file into a static-size buffer; returns its length or -1.
#[unsafe(no_mangle)]
pub extern "C" fn write_file() -> i32 {
    let data = [0u8; 8];
    let mut tensors = [
        Tensor::new("weight", Dtype::F32, &[2], &data),
        Tensor::new("bias", Dtype::U8, &[4], &data[..4]),
    ];
    let mut out = [0u8; 256];
    match serialize_to_slice(&mut tensors, None, &mut out) {
        Ok(file) => file.len() as i32,
        Err(_) => -1,
    }
}
