//! The subcommands, one module each; what they share lives outside
//! (`crate::output`, `crate::progress`, `crate::write`, `crate::file`).

pub mod diff;
pub mod edit;
pub mod inspect;
pub mod merge;
pub mod split;
pub mod verify;
