//! The reference implementation (the `safetensors` crate 0.8) as an oracle:
//! its verdict on the same bytes, classified against ours, and its writer.
//!
//! [`compare`] says how the two verdicts relate: the same, a deliberate
//! difference that docs/format.md lists ([`Difference`]), a verdict the
//! reference itself gives only on some runs, or a disagreement (a bug on one
//! side).

use std::collections::HashMap;
use std::fmt;
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use safetensors_nano::{Dtype, Error, ErrorKind, SafeTensors, Slot};

use crate::files::{json_of, parse};
use crate::tensors::Owned;

/// A deliberate difference from the reference, as docs/format.md names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Difference {
    /// docs/format.md D1 no-duplicates: duplicate tensor names and metadata
    /// keys are rejected (the reference keeps the last one).
    NoDuplicates,
    /// docs/format.md D2 objects-only: a tensor entry written as an array, a
    /// dtype written as a map, are rejected.
    ObjectsOnly,
    /// docs/format.md D3 zero-dim: any zero dimension makes 0 elements (the
    /// reference multiplies left to right and may overflow first).
    ZeroDim,
}

impl Difference {
    /// Its name in docs/format.md.
    pub fn rule(self) -> &'static str {
        match self {
            Difference::NoDuplicates => "D1 no-duplicates",
            Difference::ObjectsOnly => "D2 objects-only",
            Difference::ZeroDim => "D3 zero-dim",
        }
    }
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "docs/format.md {}", self.rule())
    }
}

/// How our verdict relates to the reference's on the same bytes.
#[derive(Debug, PartialEq, Eq)]
pub enum Agreement {
    /// Same accept/reject, same error variant; when both accept, the same
    /// tensors (names, dtypes, shapes, bytes) and metadata.
    Same,
    /// A difference docs/format.md lists as deliberate.
    Listed(Difference),
    /// The reference's own verdict varies from run to run on this input
    /// (its tensor order among equal `data_offsets` is its `HashMap`'s,
    /// randomly seeded), and ours is one of the verdicts it gives.
    ReferenceVaries,
    /// Anything else: a bug on one side.
    Disagree(String),
}

/// The reference's error variant name (the text before the payload).
pub fn variant_name(e: &safetensors::SafeTensorError) -> String {
    format!("{e:?}")
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect()
}

/// The reference checks element counts left to right: it overflows when
/// the product of the dimensions before the first zero overflows, where we
/// say 0 elements (docs/format.md D3 zero-dim).
fn reference_overflows_on_zero_dim(st: &SafeTensors<'_, Vec<Slot>>) -> bool {
    st.iter().any(|view| {
        let dims: Vec<u64> = view.shape().iter().collect();
        let Some(zero) = dims.iter().position(|&d| d == 0) else {
            return false;
        };
        let before = dims[..zero].iter().try_fold(1u64, |p, &d| p.checked_mul(d));
        before.is_none()
    })
}

/// One tensor entry as serde_json reads the header: its shape (`None`
/// when not all non-negative integers) and data offsets.
struct LooseTensor {
    shape: Option<Vec<u64>>,
    offsets: Option<(u64, u64)>,
}

/// The tensor entries of a header, read loosely with serde_json.
fn loose_tensors(bytes: &[u8]) -> Option<HashMap<String, LooseTensor>> {
    let value = serde_value(json_of(bytes)?)?;
    let mut out = HashMap::new();
    for (name, entry) in value.as_object()? {
        if name == "__metadata__" {
            continue;
        }
        let ints = |v: Option<&serde_json::Value>| -> Option<Vec<u64>> {
            v?.as_array()?
                .iter()
                .map(serde_json::Value::as_u64)
                .collect()
        };
        let offsets = ints(entry.get("data_offsets")).and_then(|o| match o[..] {
            [b, e] => Some((b, e)),
            _ => None,
        });
        out.insert(
            name.clone(),
            LooseTensor {
                shape: ints(entry.get("shape")),
                offsets,
            },
        );
    }
    Some(out)
}

/// Our layout validation failed with `e` where the reference reports
/// `ValidationOverflow`: listed (we fail later, on another rule) if a tensor ordered before the one we fail
/// on (or any, when we fail on the buffer length) has a zero dimension
/// after an overflowing prefix. We accept that tensor and go on; the
/// reference stops at it.
fn zero_dim_overflow_before(e: &Error, bytes: &[u8]) -> bool {
    let layout = matches!(
        e.kind(),
        ErrorKind::InvalidOffset { .. }
            | ErrorKind::MisalignedSlice { .. }
            | ErrorKind::TensorInvalidInfo { .. }
            | ErrorKind::MetadataIncompleteBuffer { .. }
    );
    let Some(tensors) = loose_tensors(bytes).filter(|_| layout) else {
        return false;
    };
    let failing = json_of(bytes)
        .and_then(|json| e.tensor_name(json))
        .and_then(|name| tensors.get(&name.to_string()))
        .and_then(|t| t.offsets);
    tensors.values().any(|t| {
        let Some(shape) = &t.shape else { return false };
        let Some(zero) = shape.iter().position(|&d| d == 0) else {
            return false;
        };
        let overflows = shape[..zero]
            .iter()
            .try_fold(1u64, |p, &d| p.checked_mul(d))
            .is_none();
        let before = match (failing, t.offsets) {
            (Some(f), Some(o)) => o <= f,
            (None, _) => matches!(e.kind(), ErrorKind::MetadataIncompleteBuffer { .. }),
            _ => false,
        };
        overflows && before
    })
}

