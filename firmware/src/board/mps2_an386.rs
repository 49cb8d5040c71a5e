//! ARM MPS2 with the AN386 image: a Cortex-M4F with an FPU (hardware f32)
//! and 4 MiB each of code and data SRAM (`boards/mps2-an386/memory.x`).

pub use crate::arch::cortex_m::{entry, exit, print, stack_pointer};

/// The board's name in the firmware's output.
pub const NAME: &str = "mps2-an386";
