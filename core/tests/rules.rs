//! One test per reading rule of docs/format.md (R1 prefix-present …
//! R13 exact-length) and per deliberate difference (D1 no-duplicates …):
//! our verdict (kind and position), and agreement with the reference crate.

use safetensors_nano::{ErrorKind, Expected, Field, Parser, SafeTensors, Slot, Status, Table};
use safetensors_nano_test_support::files::{file, verdict};
use safetensors_nano_test_support::reference::{compare, Agreement, Difference};

const T: &str = r#"{"dtype":"U8","shape":[2],"data_offsets":[0,2]}"#;

fn kind(bytes: &[u8]) -> ErrorKind {
    verdict(bytes).expect_err("should be rejected").kind()
}

fn same(bytes: &[u8]) {
    assert_eq!(
        compare(bytes),
        Agreement::Same,
        "{:?}",
        String::from_utf8_lossy(bytes)
    );
}

/// docs/format.md R1 prefix-present.
#[test]
fn r1_header_too_small() {
    for len in 0..8 {
        let bytes = vec![0u8; len];
        assert_eq!(kind(&bytes), ErrorKind::HeaderTooSmall { len: len as u64 });
        same(&bytes);
    }
}

/// docs/format.md R2 header-limit.
#[test]
fn r2_header_too_large_checked_before_file_length() {
    let mut bytes = 100_000_001u64.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{}");
    assert_eq!(
        kind(&bytes),
        ErrorKind::HeaderTooLarge {
            header_len: 100_000_001,
            limit: 100_000_000
        }
    );
    same(&bytes);
    let bytes = u64::MAX.to_le_bytes();
    assert!(matches!(kind(&bytes), ErrorKind::HeaderTooLarge { .. }));
    same(&bytes);
}

/// docs/format.md R2 header-limit, and D5 header-limit (configurable downward).
#[test]
fn r2_limit_is_configurable_downward_only() {
    let bytes = file(&format!("{{\"a\":{T}}}"), 2);
    let small = Parser::new().header_limit(16);
    let err = small.parse(&bytes, Table::<2>::new()).unwrap_err();
    assert!(matches!(
        err.kind(),
        ErrorKind::HeaderTooLarge { limit: 16, .. }
    ));
    let big = Parser::new().header_limit(u64::MAX);
    let mut huge = 100_000_001u64.to_le_bytes().to_vec();
    huge.extend_from_slice(b"{}");
    assert!(matches!(
        big.parse(&huge, Table::<2>::new()).unwrap_err().kind(),
        ErrorKind::HeaderTooLarge {
            limit: 100_000_000,
            ..
        }
    ));
}

/// docs/format.md R3 header-fits.
#[test]
fn r3_header_must_fit() {
    let mut bytes = 10u64.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{}");
    assert_eq!(
        kind(&bytes),
        ErrorKind::InvalidHeaderLength {
            header_len: 10,
            file_len: 10
        }
    );
    same(&bytes);
}

/// docs/format.md R4 utf8.
#[test]
fn r4_utf8() {
    let bytes = {
        let header = b"{\"a\xff\":1}";
        let mut f = (header.len() as u64).to_le_bytes().to_vec();
        f.extend_from_slice(header);
        f
    };
    let err = verdict(&bytes).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (ErrorKind::InvalidUtf8, Some(3))
    );
    same(&bytes);
    // A BOM is valid UTF-8 but not JSON.
    let bom = file("\u{feff}{}", 0);
    assert!(matches!(
        kind(&bom),
        ErrorKind::UnexpectedByte {
            found: 0xef,
            expected: Expected::Object
        }
    ));
    same(&bom);
    // Invalid UTF-8 anywhere wins over an earlier JSON error, as in the
    // reference (which checks the whole header first); valid non-ASCII text
    // is checked inside names and values of every length.
    let raw = |header: &[u8]| {
        let mut f = (header.len() as u64).to_le_bytes().to_vec();
        f.extend_from_slice(header);
        f
    };
    for (header, expected) in [
        (&b"{\"x\":1, \xff}"[..], (ErrorKind::InvalidUtf8, Some(8))),
        (b"[1] \xc3", (ErrorKind::InvalidUtf8, Some(4))),
        (
            b"{\"long name, then \xe2\x82\":{}}",
            (ErrorKind::InvalidUtf8, Some(18)),
        ),
        (
            b"{\"__metadata__\":{\"k\":\"\xf0\x9f\x98\x80\xc0\xaf\"}}",
            (ErrorKind::InvalidUtf8, Some(26)),
        ),
    ] {
        let err = verdict(&raw(header)).unwrap_err();
        assert_eq!((err.kind(), err.offset()), expected, "{header:?}");
        same(&raw(header));
    }
    let valid = file(
        "{\"__metadata__\":{\"clé\":\"значение 😀 long enough to span words\"}}",
        0,
    );
    assert!(verdict(&valid).is_ok());
    same(&valid);
    let outside = file("{} é", 0);
    assert!(matches!(
        kind(&outside),
        ErrorKind::UnexpectedByte { found: 0xc3, .. }
    ));
    same(&outside);
}

