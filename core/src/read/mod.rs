//! Reading a header: from the bytes after the length prefix to a filled
//! table, checked against every rule.

#[cfg(not(small))]
pub(crate) mod canonical;
pub(crate) mod header;
pub(crate) mod index;
pub(crate) mod lexer;
pub(crate) mod sort;
pub(crate) mod utf8;
pub(crate) mod validate;
