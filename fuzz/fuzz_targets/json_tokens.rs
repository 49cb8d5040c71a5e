//! (d) The JSON tokenizer: arbitrary text as an ignored value, a tensor
//! name and a metadata value, against serde_json
//! (`safetensors_nano_fuzz::json_tokens`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| safetensors_nano_fuzz::json_tokens::check(data));
