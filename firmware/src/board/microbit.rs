//! BBC micro:bit v1: an nRF51822 with a Cortex-M0 (ARMv6-M, no FPU: f32 in
//! software), 256 KiB of flash and 16 KiB of RAM (`boards/microbit/memory.x`).

pub use crate::arch::cortex_m::{entry, exit, print, stack_pointer};

/// The board's name in the firmware's output.
pub const NAME: &str = "microbit";
