//! The code blocks of the repository's READMEs, as doctests: each module's
//! documentation is one README, included unchanged, so `cargo test` compiles
//! and runs every ```rust block exactly as printed (`no_run` and `ignore`
//! blocks say so in the README itself). `core/README.md` is not here: it is the
//! core's crate documentation, whose doctests the core's own `cargo test` runs.
//!
//! The doctests run in this folder, where `model.safetensors` is the file the
//! snippets open: `embed.weight` (F32, 4×3) and `lm_head.weight` (BF16, 3×4),
//! metadata `format: pt`, written by the Python reference (`save_file`). The
//! JavaScript and shell
//! blocks are run by `snippets.mjs`, which also checks that every block of every
//! README is tested one way or the other.

#![no_std]

#[doc = include_str!("../../README.md")]
pub mod readme {}

#[doc = include_str!("../../firmware/README.md")]
pub mod firmware_readme {}

#[doc = include_str!("../../wasm/README.md")]
pub mod wasm_readme {}

#[doc = include_str!("../../web-demo/README.md")]
pub mod web_demo_readme {}
