#![doc = include_str!("../README.md")]
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic,
        clippy::arithmetic_side_effects,
        clippy::cast_possible_truncation
    )
)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(any(test, feature = "std"))]
extern crate std;

#[cfg(feature = "alloc")]
mod alloc_support;
#[cfg(not(small))]
mod canonical;
pub mod decode;
mod dtype;
mod error;
mod file;
#[cfg(feature = "embedded-storage")]
pub mod flash;
mod header;
mod index;
mod json;
mod metadata;
mod name;
mod shape;
mod slice;
mod sort;
#[cfg(feature = "std")]
mod std_io;
mod table;
mod tensor;
mod utf8;
mod validate;
mod visit;
pub mod write;

pub use dtype::{Dtype, DtypeKind, FloatFormat, FloatSpecials, JsView};
pub use error::{
    Error, ErrorKind, Expected, Field, KindInfo, Message, TensorRef, WireField, WireType,
};
pub use file::{Header, Parser, SafeTensors, Status, Tensors, HEADER_LIMIT};
pub use metadata::Metadata;
pub use name::{Chars, Name};
pub use shape::Shape;
pub use slice::{SliceChunks, SliceIndex, SliceRanges};
#[cfg(feature = "std")]
pub use std_io::{read_header, read_slice, read_tensor, ReadError};
pub use table::{Slot, Table};
pub use tensor::{Element, TensorInfo, TensorView};
pub use visit::Visitor;
