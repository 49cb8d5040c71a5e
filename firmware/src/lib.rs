//! What the firmware's binaries share: the board they run on ([`board`],
//! picked by build.rs from the target), output and the end of a QEMU run
//! ([`semihost`], [`println!`]), stack measurement ([`stack`]), and the size
//! probes' common part ([`probe`]).
//!
//! A library holds no handler: each binary installs its panic and fault
//! handlers with [`exit_on_panic_and_fault!`] or [`probe_common!`], so the
//! size probes link none of the formatting the test firmware's handlers use.

#![no_std]

mod arch;
pub mod probe;
pub mod semihost;
pub mod stack;

/// The board this build runs on: `entry` (the reset entry attribute),
/// `print`, `exit`, `stack_pointer` and `NAME`. Nothing else in the
/// firmware names a board.
#[cfg_attr(board = "mps2-an386", path = "board/mps2_an386.rs")]
#[cfg_attr(board = "microbit", path = "board/microbit.rs")]
#[cfg_attr(board = "sifive_e", path = "board/sifive_e.rs")]
pub mod board;
