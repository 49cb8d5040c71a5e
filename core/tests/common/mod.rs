//! Helpers shared by the integration tests.
#![allow(dead_code)]

use safetensors_nano::{Error, ErrorKind, SafeTensors, Slot};

/// A file from a header text and a data length (data bytes are 0..).
pub fn file(header: &str, data_len: usize) -> Vec<u8> {
    let mut f = (header.len() as u64).to_le_bytes().to_vec();
    f.extend_from_slice(header.as_bytes());
    f.extend((0..data_len).map(|i| i as u8));
    f
}

/// Our verdict with a table big enough for anything.
pub fn ours(bytes: &[u8]) -> Result<usize, Error> {
    let slots = vec![Slot::EMPTY; 1 + bytes.len() / 4];
    SafeTensors::parse(bytes, slots).map(|st| st.len())
}

/// The reference's verdict: the number of tensors, or its error variant's name.
pub fn reference(bytes: &[u8]) -> Result<usize, String> {
    match safetensors::SafeTensors::deserialize(bytes) {
        Ok(st) => Ok(st.len()),
        Err(e) => {
            let debug = format!("{e:?}");
            let name: String = debug.chars().take_while(|c| c.is_alphanumeric()).collect();
            Err(name)
        }
    }
}

/// How our verdict relates to the reference's on the same bytes.
#[derive(Debug, PartialEq, Eq)]
pub enum Agreement {
    /// Same accept/reject, same error variant (or both accept).
    Same,
    /// A difference SPEC.md lists as deliberate.
    Listed(&'static str),
    /// Anything else: a bug on one side.
    Disagree(String),
}

/// Whether any dimension of any tensor in a valid-looking header is 0
/// (where our element-count rule differs from the reference's).
fn header_has_zero_dim(bytes: &[u8]) -> bool {
    let Some(text) = bytes.get(8..).and_then(|b| std::str::from_utf8(b).ok()) else {
        return false;
    };
    let Ok(value) =
        serde_json::from_str::<serde_json::Value>(text.trim_end_matches(|c: char| c != '}'))
    else {
        return false;
    };
    value.as_object().is_some_and(|o| {
        o.values().any(|t| {
            t.get("shape")
                .and_then(|s| s.as_array())
                .is_some_and(|dims| dims.iter().any(|d| d.as_u64() == Some(0)))
        })
    })
}

pub fn compare(bytes: &[u8]) -> Agreement {
    let ours = ours(bytes);
    let theirs = reference(bytes);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) if a == b => Agreement::Same,
        (Err(e), Err(name)) if e.kind().reference_name() == Some(name.as_str()) => Agreement::Same,
        (Err(e), _)
            if matches!(
                e.kind(),
                ErrorKind::DuplicateTensorName | ErrorKind::DuplicateMetadataKey
            ) =>
        {
            Agreement::Listed("duplicates rejected")
        }
        (Err(e), _)
            if matches!(
                e.kind(),
                ErrorKind::TensorNotObject | ErrorKind::DtypeNotString
            ) =>
        {
            Agreement::Listed("array entries / map dtypes rejected")
        }
        (Ok(_), Err(name)) if name == "ValidationOverflow" && header_has_zero_dim(bytes) => {
            Agreement::Listed("zero dimension makes 0 elements")
        }
        (Ok(a), Ok(b)) => Agreement::Disagree(format!("both accept, {a} vs {b} tensors")),
        _ => Agreement::Disagree(format!("ours {ours:?} vs reference {theirs:?}")),
    }
}
