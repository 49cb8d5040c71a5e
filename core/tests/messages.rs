//! Every error kind's message, for an input that triggers it, in one
//! golden file (`tests/data/messages.txt`): a change of wording is a
//! visible diff. `BLESS=1 cargo test -p safetensors-nano --all-features
//! --test messages` rewrites it.
//!
//! Each line is `Kind: message`, the message as `Error::display_in` shows
//! it (the tensor by name). Kinds are triggered through the public API;
//! the one this target cannot reach (`TooLargeForTarget`, a length over a
//! 64-bit `usize`) is made with `Error::new` and marked `(constructed)`.
#![cfg(all(feature = "std", feature = "embedded-storage"))]

use std::collections::BTreeSet;
use std::fmt::Write as _;

use embedded_storage::nor_flash::{ErrorType, NorFlashError, NorFlashErrorKind, ReadNorFlash};
use safetensors_nano::flash::FlashReader;
use safetensors_nano::write::{serialize_to_slice, Plan, Sink, Tensor, Writer};
use safetensors_nano::{
    read_tensor, Dtype, Error, ErrorKind, Parser, SafeTensors, SliceIndex, Slot, Table,
};

/// A file: the 8-byte length, `header`, then `data`.
fn file(header: &str, data: &[u8]) -> Vec<u8> {
    let mut f = (header.len() as u64).to_le_bytes().to_vec();
    f.extend_from_slice(header.as_bytes());
    f.extend_from_slice(data);
    f
}

fn parse_err(bytes: &[u8]) -> Error {
    SafeTensors::parse(bytes, vec![Slot::EMPTY; 8]).unwrap_err()
}

/// A tensor entry's JSON.
fn entry(name: &str, dtype: &str, shape: &str, begin: u64, end: u64) -> String {
    format!(r#""{name}":{{"dtype":"{dtype}","shape":{shape},"data_offsets":[{begin},{end}]}}"#)
}

struct Chip<'a>(&'a [u8]);
#[derive(Debug)]
struct ChipError;
impl NorFlashError for ChipError {
    fn kind(&self) -> NorFlashErrorKind {
        NorFlashErrorKind::Other
    }
}
impl ErrorType for Chip<'_> {
    type Error = ChipError;
}
impl ReadNorFlash for Chip<'_> {
    const READ_SIZE: usize = 1;
    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), ChipError> {
        let at = offset as usize;
        let src = self.0.get(at..at + bytes.len()).ok_or(ChipError)?;
        bytes.copy_from_slice(src);
        Ok(())
    }
    fn capacity(&self) -> usize {
        self.0.len()
    }
}

struct Broken;
impl Sink for Broken {
    fn write_all(&mut self, _: &[u8]) -> Result<(), Error> {
        Err(ErrorKind::Sink.into())
    }
}

