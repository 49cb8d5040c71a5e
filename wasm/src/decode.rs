//! Decoding one bounded chunk of float elements through the core.

use safetensors_nano::decode::{decode_f32_into, elements_in};
use safetensors_nano::Dtype;

use crate::describe::{fail_core, State};

impl State {
    /// Decodes `input` (whole elements of the dtype with index `dtype`)
    /// into `self.floats`; on error describes it and returns `None`.
    pub fn decode(&mut self, dtype: u8, input: &[u8]) -> Option<&[f32]> {
        let Some(&dtype) = Dtype::ALL.get(usize::from(dtype)) else {
            crate::describe::fail(
                self,
                "UnknownDtype",
                format_args!("no dtype with index {dtype}"),
                None,
                None,
            );
            return None;
        };
        // A length that is not whole elements: let the core name the error.
        let n = elements_in(dtype, input.len() as u64)
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0);
        self.floats.clear();
        self.floats.resize(n, 0.0);
        let mut floats = core::mem::take(&mut self.floats);
        let result = decode_f32_into(dtype, input, &mut floats);
        self.floats = floats;
        match result {
            Ok(()) => self.floats.get(..n),
            Err(e) => {
                fail_core(self, e, &[]);
                None
            }
        }
    }
}
