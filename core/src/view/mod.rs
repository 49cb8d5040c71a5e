//! Views over a parsed file: names, shapes, tensors, metadata, slices, and
//! the visitor that sees entries as they are read. All borrow the header
//! text and the data; nothing is copied.

pub(crate) mod metadata;
pub(crate) mod name;
pub(crate) mod shape;
pub(crate) mod slice;
pub(crate) mod tensor;
pub(crate) mod visit;
