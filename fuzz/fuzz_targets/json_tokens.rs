//! (d) The JSON tokenizer: arbitrary text as an ignored value, a tensor
//! name and a metadata value, against serde_json.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if safetensors_nano_fuzz::known_finding(data) {
        return;
    }
    safetensors_nano_fuzz::json_tokens(data);
});