/// docs/format.md R5 one-object.
#[test]
fn r5_one_object_with_json_whitespace_around() {
    for ok in ["{}", " \t\r\n{} \t\r\n", "{}        "] {
        let bytes = file(ok, 0);
        assert_eq!(verdict(&bytes).unwrap(), 0, "{ok:?}");
        same(&bytes);
    }
    for (bad, at) in [
        ("{}\0", 2),
        ("{}\x0c", 2),
        ("{}{}", 2),
        ("[]", 0),
        ("", 0),
        ("\"x\"", 0),
        ("{} x", 3),
    ] {
        let bytes = file(bad, 0);
        let err = verdict(&bytes).unwrap_err();
        assert_eq!(err.offset(), Some(at), "{bad:?}: {err}");
        same(&bytes);
    }
}

/// docs/format.md R6 strict-json.
#[test]
fn r6_strict_json() {
    let cases = [
        r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2],}}"#,
        r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]} /* c */}"#,
        r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"x":NaN}}"#,
        r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"x":01}}"#,
        "{\"a\u{1}\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}",
        r#"{"a\ud800":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#,
        r#"{"a\udc00":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#,
        r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"x":1e400}}"#,
        r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"x":'s'}}"#,
        r#"{'a':1}"#,
    ];
    for header in cases {
        let bytes = file(header, 2);
        assert_eq!(
            verdict(&bytes).unwrap_err().kind().reference_name(),
            Some("InvalidHeaderDeserialization"),
            "{header}"
        );
        same(&bytes);
    }
    // Escapes are fine anywhere, surrogate pairs included, even in dtype strings.
    let header =
        r#"{"\ud83d\ude00\n":{"dtype":"\u0046\u0033\u0032","shape":[],"data_offsets":[0,4]}}"#;
    let bytes = file(header, 4);
    let st = SafeTensors::parse(&bytes, Table::<2>::new()).unwrap();
    assert_eq!(
        st.tensor("😀\n").unwrap().dtype(),
        safetensors_nano::Dtype::F32
    );
    same(&bytes);
}

/// docs/format.md R7 metadata.
#[test]
fn r7_metadata() {
    let ok = [
        format!("{{\"a\":{T}}}"),
        format!("{{\"__metadata__\":null,\"a\":{T}}}"),
        format!("{{\"a\":{T},\"__metadata__\":{{\"k\":\"v\",\"k2\":\"\"}}}}"),
        format!("{{\"\\u005f_metadata__\":{{\"k\":\"v\"}},\"a\":{T}}}"),
        // As long as "__metadata__", but a tensor.
        format!("{{\"__metadata_x\":{T}}}"),
    ];
    for header in &ok {
        let bytes = file(header, 2);
        assert_eq!(verdict(&bytes).unwrap(), 1, "{header}");
        same(&bytes);
    }
    let bad = [
        (
            format!("{{\"__metadata__\":{{\"k\":1}},\"a\":{T}}}"),
            ErrorKind::MetadataValueNotString,
        ),
        (
            format!("{{\"__metadata__\":{{\"k\":null}},\"a\":{T}}}"),
            ErrorKind::MetadataValueNotString,
        ),
        (
            format!("{{\"__metadata__\":[],\"a\":{T}}}"),
            ErrorKind::MetadataNotObject,
        ),
        (
            format!("{{\"__metadata__\":\"x\",\"a\":{T}}}"),
            ErrorKind::MetadataNotObject,
        ),
        (
            format!("{{\"__metadata__\":null,\"a\":{T},\"__metadata__\":null}}"),
            ErrorKind::DuplicateMetadata,
        ),
    ];
    for (header, expected) in &bad {
        let bytes = file(header, 2);
        assert_eq!(kind(&bytes), *expected, "{header}");
        same(&bytes);
    }
}

