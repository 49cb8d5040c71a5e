//! Reading from `std::io`: the same header and bytes as parsing the whole
//! file, limits checked before allocating, short and failing readers.
#![cfg(feature = "std")]

use std::io::{self, Cursor, Read, Seek, SeekFrom};

use safetensors_nano::{
    read_header, read_slice, read_tensor, Dtype, Error, ErrorKind, Parser, ReadError, SafeTensors,
    SliceIndex, Slot,
};

/// A file with tensors of several dtypes (odd sizes, so data is unaligned)
/// and a metadata pair.
fn sample() -> Vec<u8> {
    let header = concat!(
        r#"{"__metadata__":{"format":"pt"},"#,
        r#""a":{"dtype":"U8","shape":[3],"data_offsets":[0,3]},"#,
        r#""m":{"dtype":"I16","shape":[3,4],"data_offsets":[3,27]},"#,
        r#""q":{"dtype":"F4","shape":[2,4],"data_offsets":[27,31]},"#,
        r#""s":{"dtype":"F64","shape":[],"data_offsets":[31,39]}}"#
    );
    let mut f = (header.len() as u64).to_le_bytes().to_vec();
    f.extend_from_slice(header.as_bytes());
    f.extend((0..39u8).map(|i| i.wrapping_mul(37)));
    f
}

fn format_kind(e: ReadError) -> ErrorKind {
    match e {
        ReadError::Format(e) => e.kind(),
        ReadError::Io(e) => panic!("expected a format error, got {e}"),
    }
}

#[test]
fn header_and_tensors_match_the_whole_file_parse() {
    let file = sample();
    let st = SafeTensors::parse(&file, vec![Slot::EMPTY; 8]).unwrap();
    let mut reader = Cursor::new(&file);
    let (mut buf, mut slots) = (Vec::new(), Vec::new());
    let header = read_header(&mut reader, &mut buf, &mut slots).unwrap();
    assert_eq!(
        reader.position(),
        header.data_start(),
        "reader left at the data"
    );
    assert_eq!(header.data_start(), st.header().data_start());
    header.check_file_len(file.len() as u64).unwrap();
    assert_eq!(header.metadata().unwrap().get("format").unwrap(), "pt");
    let names: Vec<String> = header.iter().map(|t| t.name().to_string()).collect();
    assert_eq!(names, ["a", "m", "q", "s"]);
    for info in header.iter() {
        let view = st.tensor(&info.name().to_string()).unwrap();
        assert_eq!(
            (info.dtype(), info.data_offsets()),
            (view.dtype(), view.data_offsets())
        );
        let mut out = vec![0xAA; info.byte_len() as usize];
        read_tensor(&mut reader, header.data_start(), &info, &mut out).unwrap();
        assert_eq!(out, view.data(), "{}", info.name());
    }
}

#[test]
fn slices_read_through_a_reader_match_in_memory_slices() {
    let file = sample();
    let st = SafeTensors::parse(&file, vec![Slot::EMPTY; 8]).unwrap();
    let mut reader = Cursor::new(&file);
    let (mut buf, mut slots) = (Vec::new(), Vec::new());
    let header = read_header(&mut reader, &mut buf, &mut slots).unwrap();
    let full = SliceIndex::Full;
    let cases: [(&str, Vec<SliceIndex>); 6] = [
        ("m", vec![]),
        ("m", vec![full, 1.into()]),
        ("m", vec![(1..3).into(), full.step_by(2)]),
        ("m", vec![2.into(), (1..1).into()]),
        ("q", vec![1.into()]),
        ("s", vec![]),
    ];
    for (name, indices) in cases {
        let expected: Vec<u8> = st
            .tensor(name)
            .unwrap()
            .slice(&indices)
            .unwrap()
            .flatten()
            .copied()
            .collect();
        let mut out = vec![0xAA; expected.len()];
        let info = header.tensor(name).unwrap();
        read_slice(&mut reader, header.data_start(), &info, &indices, &mut out).unwrap();
        assert_eq!(out, expected, "{name} {indices:?}");
    }
    // Slice errors and a wrong output length come back as format errors.
    let q = header.tensor("q").unwrap();
    let err = read_slice(
        &mut reader,
        header.data_start(),
        &q,
        &[full, 1.into()],
        &mut [],
    )
    .unwrap_err();
    assert_eq!(format_kind(err), ErrorKind::SliceSubByte);
    let err = read_slice(
        &mut reader,
        header.data_start(),
        &q,
        &[0.into()],
        &mut [0; 3],
    )
    .unwrap_err();
    assert_eq!(
        format_kind(err),
        ErrorKind::ByteLengthMismatch {
            expected: 2,
            found: 3
        }
    );
}

