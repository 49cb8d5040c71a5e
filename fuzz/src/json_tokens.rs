//! Target `json_tokens`: the JSON tokenizer, through the header grammar,
//! against serde_json (the JSON parser the reference uses).

use safetensors_nano::ErrorKind;
use safetensors_nano_test_support::files::{file_with, parse};
use safetensors_nano_test_support::reference::serde_value;

use crate::{check_name, touch_error};

/// Nesting depth of a JSON value (a scalar is 0, `[]` is 1).
fn depth(v: &serde_json::Value) -> usize {
    match v {
        serde_json::Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        serde_json::Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// The content of a JSON string: `input` between quotes is one string
/// token only if it has no unescaped quote and does not end in an escape.
fn is_string_content(input: &[u8]) -> bool {
    let mut escaped = false;
    for &b in input {
        match (escaped, b) {
            (true, _) => escaped = false,
            (false, b'\\') => escaped = true,
            (false, b'"') => return false,
            _ => {}
        }
    }
    !escaped
}

/// Containers a value inside a tensor entry may open: the reference's
/// serde_json fails when the 128th container opens, and the header object
/// and the tensor entry are two of them.
const VALUE_DEPTH_LIMIT: usize = 125;

/// The lexer on arbitrary input, checked against serde_json (the JSON
/// parser the reference uses), three ways:
/// 0. any text as the value of an ignored field;
/// 1. any text as the raw content of a tensor name;
/// 2. any text as the raw content of a metadata value.
pub fn check(data: &[u8]) {
    let Some((&mode, input)) = data.split_first() else {
        return;
    };
    match mode % 3 {
        0 => {
            let pre = br#"{"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":"#;
            let file = file_with(pre, input, b"}}", 1);
            let json = &file[8..file.len() - 1];
            let result = parse(&file);
            let show = || {
                format!(
                    "value {:?}: ours {:?}",
                    String::from_utf8_lossy(input),
                    result.as_ref().map(|s| s.len())
                )
            };
            // We never accept a header that is not JSON.
            if result.is_ok() {
                assert!(serde_value(json).is_some(), "{}", show());
            }
            // Any one JSON value is accepted in an ignored field, up to the
            // nesting limit, and rejected past it.
            if let Some(v) = serde_value(input) {
                if depth(&v) <= VALUE_DEPTH_LIMIT {
                    assert!(result.is_ok(), "{}", show());
                } else {
                    let e = result.as_ref().err().copied();
                    assert_eq!(
                        e.map(|e| e.kind()),
                        Some(ErrorKind::NestingTooDeep),
                        "{}",
                        show()
                    );
                }
            }
            if let Err(e) = &result {
                touch_error(e, &file);
            }
        }
        1 => {
            if !is_string_content(input) {
                return;
            }
            let file = file_with(
                b"{\"",
                input,
                br#"":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#,
                1,
            );
            let json = &file[8..file.len() - 1];
            let expected =
                serde_value(json).and_then(|v| Some(v.as_object()?.keys().next()?.clone()));
            if expected.as_deref() == Some("__metadata__") {
                return;
            }
            match (parse(&file), expected) {
                (Ok(st), Some(name)) => {
                    let view = st.iter().next().expect("one tensor");
                    assert_eq!(check_name(view.name()), name);
                    assert!(st.tensor(&name).is_some());
                }
                (Err(e), None) => {
                    assert!(
                        e.kind().reference_name() == Some("InvalidHeaderDeserialization")
                            || e.kind() == ErrorKind::InvalidUtf8,
                        "{e}"
                    );
                    touch_error(&e, &file);
                }
                (a, b) => panic!(
                    "name {:?}: ours {:?}, serde_json {b:?}",
                    String::from_utf8_lossy(input),
                    a.map(|s| s.len())
                ),
            }
        }
        _ => {
            if !is_string_content(input) {
                return;
            }
            let file = file_with(br#"{"__metadata__":{"k":""#, input, b"\"}}", 0);
            let json = &file[8..];
            let expected = serde_value(json)
                .and_then(|v| Some(v.get("__metadata__")?.get("k")?.as_str()?.to_owned()));
            match (parse(&file), expected) {
                (Ok(st), Some(value)) => {
                    let meta = st.metadata().expect("metadata");
                    assert_eq!(check_name(meta.get("k").expect("key k")), value);
                }
                (Err(e), None) => touch_error(&e, &file),
                (a, b) => panic!(
                    "value {:?}: ours {:?}, serde_json {b:?}",
                    String::from_utf8_lossy(input),
                    a.map(|s| s.len())
                ),
            }
        }
    }
}
