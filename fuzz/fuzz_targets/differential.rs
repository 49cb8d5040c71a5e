//! (c) Any bytes: our verdict against the reference crate's. Equal, or a
//! difference SPEC.md lists; anything else is a finding.
#![no_main]

use safetensors_nano_fuzz::{compare, variants, Agreement};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if safetensors_nano_fuzz::known_finding(data) {
        return;
    }
    for input in variants(data) {
        if let Agreement::Disagree(why) = compare(&input) {
            panic!(
                "disagreement: {why}\ninput: {:?}",
                String::from_utf8_lossy(&input)
            );
        }
    }
});
