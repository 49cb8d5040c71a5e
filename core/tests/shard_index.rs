//! `ShardIndex` and `IndexCheck` (feature `std`): a sharded checkpoint's
//! index read strictly, and checked against its shards' headers.
#![cfg(feature = "std")]

use safetensors_nano::write::{serialize_to_vec, Tensor};
use safetensors_nano::{
    Dtype, ErrorKind, IndexError, IndexLimits, IndexProblem, SafeTensors, ShardIndex, Table,
};

fn shard(names: &[&str]) -> Vec<u8> {
    let data = [0u8; 4];
    let mut tensors: Vec<Tensor> = names
        .iter()
        .map(|n| Tensor::new(n, Dtype::F32, &[1], &data))
        .collect();
    serialize_to_vec(&mut tensors, None).unwrap()
}

#[test]
fn names_are_decoded_and_other_values_skipped() {
    let json = br#"{
        "metadata": {"format": {"nested": [1, 2.5e3, null, true]}, "total_size": 8, "x": "y"},
        "extra": [{"a": []}],
        "weight_map": {"caf\u00e9.w": "model-00001-of-00001.safetensors", "b\"q": "model-00001-of-00001.safetensors"}
    }"#;
    let index = ShardIndex::parse(json).unwrap();
    assert_eq!(index.total_size(), Some(8));
    let map: Vec<_> = index.weight_map().collect();
    assert_eq!(
        map,
        [
            ("b\"q", "model-00001-of-00001.safetensors"),
            ("café.w", "model-00001-of-00001.safetensors")
        ]
    );
    assert_eq!(index.shards(), ["model-00001-of-00001.safetensors"]);
    // metadata may be null, or absent.
    assert_eq!(
        ShardIndex::parse(br#"{"metadata": null, "weight_map": {}}"#)
            .unwrap()
            .total_size(),
        None
    );
}

#[test]
fn total_size_may_be_any_json_number_with_a_whole_value() {
    let total = |text: &str| {
        let json = format!(r#"{{"metadata": {{"total_size": {text}}}, "weight_map": {{}}}}"#);
        match ShardIndex::parse(json.as_bytes()) {
            Ok(index) => Ok(index.total_size()),
            Err(IndexError::Json(e)) => Err(e.kind()),
            Err(e) => panic!("{text}: {e:?}"),
        }
    };
    // Older transformers summed sizes as floats: 3087466496.0.
    for (text, value) in [
        ("3087466496", 3_087_466_496),
        ("3087466496.0", 3_087_466_496),
        ("3.087466496e9", 3_087_466_496),
        ("3087466496000e-3", 3_087_466_496),
        ("30874664.96E+2", 3_087_466_496),
        ("0.0", 0),
        ("0e5", 0),
        ("18446744073709551615.000", u64::MAX),
        ("1.8446744073709551615e19", u64::MAX),
    ] {
        assert_eq!(total(text), Ok(Some(value)), "{text}");
    }
    for text in ["1.5", "3087466496.5", "1e-1", "12345e-3"] {
        assert_eq!(total(text), Err(ErrorKind::InvalidNumber), "{text}");
    }
    for text in [
        "18446744073709551616.0",
        "1e20",
        "1.8446744073709551616e19",
        "1e300",
    ] {
        assert_eq!(total(text), Err(ErrorKind::IntegerTooLarge), "{text}");
    }
}

#[test]
fn malformed_indexes_are_typed_errors() {
    let cases: [&[u8]; 8] = [
        b"",
        b"[]",
        br#"{"weight_map": {"a": "s"}} x"#,
        br#"{"weight_map": {"a": 1}}"#,
        br#"{"metadata": {"total_size": 1.5}, "weight_map": {}}"#,
        br#"{"metadata": {"total_size": -1}, "weight_map": {}}"#,
        br#"{"weight_map": {"a": "s",}}"#,
        b"{\"weight_map\": {\"\xff\": \"s\"}}",
    ];
    for json in cases {
        assert!(
            matches!(ShardIndex::parse(json), Err(IndexError::Json(_))),
            "{:?}",
            String::from_utf8_lossy(json)
        );
    }
    assert_eq!(ShardIndex::parse(b"{}"), Err(IndexError::NoWeightMap));
    assert_eq!(
        ShardIndex::parse(br#"{"weight_map": {"a": "1.st", "a": "2.st"}}"#),
        Err(IndexError::DuplicateTensor { tensor: "a".into() })
    );
    for bad in [
        "",
        ".",
        "..",
        "sub/x.safetensors",
        "..\\x",
        "/abs.safetensors",
    ] {
        let json = format!(
            r#"{{"weight_map": {{"a": "{}"}}}}"#,
            bad.replace('\\', "\\\\")
        );
        assert!(
            matches!(
                ShardIndex::parse(json.as_bytes()),
                Err(IndexError::UnsafeShardName { .. })
            ),
            "{bad:?}"
        );
    }
    // The JSON error says where.
    let Err(IndexError::Json(e)) = ShardIndex::parse(br#"{"weight_map": {"a": 1}}"#) else {
        panic!("a JSON error");
    };
    assert_eq!(e.offset(), Some(21));
}

#[test]
fn check_finds_every_disagreement() {
    let index = ShardIndex::parse(
        br#"{"metadata": {"total_size": 100}, "weight_map": {
            "m": "3.st", "a": "1.st", "b": "1.st", "c": "2.st", "gone": "2.st"}}"#,
    )
    .unwrap();
    let (one, two, four) = (shard(&["a", "c"]), shard(&["c", "extra"]), shard(&["a"]));
    let one = SafeTensors::parse(&one, Table::<4>::new()).unwrap();
    let two = SafeTensors::parse(&two, Table::<4>::new()).unwrap();
    let four = SafeTensors::parse(&four, Table::<4>::new()).unwrap();
    let mut check = index.check();
    check.shard("1.st", one.header());
    check.shard("2.st", two.header());
    check.shard("4.st", four.header());
    let s = |x: &str| x.to_owned();
    let found = check.finish();
    assert_eq!(
        found,
        [
            IndexProblem::Missing {
                tensor: s("b"),
                file: s("1.st")
            },
            IndexProblem::Misplaced {
                tensor: s("c"),
                file: s("2.st"),
                shard: 0,
                at: 1
            },
            IndexProblem::Missing {
                tensor: s("gone"),
                file: s("2.st")
            },
            IndexProblem::Duplicate {
                tensor: s("c"),
                shard: 1,
                at: 0,
                first: 0
            },
            IndexProblem::Unlisted {
                tensor: s("extra"),
                shard: 1,
                at: 1
            },
            IndexProblem::Duplicate {
                tensor: s("a"),
                shard: 2,
                at: 0,
                first: 0
            },
            IndexProblem::MissingShard { file: s("3.st") },
            IndexProblem::UnnamedShard { shard: 2 },
        ]
    );
    let names = ["1.st", "2.st", "4.st"];
    let messages: Vec<String> = found
        .iter()
        .map(|p| p.message(&names).to_string())
        .collect();
    assert_eq!(
        messages,
        [
            r#"tensor "b" is indexed in 1.st, but no shard holds it"#,
            r#"tensor "c" is indexed in 2.st, but it is in 1.st"#,
            r#"tensor "gone" is indexed in 2.st, but no shard holds it"#,
            r#"tensor "c" is in both 1.st and 2.st"#,
            r#"tensor "extra" in 2.st is not in the index"#,
            r#"tensor "a" is in both 1.st and 4.st"#,
            "shard 3.st is named by the index but missing",
            "shard 4.st is not named by the index",
        ]
    );
    // total_size, judged once every shard the index names was read.
    let index = ShardIndex::parse(
        br#"{"metadata": {"total_size": 100}, "weight_map": {"a": "1.st", "c": "1.st"}}"#,
    )
    .unwrap();
    let mut check = index.check();
    check.shard("1.st", one.header());
    let found = check.finish();
    assert_eq!(
        found,
        [IndexProblem::TotalSize {
            stated: 100,
            actual: 8
        }]
    );
    assert_eq!(
        found[0].message(&["1.st"]).to_string(),
        "index states total_size 100, but the shards' tensors hold 8 bytes"
    );
    let mut check = index.check();
    check.unread("1.st");
    assert_eq!(check.finish(), []);
    // Agreement: no problem.
    let index = ShardIndex::parse(
        br#"{"metadata": {"total_size": 8}, "weight_map": {"a": "1.st", "c": "1.st"}}"#,
    )
    .unwrap();
    let mut check = index.check();
    check.shard("1.st", one.header());
    assert_eq!(check.finish(), []);
}