#[test]
fn every_prefix_of_a_file_gives_the_right_error() {
    let file = sample();
    let data_start = 8 + u64::from_le_bytes(file[..8].try_into().unwrap()) as usize;
    let (mut buf, mut slots) = (Vec::new(), Vec::new());
    for len in 0..data_start {
        let err = read_header(&mut &file[..len], &mut buf, &mut slots).unwrap_err();
        let expected = if len < 8 {
            ErrorKind::HeaderTooSmall { len: len as u64 }
        } else {
            ErrorKind::InvalidHeaderLength {
                header_len: data_start as u64 - 8,
                file_len: len as u64,
            }
        };
        assert_eq!(format_kind(err), expected);
    }
    for len in data_start..=file.len() {
        let header = read_header(&mut &file[..len], &mut buf, &mut slots).unwrap();
        assert_eq!(header.len(), 4);
        assert_eq!(header.check_file_len(len as u64).is_ok(), len == file.len());
    }
}

/// A reader that serves `bytes` one at a time, interrupted before every
/// byte, and counts what it served.
struct Trickle<'a> {
    bytes: &'a [u8],
    served: usize,
    interrupt: bool,
}

impl Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.interrupt = !self.interrupt;
        if self.interrupt {
            return Err(io::ErrorKind::Interrupted.into());
        }
        match (self.bytes.get(self.served), out.first_mut()) {
            (Some(&b), Some(o)) => {
                *o = b;
                self.served += 1;
                Ok(1)
            }
            _ => Ok(0),
        }
    }
}

#[test]
fn short_reads_and_interruptions_are_handled() {
    let file = sample();
    let mut reader = Trickle {
        bytes: &file,
        served: 0,
        interrupt: false,
    };
    let (mut buf, mut slots) = (Vec::new(), Vec::new());
    let header = read_header(&mut reader, &mut buf, &mut slots).unwrap();
    assert_eq!(header.len(), 4);
    assert_eq!(
        reader.served as u64,
        header.data_start(),
        "nothing read past the header"
    );
}

#[test]
fn the_limit_is_checked_before_allocating() {
    // Declares a header at the limit, then ends: 8 bytes read, no big buffer.
    let mut bytes = 100_000_000u64.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{}");
    let mut reader = Trickle {
        bytes: &bytes,
        served: 0,
        interrupt: false,
    };
    let (mut buf, mut slots) = (Vec::new(), Vec::new());
    let err = read_header(&mut reader, &mut buf, &mut slots).unwrap_err();
    assert_eq!(
        format_kind(err),
        ErrorKind::InvalidHeaderLength {
            header_len: 100_000_000,
            file_len: 10
        }
    );
    assert!(
        buf.capacity() < 4096,
        "capacity {} grew past what was read",
        buf.capacity()
    );
    // Over a lowered limit: nothing is read past the length prefix.
    let mut reader = Trickle {
        bytes: &bytes,
        served: 0,
        interrupt: false,
    };
    let mut buf = Vec::new();
    let err = Parser::new()
        .header_limit(16_384)
        .read_header(&mut reader, &mut buf, &mut slots)
        .unwrap_err();
    assert_eq!(
        format_kind(err),
        ErrorKind::HeaderTooLarge {
            header_len: 100_000_000,
            limit: 16_384
        }
    );
    assert_eq!((reader.served, buf.capacity()), (8, 0));
}