/// docs/format.md R8 tensor-entry.
#[test]
fn r8_tensor_entries() {
    let good_extra = r#"{"a":{"x":{"y":[1,2,{"z":null}]},"dtype":"U8","shape":[2],"data_offsets":[0,2],"dtype_":true}}"#;
    let bytes = file(good_extra, 2);
    assert_eq!(verdict(&bytes).unwrap(), 1);
    same(&bytes);
    let bad = [
        (
            r#"{"a":{"dtype":"u8","shape":[2],"data_offsets":[0,2]}}"#,
            ErrorKind::UnknownDtype,
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"dtype":"U8"}}"#,
            ErrorKind::DuplicateField {
                field: Field::Dtype,
            },
        ),
        (
            r#"{"a":{"shape":[2],"data_offsets":[0,2]}}"#,
            ErrorKind::MissingField {
                field: Field::Dtype,
            },
        ),
        (
            r#"{"a":{"dtype":"U8","data_offsets":[0,2]}}"#,
            ErrorKind::MissingField {
                field: Field::Shape,
            },
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[2]}}"#,
            ErrorKind::MissingField {
                field: Field::DataOffsets,
            },
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0]}}"#,
            ErrorKind::DataOffsetsNotPair { found: 1 },
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2,4]}}"#,
            ErrorKind::DataOffsetsNotPair { found: 3 },
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[2.0],"data_offsets":[0,2]}}"#,
            ErrorKind::UnexpectedByte {
                found: b'.',
                expected: Expected::Integer,
            },
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2e0]}}"#,
            ErrorKind::UnexpectedByte {
                found: b'e',
                expected: Expected::Integer,
            },
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[-0],"data_offsets":[0,2]}}"#,
            ErrorKind::UnexpectedByte {
                found: b'-',
                expected: Expected::Integer,
            },
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,2]}}"#,
            ErrorKind::IntegerTooLarge,
        ),
        (
            r#"{"a":{"dtype":"U8","shape":2,"data_offsets":[0,2]}}"#,
            ErrorKind::UnexpectedByte {
                found: b'2',
                expected: Expected::Array,
            },
        ),
        (r#"{"a":5}"#, ErrorKind::TensorNotObject),
    ];
    for (header, expected) in bad {
        let bytes = file(header, 2);
        assert_eq!(kind(&bytes), expected, "{header}");
        assert_ne!(compare(&bytes), Agreement::Disagree(String::new()));
        if !matches!(expected, ErrorKind::TensorNotObject) {
            same(&bytes);
        }
    }
}

/// docs/format.md R8 tensor-entry.
#[test]
fn r8_unknown_fields_nest_up_to_the_reference_limit() {
    // The header object and the tensor object are two levels; serde_json
    // fails when the 128th container opens.
    for depth in [124usize, 125, 126, 200, 100_000] {
        let header = format!(
            "{{\"a\":{{\"x\":{}{},\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let bytes = file(&header, 2);
        same(&bytes);
        assert_eq!(verdict(&bytes).is_ok(), depth <= 125, "depth {depth}");
    }
}

/// docs/format.md R9 offsets-tile.
#[test]
fn r9_offsets_tile_the_buffer() {
    let cases = [
        // hole at the start
        (
            r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}"#,
            3,
        ),
        // overlap
        (
            r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}"#,
            3,
        ),
        // hole between
        (
            r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[3,5]}}"#,
            5,
        ),
        // end before begin
        (
            r#"{"a":{"dtype":"U8","shape":[0],"data_offsets":[2,0]}}"#,
            2,
        ),
    ];
    for (header, data) in cases {
        let bytes = file(header, data);
        assert!(
            matches!(kind(&bytes), ErrorKind::InvalidOffset { .. }),
            "{header}"
        );
        same(&bytes);
    }
    // Header order does not matter; offsets do.
    let bytes = file(
        r#"{"b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]},"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#,
        4,
    );
    let st = SafeTensors::parse(&bytes, Table::<2>::new()).unwrap();
    let offset_order: Vec<String> = st.iter().map(|t| t.name().to_string()).collect();
    let header_order: Vec<String> = st
        .iter_header_order()
        .map(|t| t.name().to_string())
        .collect();
    assert_eq!(
        (offset_order, header_order),
        (
            vec!["a".to_string(), "b".into()],
            vec!["b".to_string(), "a".into()]
        )
    );
    same(&bytes);
}

