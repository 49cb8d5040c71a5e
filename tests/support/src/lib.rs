//! Test support for safetensors-nano, in one place: what the core's
//! integration tests (`core/tests/`), the fuzz targets (`fuzz/`) and the
//! test firmware (`firmware/`) share.
//!
//! - [`verdicts`]: the adversarial suite's runner (`tests/adversarial/`).
//!   `no_std` and allocation-free, so the firmware runs it too.
//! - `files` (feature `std`): files built from header text, and our parser
//!   with a table big enough for anything.
//! - `tensors` (feature `std`): owned tensors, our writer into a buffer,
//!   deterministic data.
//! - `reference` (feature `reference`): the `safetensors` crate as the oracle,
//!   its verdict classified against ours, and its writer.
//! - `python` (feature `std`): the reference's Python venv (`tests/.venv`)
//!   and running scripts in it.
//!
//! Only the core's *integration* tests may use this crate: it depends on
//! `safetensors-nano`, so inside the core's unit tests its types would be a
//! second copy of the core's.
#![no_std]

#[cfg(feature = "std")]
extern crate std;

#[cfg(feature = "std")]
pub mod files;
#[cfg(feature = "std")]
pub mod python;
#[cfg(feature = "reference")]
pub mod reference;
#[cfg(feature = "std")]
pub mod tensors;
pub mod verdicts;
