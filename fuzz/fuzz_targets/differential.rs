//! (c) Any bytes: our verdict against the reference crate's
//! (`safetensors_nano_fuzz::differential`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| safetensors_nano_fuzz::differential::check(data));
