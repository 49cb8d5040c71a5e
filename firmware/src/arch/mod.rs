//! Support shared by the boards of one CPU architecture; each board module
//! (`crate::board`) takes its architecture's from here.

#[cfg(target_arch = "arm")]
pub mod cortex_m;
#[cfg(target_arch = "riscv32")]
pub mod riscv;