#[test]
fn buffers_are_reused_and_slots_sized_exactly_for_big_headers() {
    let entries: Vec<String> = (0..400)
        .map(|i| {
            format!(
                r#""w{i}":{{"dtype":"U8","shape":[1],"data_offsets":[{i},{}]}}"#,
                i + 1
            )
        })
        .collect();
    let header = format!("{{{}}}", entries.join(","));
    let mut big = (header.len() as u64).to_le_bytes().to_vec();
    big.extend_from_slice(header.as_bytes());
    big.extend((0..400).map(|i| i as u8));
    let (mut buf, mut slots) = (Vec::new(), Vec::new());
    let h = read_header(&mut &big[..], &mut buf, &mut slots).unwrap();
    assert_eq!(h.len(), 400);
    assert_eq!(h.tensor("w399").unwrap().data_offsets(), (399, 400));
    assert_eq!(slots.len(), 400, "counted exactly");
    // A smaller file reuses both buffers without shrinking them.
    let (cap, n) = (buf.capacity(), slots.len());
    let h = read_header(&mut &sample()[..], &mut buf, &mut slots).unwrap();
    assert_eq!(h.len(), 4);
    assert_eq!((buf.capacity(), slots.len()), (cap, n));
}

#[test]
fn format_errors_of_the_header_are_those_of_the_parser() {
    let mut file = sample();
    let at = file.iter().position(|&b| b == b'I').unwrap(); // "I16" → "X16"
    file[at] = b'X';
    let ours = SafeTensors::parse(&file, vec![Slot::EMPTY; 8]).unwrap_err();
    let (mut buf, mut slots) = (Vec::new(), Vec::new());
    let err = read_header(&mut &file[..], &mut buf, &mut slots).unwrap_err();
    match err {
        ReadError::Format(e) => assert_eq!(e, ours),
        ReadError::Io(e) => panic!("{e}"),
    }
    assert_eq!(ours.kind(), ErrorKind::UnknownDtype);
}

/// A reader whose reads fail after `ok` bytes.
struct Failing {
    inner: Cursor<Vec<u8>>,
    ok: u64,
}

impl Read for Failing {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let left = self.ok.saturating_sub(self.inner.position());
        if left == 0 {
            return Err(io::Error::other("disk on fire"));
        }
        let n = out.len().min(left as usize);
        self.inner.read(&mut out[..n])
    }
}

impl Seek for Failing {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.inner.seek(to)
    }
}

#[test]
fn io_errors_pass_through_and_convert() {
    let file = sample();
    let data_start = 8 + u64::from_le_bytes(file[..8].try_into().unwrap());
    let (mut buf, mut slots) = (Vec::new(), Vec::new());
    let mut reader = Failing {
        inner: Cursor::new(file.clone()),
        ok: 20,
    };
    let err = read_header(&mut reader, &mut buf, &mut slots).unwrap_err();
    assert!(matches!(&err, ReadError::Io(e) if e.to_string() == "disk on fire"));
    assert_eq!(err.to_string(), "I/O error: disk on fire");
    assert!(std::error::Error::source(&err).is_some());
    assert_eq!(io::Error::from(err).kind(), io::ErrorKind::Other);

    // The header reads fine; the data fails, or is cut short.
    let mut reader = Failing {
        inner: Cursor::new(file.clone()),
        ok: data_start + 5,
    };
    let header = read_header(&mut reader, &mut buf, &mut slots).unwrap();
    let m = header.tensor("m").unwrap();
    let mut out = [0u8; 24];
    let err = read_tensor(&mut reader, header.data_start(), &m, &mut out).unwrap_err();
    assert!(matches!(err, ReadError::Io(_)));
    let mut truncated = Cursor::new(&file[..file.len() - 1]);
    let s = header.tensor("s").unwrap();
    let err = read_tensor(&mut truncated, header.data_start(), &s, &mut [0; 8]).unwrap_err();
    assert!(matches!(&err, ReadError::Io(e) if e.kind() == io::ErrorKind::UnexpectedEof));

    // Format errors: Display is the error's, the tensor is named, io kind InvalidData.
    let err = read_tensor(&mut reader, header.data_start(), &m, &mut [0; 2]).unwrap_err();
    let ReadError::Format(e) = &err else { panic!() };
    assert_eq!(
        e.kind(),
        ErrorKind::ByteLengthMismatch {
            expected: 24,
            found: 2
        }
    );
    assert_eq!(e.tensor_name(header.json()).unwrap(), "m");
    assert_eq!(err.to_string(), e.to_string());
    let io = io::Error::from(err);
    assert_eq!(io.kind(), io::ErrorKind::InvalidData);
    assert!(io.get_ref().unwrap().downcast_ref::<Error>().is_some());
    let _: ReadError = Error::new(ErrorKind::Sink).into();
    assert_eq!(m.dtype(), Dtype::I16);
}
