//! The optional integrations, one file each: `Vec`-backed tables
//! (feature `alloc`), reading from `std::io` and sharded checkpoints'
//! indexes (feature `std`), reading from NOR flash (feature `embedded-storage`),
//! and without blocking (feature `embedded-storage-async`).

#[cfg(feature = "alloc")]
pub(crate) mod alloc;
#[cfg(feature = "embedded-storage")]
#[cfg_attr(docsrs, doc(cfg(feature = "embedded-storage")))]
pub mod flash;
#[cfg(feature = "embedded-storage-async")]
#[cfg_attr(docsrs, doc(cfg(feature = "embedded-storage-async")))]
pub mod flash_async;
#[cfg(any(feature = "embedded-storage", feature = "embedded-storage-async"))]
mod flash_plan;
#[cfg(feature = "std")]
pub(crate) mod index;
#[cfg(feature = "std")]
pub(crate) mod index_check;
#[cfg(feature = "std")]
pub(crate) mod std;
