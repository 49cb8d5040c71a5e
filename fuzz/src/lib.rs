//! The fuzz targets' checks, one module per target (`fuzz_targets/<name>.rs`
//! calls `<name>::check`), and the helpers they share. The reference oracle
//! and the file fixtures come from the test-support crate (`tests/support`).
//!
//! Every check panics on a violated invariant: that is how the fuzzer
//! reports a finding.

pub mod differential;
pub mod json_tokens;
pub mod parse_touch;
pub mod write_read;

use safetensors_nano::{Error, TensorRef};
use safetensors_nano_test_support::files::json_of;

/// The input as given, and (when it differs) the input with its length
/// prefix reduced modulo what fits, so that mutated headers still reach the
/// JSON and layout rules instead of stopping at docs/format.md R2 header-limit
/// or R3 header-fits.
pub fn variants(data: &[u8]) -> Vec<std::borrow::Cow<'_, [u8]>> {
    let mut out = vec![std::borrow::Cow::Borrowed(data)];
    if let Some((prefix, rest)) = data.split_first_chunk::<8>() {
        let n = u64::from_le_bytes(*prefix);
        let fitted = n % (rest.len() as u64 + 1);
        if fitted != n {
            let mut fixed = fitted.to_le_bytes().to_vec();
            fixed.extend_from_slice(rest);
            out.push(std::borrow::Cow::Owned(fixed));
        }
    }
    out
}

/// Checks an error's accessors: its text, and that the offset and the
/// tensor it names lie inside the header.
pub fn touch_error(e: &Error, bytes: &[u8]) {
    let text = e.to_string();
    assert!(!text.is_empty());
    assert!(!e.kind().name().is_empty());
    let _ = format!("{e:?}");
    let json = json_of(bytes);
    if let Some(offset) = e.offset() {
        let json = json.expect("an error with a header offset needs a header");
        assert!(
            offset <= json.len() as u64,
            "offset {offset} past header of {}: {e}",
            json.len()
        );
    }
    if let Some(TensorRef::Header { start, len }) = e.tensor() {
        let json = json.expect("an error naming a tensor needs a header");
        let end = u64::from(start) + u64::from(len);
        assert!(end <= json.len() as u64, "tensor span past the header: {e}");
        let name = e.tensor_name(json).expect("tensor_name resolves");
        let _ = name.to_string();
    }
}

/// Checks a [`safetensors_nano::Name`]'s accessors against each other.
pub fn check_name(name: safetensors_nano::Name<'_>) -> String {
    let s = name.to_string();
    assert_eq!(name.chars().collect::<String>(), s);
    assert_eq!(name.decoded_len(), s.len());
    if let Some(plain) = name.as_str() {
        assert_eq!(plain, s);
    }
    assert!(name == s.as_str());
    assert_eq!(name.cmp_str(&s), std::cmp::Ordering::Equal);
    assert_eq!(name.cmp_name(&name), std::cmp::Ordering::Equal);
    let mut buf = vec![0u8; s.len()];
    assert_eq!(name.decode_into(&mut buf), Some(s.as_str()));
    if !s.is_empty() {
        let mut short = vec![0u8; s.len() - 1];
        assert_eq!(name.decode_into(&mut short), None);
    }
    s
}

#[cfg(test)]
mod tests {
    use safetensors_nano::Dtype;
    use safetensors_nano_test_support::files::parse;

    /// The dtype names in the committed fuzz inputs (the dictionary, written
    /// by hand, and the `all_dtypes` seed, by `seeds/make_seeds.py`) are
    /// those of `Dtype::ALL`, every one of them and no other.
    #[test]
    fn dictionary_and_seeds_name_every_dtype() {
        let dir = env!("CARGO_MANIFEST_DIR");
        let mut all: Vec<&str> = Dtype::ALL.iter().map(|d| d.name()).collect();
        all.sort_unstable();

        let dict = std::fs::read_to_string(format!("{dir}/safetensors.dict")).unwrap();
        let mut in_dict: Vec<&str> = dict
            .lines()
            .filter(|l| l.starts_with("dtype_"))
            .map(|l| {
                // dtype_f32="\"F32\""
                let value = l.split_once('=').expect("name=value").1;
                value
                    .strip_prefix("\"\\\"")
                    .and_then(|v| v.strip_suffix("\\\"\""))
                    .expect("a quoted JSON string")
            })
            .collect();
        in_dict.sort_unstable();
        assert_eq!(in_dict, all, "fuzz/safetensors.dict");

        for target in ["parse_touch", "differential"] {
            let seed = std::fs::read(format!("{dir}/seeds/{target}/all_dtypes")).unwrap();
            let st = parse(&seed).expect("the all_dtypes seed is valid");
            let mut in_seed: Vec<&str> = st.iter().map(|v| v.dtype().name()).collect();
            in_seed.sort_unstable();
            assert_eq!(in_seed, all, "fuzz/seeds/{target}/all_dtypes");
        }
    }
}