/// Compares two accepted files in full.
fn compare_accepted(
    ours: &SafeTensors<'_, Vec<Slot>>,
    theirs: &safetensors::SafeTensors<'_>,
    bytes: &[u8],
) -> Agreement {
    if ours.len() != theirs.len() {
        return Agreement::Disagree(format!(
            "both accept, {} vs {} tensors",
            ours.len(),
            theirs.len()
        ));
    }
    for (name, tv) in theirs.iter() {
        let Some(v) = ours.tensor(name) else {
            return Agreement::Disagree(format!("reference has tensor {name:?}, we do not"));
        };
        let shape: Vec<u64> = v.shape().iter().collect();
        let their_shape: Vec<u64> = tv.shape().iter().map(|&d| d as u64).collect();
        if v.dtype().name() != format!("{:?}", tv.dtype()) || shape != their_shape {
            return Agreement::Disagree(format!(
                "tensor {name:?}: ours {} {shape:?}, reference {:?} {their_shape:?}",
                v.dtype(),
                tv.dtype()
            ));
        }
        if !std::ptr::eq(v.data(), tv.data()) {
            return Agreement::Disagree(format!("tensor {name:?}: different bytes"));
        }
    }
    let their_meta = safetensors::SafeTensors::read_metadata(bytes)
        .map(|(_, m)| m.metadata().clone())
        .unwrap_or_default();
    let our_meta: Option<HashMap<String, String>> = ours.metadata().map(|m| {
        m.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    });
    if our_meta != their_meta {
        return Agreement::Disagree(format!(
            "metadata: ours {our_meta:?}, reference {their_meta:?}"
        ));
    }
    Agreement::Same
}

/// Our verdict against the reference's, with every difference classified.
pub fn compare(bytes: &[u8]) -> Agreement {
    let ours = parse(bytes);
    let theirs = safetensors::SafeTensors::deserialize(bytes);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => compare_accepted(a, b, bytes),
        (Err(e), Err(r)) if e.kind().reference_name() == Some(variant_name(r).as_str()) => {
            Agreement::Same
        }
        (Err(e), r)
            if matches!(
                e.kind(),
                ErrorKind::DuplicateTensorName | ErrorKind::DuplicateMetadataKey
            ) =>
        {
            // The reference keeps the last duplicate; it then accepts, or fails
            // layout validation on the lost entry's bytes. It cannot fail the
            // JSON or schema pass, which we run first.
            match r {
                Ok(_) => Agreement::Listed(Difference::NoDuplicates),
                Err(r) if is_layout(&variant_name(r)) => {
                    Agreement::Listed(Difference::NoDuplicates)
                }
                Err(r) => Agreement::Disagree(format!("ours {e:?} vs reference {r:?}")),
            }
        }
        (Err(e), r)
            if matches!(
                e.kind(),
                ErrorKind::TensorNotObject | ErrorKind::DtypeNotString
            ) =>
        {
            match r {
                Ok(_) => Agreement::Listed(Difference::ObjectsOnly),
                Err(r) if is_layout(&variant_name(r)) => Agreement::Listed(Difference::ObjectsOnly),
                Err(r) => Agreement::Disagree(format!("ours {e:?} vs reference {r:?}")),
            }
        }
        (Ok(st), Err(r))
            if variant_name(r) == "ValidationOverflow" && reference_overflows_on_zero_dim(st) =>
        {
            Agreement::Listed(Difference::ZeroDim)
        }
        (Err(e), Err(r))
            if variant_name(r) == "ValidationOverflow" && zero_dim_overflow_before(e, bytes) =>
        {
            Agreement::Listed(Difference::ZeroDim)
        }
        (Ok(st), Err(r)) => {
            Agreement::Disagree(format!("ours Ok({} tensors) vs reference {r:?}", st.len()))
        }
        (Err(e), Ok(st)) => {
            Agreement::Disagree(format!("ours {e:?} vs reference Ok({} tensors)", st.len()))
        }
        (Err(e), Err(r)) if reference_can_say(e, bytes) => {
            let _ = r;
            Agreement::ReferenceVaries
        }
        (Err(e), Err(r)) => Agreement::Disagree(format!("ours {e:?} vs reference {r:?}")),
    }
}

