//! SiFive HiFive1 (QEMU `sifive_e`): an FE310 with an E31 core (RV32IMAC, no
//! F extension: f32 in software), flash mapped from 0x2000_0000 and 16 KiB
//! of data RAM (`boards/sifive_e/memory.x`).

pub use crate::arch::riscv::{entry, exit, print, stack_pointer};

/// The board's name in the firmware's output.
pub const NAME: &str = "sifive_e";
