//! The optional integrations, one file each, reading and writing:
//! `Vec`-backed tables (feature `alloc`); reading from and writing to
//! `std::io` and files (feature `std`); writing to `embedded_io::Write`
//! (feature `embedded-io`); reading from NOR flash (feature
//! `embedded-storage`), and without blocking (feature
//! `embedded-storage-async`).

#[cfg(feature = "alloc")]
pub(crate) mod alloc;
#[cfg(feature = "embedded-io")]
pub(crate) mod embedded_io;
#[cfg(feature = "embedded-storage")]
#[cfg_attr(docsrs, doc(cfg(feature = "embedded-storage")))]
pub mod flash;
#[cfg(feature = "embedded-storage-async")]
#[cfg_attr(docsrs, doc(cfg(feature = "embedded-storage-async")))]
pub mod flash_async;
#[cfg(any(feature = "embedded-storage", feature = "embedded-storage-async"))]
mod flash_plan;
#[cfg(feature = "std")]
pub(crate) mod std_read;
#[cfg(feature = "std")]
pub(crate) mod std_write;
