//! The summary `inspect` ends with, as the Hub shows a model: parameters
//! (elements: an F4 or F6 value is one parameter, whatever its bits) and
//! bytes (the real byte sizes) per dtype, then the totals.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Map, Value};

/// Parameters and bytes of one dtype, or of all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    /// Elements.
    pub parameters: u64,
    /// Bytes of tensor data.
    pub bytes: u64,
}

/// Counts per dtype (by name, sorted) and in total.
#[derive(Debug, Default)]
pub struct Summary {
    by_dtype: BTreeMap<&'static str, Count>,
    total: Count,
}

impl Summary {
    /// Adds a tensor: its dtype's name, element count and byte length.
    pub fn add(&mut self, dtype: &'static str, elements: u64, bytes: u64) {
        for count in [self.by_dtype.entry(dtype).or_default(), &mut self.total] {
            count.parameters = count.parameters.saturating_add(elements);
            count.bytes = count.bytes.saturating_add(bytes);
        }
    }

    /// `{"dtypes":{"F32":{"parameters","bytes"},…},"parameters","bytes"}`.
    pub fn json(&self) -> Value {
        let dtypes: Map<String, Value> = self
            .by_dtype
            .iter()
            .map(|(name, c)| {
                (
                    (*name).to_owned(),
                    json!({"parameters": c.parameters, "bytes": c.bytes}),
                )
            })
            .collect();
        json!({
            "dtypes": dtypes,
            "parameters": self.total.parameters,
            "bytes": self.total.bytes,
        })
    }

    /// The text: a row per dtype, then `total`.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "  {:<11}  {:>20}  {:>20}",
            "dtype", "parameters", "bytes"
        );
        let rows = self.by_dtype.iter().map(|(n, c)| (*n, c));
        for (name, c) in rows.chain([("total", &self.total)]) {
            let _ = writeln!(out, "  {name:<11}  {:>20}  {:>20}", c.parameters, c.bytes);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_per_dtype_and_in_total() {
        let mut s = Summary::default();
        s.add("F32", 6, 24);
        s.add("F4", 8, 4);
        s.add("F32", 2, 8);
        assert_eq!(
            s.json(),
            json!({"dtypes": {"F32": {"parameters": 8, "bytes": 32}, "F4": {"parameters": 8, "bytes": 4}}, "parameters": 16, "bytes": 36})
        );
        assert!(s.text().lines().last().unwrap().contains("total"));
    }
}
