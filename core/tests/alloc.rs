//! `parse_alloc`: the same verdicts as parsing into a table that is big
//! enough, in a table that holds exactly the slots used.
#![cfg(feature = "alloc")]

use proptest::prelude::*;
use safetensors_nano::{ErrorKind, Header, Parser, SafeTensors, Slot, Status};

/// A file of `tensors` U8 tensors of 1 byte and `pairs` metadata pairs
/// whose values hold `quotes` escaped quotes each.
fn file(tensors: usize, pairs: usize, quotes: usize) -> Vec<u8> {
    frame(&header(tensors, pairs, quotes), tensors)
}

fn header(tensors: usize, pairs: usize, quotes: usize) -> String {
    let mut entries: Vec<String> = (0..tensors)
        .map(|i| {
            format!(
                r#""t{i}":{{"dtype":"U8","shape":[1],"data_offsets":[{i},{}]}}"#,
                i + 1
            )
        })
        .collect();
    if pairs > 0 {
        let value = r#"\""#.repeat(quotes);
        let meta: Vec<String> = (0..pairs).map(|i| format!(r#""k{i}":"{value}""#)).collect();
        entries.push(format!(r#""__metadata__":{{{}}}"#, meta.join(",")));
    }
    format!("{{{}}}", entries.join(","))
}

/// The length prefix, the header, and `data_len` data bytes.
fn frame(header: &str, data_len: usize) -> Vec<u8> {
    let mut f = (header.len() as u64).to_le_bytes().to_vec();
    f.extend_from_slice(header.as_bytes());
    f.extend((0..data_len).map(|i| i as u8));
    f
}

fn big(bytes: &[u8]) -> Result<(usize, Option<usize>), ErrorKind> {
    SafeTensors::parse(bytes, vec![Slot::EMPTY; 1 + bytes.len() / 4])
        .map(|st| (st.len(), st.metadata().map(|m| m.len())))
        .map_err(|e| e.kind())
}

#[test]
fn tables_are_sized_by_the_rule() {
    // (tensors, pairs, escaped quotes per value)
    for (t, p, q) in [
        (0, 0, 0),
        (1, 0, 0),
        (3, 2, 5),
        (40, 0, 0),
        (200, 3, 0),
        (1000, 0, 0),
        (10, 300, 0),
        (2, 1, 4000),
    ] {
        let f = file(t, p, q);
        let st = SafeTensors::parse_alloc(&f).unwrap();
        assert_eq!((st.len(), st.metadata().map_or(0, |m| m.len())), (t, p));
        let slots = st.into_header().into_storage().len();
        // The parse runs in a table sized from the header's length (or, with
        // many metadata pairs, from their exact count), then shrunk: after
        // it, the table holds exactly the slots used.
        assert_eq!(slots, t + p, "{t} tensors, {p} pairs, {q} escaped quotes");
    }
}

#[test]
fn header_parse_alloc_sizes_too() {
    let f = file(500, 1, 0);
    let n = 8 + u64::from_le_bytes(f[..8].try_into().unwrap()) as usize;
    let Status::Complete(h) = Header::parse_alloc(&f[..n]).unwrap() else {
        panic!()
    };
    assert_eq!(h.len(), 500);
    assert_eq!(h.into_storage().len(), 501);
    assert!(
        matches!(Header::parse_alloc(&f[..n - 1]).unwrap(), Status::Partial { needed } if needed == n as u64)
    );
}

#[test]
fn errors_are_the_ones_a_big_table_gives() {
    let s = header(300, 0, 0);
    let broken = [
        // Syntax error after many entries.
        s.replace(r#""t299":{"#, r#""t299":{,"#),
        // Duplicate name (found after the table is sized).
        s.replace(r#""t299""#, r#""t298""#),
        // Bad offsets.
        s.replace("[299,300]", "[299,301]"),
    ];
    for text in broken {
        let bytes = frame(&text, 300);
        let ours = SafeTensors::parse_alloc(&bytes)
            .map(|st| st.len())
            .map_err(|e| e.kind());
        assert_eq!(ours.map(|n| (n, None)), big(&bytes));
        assert!(ours.is_err());
    }
    // Limits are those of the parser used.
    let f = file(300, 0, 0);
    let err = Parser::new().header_limit(10).parse_alloc(&f).unwrap_err();
    assert!(matches!(
        err.kind(),
        ErrorKind::HeaderTooLarge { limit: 10, .. }
    ));
    assert_eq!(
        SafeTensors::parse_alloc(b"\x01").unwrap_err().kind(),
        ErrorKind::HeaderTooSmall { len: 1 }
    );
}

proptest! {
    /// Arbitrary bytes after a valid-looking start: never CapacityExceeded,
    /// always the verdict a big table gives.
    #[test]
    fn same_verdict_as_a_big_table(t in 0usize..300, p in 0usize..5, cut in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut f = file(t, p, 1);
        let at = cut.index(f.len());
        f[at] = byte;
        let ours = SafeTensors::parse_alloc(&f).map(|st| (st.len(), st.metadata().map(|m| m.len()))).map_err(|e| e.kind());
        let capacity = matches!(ours, Err(ErrorKind::CapacityExceeded { .. }));
        prop_assert!(!capacity, "CapacityExceeded");
        prop_assert_eq!(ours, big(&f));
    }
}
