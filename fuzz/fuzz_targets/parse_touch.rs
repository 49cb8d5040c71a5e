//! (a) Any bytes: parse, then touch every tensor, view and accessor, and
//! check that the whole-file, header-only, small-table and lower-limit
//! paths agree (`safetensors_nano_fuzz::parse_touch`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| safetensors_nano_fuzz::parse_touch::check(data));
