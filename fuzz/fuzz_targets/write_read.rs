//! (b) Structured random tensors: write, read back equal, and the same
//! bytes as the reference writer where docs/format.md says so
//! (`safetensors_nano_fuzz::write_read`).
#![no_main]

libfuzzer_sys::fuzz_target!(|input: safetensors_nano_fuzz::write_read::WriteInput| {
    safetensors_nano_fuzz::write_read::check(&input);
});
