//! Reading a header: from the bytes after the length prefix to a filled
//! table, checked against every rule. The lexer owns the position
//! ([`lexer::Lexer`]); the grammar ([`header`]) drives it, taking the fast
//! path ([`canonical`]) where it can; the name lookup ([`names`]) and the
//! layout check ([`validate`]) finish the table.

pub(crate) mod canonical;
pub(crate) mod hash;
pub(crate) mod header;
pub(crate) mod lexer;
pub(crate) mod names;
pub(crate) mod number;
pub(crate) mod sort;
pub(crate) mod string;
pub(crate) mod utf8;
pub(crate) mod validate;
