//! Target `differential`: any bytes (and their length-fitted variant), our
//! verdict against the reference crate's. Equal, or a difference
//! docs/format.md lists (D1 no-duplicates …); anything else is a finding.

use safetensors_nano_test_support::reference::{compare, Agreement};

use crate::variants;

/// The target: [`compare`] on each of [`variants`], which must not disagree.
pub fn check(data: &[u8]) {
    for input in variants(data) {
        if let Agreement::Disagree(why) = compare(&input) {
            panic!(
                "disagreement: {why}\ninput: {:?}",
                String::from_utf8_lossy(&input)
            );
        }
    }
}
