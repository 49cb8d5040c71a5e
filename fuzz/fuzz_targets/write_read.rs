//! (b) Structured random tensors: write, read back equal, and the same
//! bytes as the reference writer where SPEC.md says so.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: safetensors_nano_fuzz::WriteInput| {
    safetensors_nano_fuzz::write_read(&input);
});