/// docs/format.md R9 offsets-tile.
#[test]
fn r9_error_names_the_tensor_and_its_position() {
    let header = r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"bad":{"dtype":"U8","shape":[2],"data_offsets":[3,5]}}"#;
    let bytes = file(header, 5);
    let err = verdict(&bytes).unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::InvalidOffset {
            expected_begin: 2,
            begin: 3,
            end: 5
        }
    );
    assert_eq!(err.tensor_name(&bytes[8..]).unwrap(), "bad");
    assert_eq!(err.offset(), Some(header.find("\"bad\"").unwrap() as u64));
}

/// docs/format.md R10 no-overflow.
#[test]
fn r10_overflow() {
    let header = r#"{"a":{"dtype":"U64","shape":[4294967296,4294967296],"data_offsets":[0,0]}}"#;
    let bytes = file(header, 0);
    assert_eq!(kind(&bytes), ErrorKind::ValidationOverflow);
    same(&bytes);
    let header = r#"{"a":{"dtype":"U64","shape":[2305843009213693952],"data_offsets":[0,0]}}"#;
    let bytes = file(header, 0);
    assert_eq!(kind(&bytes), ErrorKind::ValidationOverflow);
    same(&bytes);
}

/// docs/format.md R11 whole-bytes.
#[test]
fn r11_sub_byte_needs_whole_bytes() {
    let header = r#"{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}"#;
    let bytes = file(header, 2);
    assert_eq!(kind(&bytes), ErrorKind::MisalignedSlice { elements: 3 });
    same(&bytes);
    for (dtype, shape, len) in [("F4", 4, 2), ("F6_E2M3", 4, 3), ("F6_E3M2", 8, 6)] {
        let header =
            format!(r#"{{"a":{{"dtype":"{dtype}","shape":[{shape}],"data_offsets":[0,{len}]}}}}"#);
        let bytes = file(&header, len);
        assert_eq!(verdict(&bytes).unwrap(), 1);
        same(&bytes);
    }
}

/// docs/format.md R12 size-matches.
#[test]
fn r12_size_must_match() {
    let header = r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#;
    let bytes = file(header, 4);
    assert_eq!(
        kind(&bytes),
        ErrorKind::TensorInvalidInfo {
            expected: 8,
            found: 4
        }
    );
    same(&bytes);
}

/// docs/format.md R13 exact-length.
#[test]
fn r13_no_trailing_bytes_no_truncation() {
    for data in [1usize, 3] {
        let bytes = file(&format!("{{\"a\":{T}}}"), data);
        assert_eq!(
            kind(&bytes),
            ErrorKind::MetadataIncompleteBuffer {
                expected: 2,
                found: data as u64
            }
        );
        same(&bytes);
    }
}

#[test]
fn not_required_alignment_order_values_names() {
    // Unaligned header length, empty name, NaN bytes.
    let header = r#"{"":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#;
    let mut bytes = file(header, 0);
    bytes.extend_from_slice(&f32::NAN.to_le_bytes());
    assert_eq!(verdict(&bytes).unwrap(), 1);
    same(&bytes);
}

/// docs/format.md D1 no-duplicates.
#[test]
fn difference_duplicates_rejected() {
    let header = format!("{{\"a\":{T},\"a\":{T}}}");
    let bytes = file(&header, 2);
    assert_eq!(kind(&bytes), ErrorKind::DuplicateTensorName);
    assert_eq!(compare(&bytes), Agreement::Listed(Difference::NoDuplicates));
    let header = format!("{{\"a\":{T},\"\\u0061\":{T}}}");
    assert_eq!(kind(&file(&header, 2)), ErrorKind::DuplicateTensorName);
    let header = format!("{{\"__metadata__\":{{\"k\":\"1\",\"k\":\"2\"}},\"a\":{T}}}");
    assert_eq!(kind(&file(&header, 2)), ErrorKind::DuplicateMetadataKey);
}

/// docs/format.md D2 objects-only.
#[test]
fn difference_array_entries_and_map_dtypes_rejected() {
    let bytes = file(r#"{"a":["U8",[2],[0,2]]}"#, 2);
    assert_eq!(kind(&bytes), ErrorKind::TensorNotObject);
    assert_eq!(compare(&bytes), Agreement::Listed(Difference::ObjectsOnly));
    let bytes = file(
        r#"{"a":{"dtype":{"U8":null},"shape":[2],"data_offsets":[0,2]}}"#,
        2,
    );
    assert_eq!(kind(&bytes), ErrorKind::DtypeNotString);
    assert_eq!(compare(&bytes), Agreement::Listed(Difference::ObjectsOnly));
}

/// docs/format.md D3 zero-dim.
#[test]
fn difference_zero_dimension_means_zero_elements() {
    let bytes = file(
        r#"{"a":{"dtype":"F32","shape":[4294967296,4294967296,0],"data_offsets":[0,0]}}"#,
        0,
    );
    assert_eq!(verdict(&bytes).unwrap(), 1);
    assert_eq!(compare(&bytes), Agreement::Listed(Difference::ZeroDim));
    let bytes = file(
        r#"{"a":{"dtype":"F32","shape":[0,18446744073709551615],"data_offsets":[0,0]}}"#,
        0,
    );
    assert_eq!(verdict(&bytes).unwrap(), 1);
    same(&bytes);
}

/// docs/format.md D4 64-bit.
#[test]
fn offsets_are_64_bit() {
    // A header describing 5 GiB: valid as a header, checked against the file length.
    let header = r#"{"a":{"dtype":"U8","shape":[5368709120],"data_offsets":[0,5368709120]}}"#;
    let prefix = file(header, 0);
    let Status::Complete(h) = Parser::new()
        .parse_header(&prefix, Table::<1>::new())
        .unwrap()
    else {
        panic!("complete")
    };
    assert_eq!(h.data_len(), 5 << 30);
    assert!(h.check_file_len(prefix.len() as u64 + (5 << 30)).is_ok());
}

#[test]
fn capacity_exceeded_says_how_many_slots_are_needed() {
    let header = format!("{{\"__metadata__\":{{\"k\":\"v\"}},\"a\":{T},\"b\":{{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[2,2]}}}}");
    let bytes = file(&header, 2);
    let err = SafeTensors::parse(&bytes, Table::<2>::new()).unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::CapacityExceeded {
            capacity: 2,
            needed: 3
        }
    );
    let mut slots = [Slot::EMPTY; 3];
    let st = SafeTensors::parse(&bytes, &mut slots[..]).unwrap();
    assert_eq!(st.len(), 2);
    assert_eq!(st.metadata().unwrap().get("k").unwrap(), "v");
}

#[test]
fn every_prefix_of_a_valid_file() {
    let header = format!("{{\"__metadata__\":{{\"format\":\"pt\"}},\"w\":{T}}}   ");
    let bytes = file(&header, 2);
    for len in 0..bytes.len() {
        let prefix = &bytes[..len];
        // Whole-file parsing of a prefix always fails cleanly.
        assert!(verdict(prefix).is_err());
        // Header parsing says how much more it needs until the header is in.
        match Parser::new()
            .parse_header(prefix, Table::<4>::new())
            .unwrap()
        {
            Status::Partial { needed } => {
                assert_eq!(needed, if len < 8 { 8 } else { 8 + header.len() as u64 });
                assert!((len as u64) < needed);
            }
            Status::Complete(h) => {
                assert!(len >= 8 + header.len());
                assert_eq!(h.len(), 1);
            }
        }
    }
    assert_eq!(verdict(&bytes).unwrap(), 1);
}