fn index_of(n: usize) -> Vec<u8> {
    let entries: Vec<String> = (0..n)
        .map(|i| format!("\"t{i}\": \"model-00001-of-00001.safetensors\""))
        .collect();
    format!(r#"{{"weight_map": {{{}}}}}"#, entries.join(", ")).into_bytes()
}

#[test]
fn limits_on_bytes_and_entries_are_typed_errors_naming_the_limit() {
    let json = index_of(10);
    let exact = IndexLimits {
        bytes: json.len(),
        entries: 10,
    };
    assert_eq!(
        ShardIndex::parse_with(&json, exact)
            .unwrap()
            .weight_map()
            .len(),
        10
    );

    let bytes = IndexLimits {
        bytes: json.len() - 1,
        ..exact
    };
    let err = ShardIndex::parse_with(&json, bytes).unwrap_err();
    assert_eq!(
        err,
        IndexError::TooLarge {
            limit: json.len() - 1
        }
    );
    assert!(err.to_string().contains("IndexLimits::bytes"), "{err}");

    let entries = IndexLimits {
        entries: 9,
        ..exact
    };
    let err = ShardIndex::parse_with(&json, entries).unwrap_err();
    assert_eq!(err, IndexError::TooManyEntries { limit: 9 });
    assert!(
        err.to_string()
            .contains("more than 9 entries (IndexLimits::entries)"),
        "{err}"
    );

    // Entries count over every weight_map given (the last one is kept).
    let twice = br#"{"weight_map": {"a": "1.st", "b": "1.st"}, "weight_map": {"c": "1.st"}}"#;
    let three = IndexLimits {
        entries: 3,
        ..IndexLimits::DEFAULT
    };
    assert_eq!(
        ShardIndex::parse_with(twice, three)
            .unwrap()
            .weight_map()
            .len(),
        1
    );
    let two = IndexLimits {
        entries: 2,
        ..IndexLimits::DEFAULT
    };
    assert_eq!(
        ShardIndex::parse_with(twice, two),
        Err(IndexError::TooManyEntries { limit: 2 })
    );

    // The entry limit is found before the JSON's end: a truncated index
    // over it is TooManyEntries, one under it a JSON error.
    let cut = &json[..json.len() - 2];
    assert_eq!(
        ShardIndex::parse_with(cut, entries),
        Err(IndexError::TooManyEntries { limit: 9 })
    );
    assert!(matches!(
        ShardIndex::parse_with(cut, exact),
        Err(IndexError::Json(_))
    ));

    // parse applies the defaults.
    assert_eq!(IndexLimits::DEFAULT.bytes, 256 << 20);
    assert_eq!(IndexLimits::DEFAULT.entries, 2_000_000);
    assert!(ShardIndex::parse(&json).is_ok());
}