/// `(error, header bytes it came from, constructed)` for every kind.
fn samples() -> Vec<(Error, Vec<u8>, bool)> {
    let mut out: Vec<(Error, Vec<u8>, bool)> = Vec::new();
    let header = |json: &str, data: &[u8]| {
        let bytes = file(json, data);
        (parse_err(&bytes), json.as_bytes().to_vec(), false)
    };
    let t = |shape: &str, end: u64| format!("{{{}}}", entry("t", "F32", shape, 0, end));

    // Framing.
    out.push((parse_err(&[1, 2, 3]), vec![], false));
    let big = 1000u64.to_le_bytes();
    let err = Parser::new()
        .header_limit(100)
        .parse(&big, Table::<1>::new());
    out.push((err.unwrap_err(), vec![], false));
    out.push((parse_err(&file("{}", b"")[..9]), vec![], false));
    let mut not_utf8 = file(r#"{"a":1}"#, b"");
    not_utf8[10] = 0xff;
    out.push((parse_err(&not_utf8), not_utf8[8..].to_vec(), false));
    // JSON syntax.
    out.push(header(r#"{"t":"#, b""));
    out.push(header(r#"{"t";1}"#, b""));
    out.push(header(r#"{"t\q":1}"#, b""));
    out.push(header(r#"{"\ud800":1}"#, b""));
    out.push(header("{\"t\u{1}\":1}", b""));
    out.push(header(&t("[01]", 4), &[0; 4]));
    let deep = format!(
        r#"{{"t":{{"x":{}{},"dtype":"U8","shape":[],"data_offsets":[0,1]}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    out.push(header(&deep, &[0]));
    // Header schema.
    out.push(header(r#"{"__metadata__":1}"#, b""));
    out.push(header(r#"{"__metadata__":{"k":1}}"#, b""));
    out.push(header(r#"{"__metadata__":{},"__metadata__":{}}"#, b""));
    out.push(header(r#"{"__metadata__":{"k":"a","k":"b"}}"#, b""));
    out.push(header(r#"{"t":1}"#, b""));
    out.push(header(
        r#"{"t":{"dtype":1,"shape":[],"data_offsets":[0,1]}}"#,
        &[0],
    ));
    out.push(header(
        &format!("{{{}}}", entry("t", "F33", "[1]", 0, 4)),
        &[0; 4],
    ));
    out.push(header(r#"{"t":{"dtype":"F32","shape":[1]}}"#, b""));
    out.push(header(
        r#"{"t":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#,
        &[0; 4],
    ));
    out.push(header(
        r#"{"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}"#,
        &[0; 8],
    ));
    out.push(header(&t("[99999999999999999999]", 4), &[0; 4]));
    let a = entry("a", "U8", "[1]", 0, 1);
    let b = entry("a", "U8", "[1]", 1, 2);
    out.push(header(&format!("{{{a},{b}}}"), &[0; 2]));
    let two = format!("{{{a},{}}}", entry("b", "U8", "[1]", 1, 2));
    let bytes = file(&two, &[0; 2]);
    let err = SafeTensors::parse(&bytes, Table::<1>::new()).unwrap_err();
    out.push((err, two.as_bytes().to_vec(), false));
    // Layout.
    let gap = format!("{{{a},{}}}", entry("b", "U8", "[2]", 3, 5));
    out.push(header(&gap, &[0; 5]));
    out.push(header(&t("[4294967296,4294967296]", 0), b""));
    out.push(header(
        &format!("{{{}}}", entry("q", "F4", "[3]", 0, 2)),
        &[0; 2],
    ));
    out.push(header(&t("[2]", 4), &[0; 4]));
    out.push(header(&t("[1]", 4), &[0; 5]));

    // Access.
    let json = format!(
        "{{{},{}}}",
        entry("b", "U8", "[1]", 0, 1),
        entry("w", "U16", "[2,2]", 1, 9)
    );
    let bytes = file(&json, &[0; 9]);
    // At an 8-aligned address, so "w" (file offset 8 + N + 1) is odd.
    let mut words = vec![0u64; bytes.len().div_ceil(8)];
    let aligned: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
    aligned[..bytes.len()].copy_from_slice(&bytes);
    let aligned = &aligned[..bytes.len()];
    let st = SafeTensors::parse(aligned, Table::<2>::new()).unwrap();
    let h = json.as_bytes().to_vec();
    let w = st.tensor("w").unwrap();
    out.push((st.try_tensor("x").unwrap_err(), h.clone(), false));
    out.push((w.try_view::<f32>().unwrap_err(), h.clone(), false));
    out.push((w.try_view::<u16>().unwrap_err(), h.clone(), false));
    out.push((w.copy_into(&mut [0u16; 3]).unwrap_err(), h.clone(), false));
    let mut reader = std::io::Cursor::new(aligned);
    let err = read_tensor(
        &mut reader,
        st.header().data_start(),
        &w.info(),
        &mut [0; 7],
    );
    let safetensors_nano::ReadError::Format(err) = err.unwrap_err() else {
        panic!("a format error")
    };
    out.push((err, h.clone(), false));
    let too_large = Error::new(ErrorKind::TooLargeForTarget);
    out.push((too_large, vec![], true));
    // Storage.
    let mut flash = FlashReader::new(Chip(aligned), 0, aligned.len() as u32);
    let mut buf = [0; 256];
    let fh = flash
        .read_header(&Parser::new(), &mut buf, Table::<2>::new())
        .unwrap();
    let fw = fh.tensor("w").unwrap();
    out.push((
        flash.read_at(&fh, &fw, 6, &mut [0; 4]).unwrap_err(),
        h.clone(),
        false,
    ));
    let mut broken = FlashReader::new(Chip(&aligned[..20]), 0, aligned.len() as u32);
    let err = broken
        .read_header(&Parser::new(), &mut [0; 256], Table::<2>::new())
        .unwrap_err();
    out.push((err, h.clone(), false));
    // Slicing.
    let wi = w.info();
    let slice = |ix: &[SliceIndex]| wi.slice_ranges(ix).map(|_| ()).unwrap_err();
    out.push((slice(&[0.into(), 0.into(), 0.into()]), h.clone(), false));
    out.push((slice(&[5.into()]), h.clone(), false));
    out.push((
        slice(&[SliceIndex::Range {
            start: 1,
            end: Some(0),
            step: 1,
        }]),
        h.clone(),
        false,
    ));
    let q = file(&format!("{{{}}}", entry("q", "F4", "[4]", 0, 2)), &[0; 2]);
    let qs = SafeTensors::parse(&q, Table::<1>::new()).unwrap();
    let qi = qs.tensor("q").unwrap().info();
    let err = qi.slice_ranges(&[(1..2).into()]).map(|_| ()).unwrap_err();
    out.push((err, q[8..q.len() - 2].to_vec(), false));

    // Writing.
    let x = [0u8; 4];
    let mut tensors = [Tensor::new("x", Dtype::F32, &[1], &x)];
    let err = serialize_to_slice(&mut tensors, None, &mut [0; 8]).unwrap_err();
    out.push((err, vec![], false));
    let mut tensors = [Tensor::new("__metadata__", Dtype::U8, &[1], &x[..1])];
    out.push((Plan::new(&mut tensors).unwrap_err(), vec![], false));
    let mut tensors = [Tensor::new("x", Dtype::F32, &[2], &x)];
    out.push((Plan::new(&mut tensors).unwrap_err(), vec![], false));
    let mut tensors = [Tensor::new("x", Dtype::F32, &[1], &x)];
    let plan = Plan::new(&mut tensors).unwrap();
    let mut writer = Writer::begin(&plan, Vec::new()).unwrap();
    writer.write_tensor("x", &x).unwrap();
    out.push((writer.write_tensor_data(&[0]).unwrap_err(), vec![], false));
    out.push((Writer::begin(&plan, Broken).unwrap_err(), vec![], false));
    out
}

#[test]
fn every_kind_has_its_message_in_the_golden_file() {
    let mut text = String::new();
    let mut codes = Vec::new();
    for (error, header, constructed) in samples() {
        let name = error.kind().name();
        codes.push(error.kind().code());
        let mark = if constructed { " (constructed)" } else { "" };
        writeln!(text, "{name}: {}{mark}", error.display_in(&header)).unwrap();
    }
    let seen: BTreeSet<u8> = codes.iter().copied().collect();
    let missing: Vec<u8> = (0..ErrorKind::COUNT)
        .filter(|c| !seen.contains(c))
        .collect();
    assert!(
        missing.is_empty(),
        "no sample of the kinds numbered {missing:?}"
    );
    let all: Vec<u8> = (0..ErrorKind::COUNT).collect();
    assert_eq!(codes, all, "one sample per kind, in code order");

    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/messages.txt");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        golden == text,
        "{} is stale (BLESS=1 rewrites it); now:\n{text}",
        path.display()
    );
}

#[test]
fn display_in_names_the_tensor_that_display_gives_as_bytes() {
    let json = format!("{{{}}}", entry("w\\u0078", "F33", "[1]", 0, 4));
    let err = parse_err(&file(&json, &[0; 4]));
    assert_eq!(
        err.to_string(),
        "unknown dtype at header byte 20 (tensor at header bytes 2..9)"
    );
    assert_eq!(
        err.display_in(json.as_bytes()).to_string(),
        r#"unknown dtype at header byte 20 (tensor "wx")"#
    );
}