/// Whether some run of the reference (each with a fresh random `HashMap`
/// seed) gives our error's variant. Only asked for layout errors on
/// headers where two tensors have the same `data_offsets`, the one case
/// where the reference's order, and so its first failure, is random.
fn reference_can_say(e: &Error, bytes: &[u8]) -> bool {
    let Some(ours) = e.kind().reference_name() else {
        return false;
    };
    if !is_layout(ours) {
        return false;
    }
    let Some(tensors) = loose_tensors(bytes) else {
        return false;
    };
    let mut offsets: Vec<(u64, u64)> = tensors.values().filter_map(|t| t.offsets).collect();
    offsets.sort_unstable();
    if !offsets.windows(2).any(|w| w[0] == w[1]) {
        return false;
    }
    (0..64).any(|_| match safetensors::SafeTensors::deserialize(bytes) {
        Err(r) => variant_name(&r) == ours,
        Ok(_) => false,
    })
}

/// Reference errors that come from layout validation, after the header's
/// JSON was read in full.
fn is_layout(name: &str) -> bool {
    matches!(
        name,
        "InvalidOffset"
            | "ValidationOverflow"
            | "MisalignedSlice"
            | "TensorInvalidInfo"
            | "MetadataIncompleteBuffer"
    )
}

/// serde_json's reading of `text` as a JSON document.
pub fn serde_value(text: &[u8]) -> Option<serde_json::Value> {
    serde_json::from_str(std::str::from_utf8(text).ok()?).ok()
}

/// The reference crate's dtype for ours (by name: the reference reads
/// every name of [`Dtype::ALL`]).
pub fn dtype(d: Dtype) -> safetensors::Dtype {
    serde_json::from_str(&format!("\"{}\"", d.name())).expect("the reference knows every dtype")
}

/// The reference crate's `serialize` of the same tensors.
pub fn serialize(tensors: &[Owned], metadata: Option<&[(String, String)]>) -> Vec<u8> {
    let views: Vec<(String, safetensors::tensor::TensorView<'_>)> = tensors
        .iter()
        .map(|t| {
            let shape = t
                .shape
                .iter()
                .map(|&d| usize::try_from(d).unwrap())
                .collect();
            let view = safetensors::tensor::TensorView::new(dtype(t.dtype), shape, &t.data)
                .expect("reference TensorView");
            (t.name.clone(), view)
        })
        .collect();
    let metadata: Option<HashMap<String, String>> = metadata.map(|m| m.iter().cloned().collect());
    safetensors::tensor::serialize(views, metadata).expect("reference serialize")
}

#[cfg(test)]
mod tests {
    use std::borrow::ToOwned;

    use super::*;
    use crate::files::file;

    const T: &str = r#"{"dtype":"U8","shape":[2],"data_offsets":[0,2]}"#;

    #[test]
    fn every_dtype_has_its_reference_twin() {
        for d in Dtype::ALL {
            assert_eq!(format!("{:?}", dtype(d)), d.name());
        }
    }

    #[test]
    fn verdicts_are_classified() {
        assert_eq!(
            compare(&file(&format!(r#"{{"a":{T}}}"#), 2)),
            Agreement::Same
        );
        assert_eq!(compare(b"\x01"), Agreement::Same);
        assert_eq!(
            compare(&file(&format!(r#"{{"a":{T},"a":{T}}}"#), 2)),
            Agreement::Listed(Difference::NoDuplicates)
        );
        assert_eq!(
            compare(&file(r#"{"a":["U8",[2],[0,2]]}"#, 2)),
            Agreement::Listed(Difference::ObjectsOnly)
        );
        let zero = r#"{"a":{"dtype":"U8","shape":[4294967296,4294967296,0],"data_offsets":[0,0]}}"#;
        assert_eq!(
            compare(&file(zero, 0)),
            Agreement::Listed(Difference::ZeroDim)
        );
        assert!(matches!(
            compare(&file(&format!(r#"{{"a":{T}}}"#), 3)),
            Agreement::Same
        ));
    }

    #[test]
    fn differences_cite_the_format_doc() {
        assert_eq!(
            Difference::ZeroDim.to_string(),
            "docs/format.md D3 zero-dim"
        );
    }

    #[test]
    fn the_reference_writer_agrees_with_ours() {
        let tensors = [
            Owned::new("x", Dtype::U8, &[3], &[1, 2, 3]),
            Owned::new("y", Dtype::F32, &[1], &[0, 0, 128, 63]),
        ];
        let meta = [("format".to_owned(), "pt".to_owned())];
        assert_eq!(
            crate::tensors::write(&tensors, Some(&meta)).unwrap(),
            serialize(&tensors, Some(&meta))
        );
    }
}
