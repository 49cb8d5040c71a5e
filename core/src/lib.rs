#![doc = include_str!("../README.md")]
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
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

pub mod decode;
mod dtype;
mod error;
mod file;
mod io;
mod mode;
mod read;
mod table;
mod view;
pub mod write;

#[cfg(feature = "embedded-storage")]
#[cfg_attr(docsrs, doc(cfg(feature = "embedded-storage")))]
pub use io::flash;
#[cfg(feature = "embedded-storage-async")]
#[cfg_attr(docsrs, doc(cfg(feature = "embedded-storage-async")))]
pub use io::flash_async;

pub use dtype::{Dtype, DtypeKind, FloatFormat, FloatSpecials, JsView};
pub use error::{
    Error, ErrorKind, Expected, Field, InHeader, KindInfo, Message, TensorRef, WireField, WireType,
};
pub use file::{Header, Parser, SafeTensors, Status, Tensors, HEADER_LIMIT};
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use io::index::{IndexError, IndexLimits, ShardIndex};
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use io::index_check::{
    FindingField, FindingInfo, FindingType, FindingValue, IndexCheck, IndexProblem, ProblemMessage,
};
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use io::std::{read_header, read_slice, read_tensor, ReadError};
pub use table::{Slot, Table};
pub use view::metadata::Metadata;
pub use view::name::{Chars, Name};
pub use view::shape::Shape;
pub use view::slice::{SliceChunks, SliceIndex, SliceRanges};
pub use view::tensor::{Element, TensorInfo, TensorView};
pub use view::visit::Visitor;
