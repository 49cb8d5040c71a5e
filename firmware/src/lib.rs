//! What the firmware's binaries share: ending a QEMU run over semihosting
//! ([`semihost`]), stack measurement ([`stack`]), and the size probes'
//! common part ([`probe`]).
//!
//! A library holds no handler: each binary installs its panic (and
//! hard-fault) handler with [`exit_on_panic_and_fault!`] or
//! [`probe_common!`], so the size probes link none of the
//! formatting the test firmware's handlers use.

#![no_std]

pub mod probe;
pub mod semihost;
pub mod stack;
