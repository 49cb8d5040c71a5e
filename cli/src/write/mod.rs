//! Writing safetensors files: the shared pipeline (plan, stream, rename
//! into place), the streamed copy of one tensor, and Ctrl-C handling.

pub mod copy;
pub mod pipeline;
pub mod signal;
