//! The NOR-flash reader: same verdicts as the in-memory parser, exact bytes
//! for any read at any alignment, driver errors surfaced.
#![cfg(feature = "embedded-storage")]

mod flash_chip;

use embedded_storage::nor_flash::NorFlashErrorKind;
use flash_chip::{chip, sample_file, Chip, ChipError};
use proptest::prelude::*;
use safetensors_nano::flash::FlashReader;
use safetensors_nano::{ErrorKind, Parser, SafeTensors, Slot, Table};

fn read_header_kind<const R: usize>(
    chip: Chip<R>,
    base: u32,
    len: Option<u32>,
    parser: &Parser,
    buf_len: usize,
) -> Result<usize, ErrorKind> {
    let mut reader = match len {
        Some(len) => FlashReader::new(chip, base, len),
        None => FlashReader::at(chip, base),
    };
    let mut buf = vec![0u8; buf_len];
    let result = reader.read_header(parser, &mut buf, Table::<8>::new());
    result.map(|h| h.len()).map_err(|e| e.kind())
}

fn parse_kind(file: &[u8], parser: &Parser) -> Result<usize, ErrorKind> {
    parser
        .parse(file, Table::<8>::new())
        .map(|st| st.len())
        .map_err(|e| e.kind())
}

/// Every tensor, read whole and in every sub-range, equals the mapped view.
fn check_reads<const R: usize>(file: &[u8], base: usize) {
    let st = SafeTensors::parse(file, Table::<8>::new()).unwrap();
    let mut reader = FlashReader::new(chip::<R>(file, base, 0), base as u32, file.len() as u32);
    let mut buf = [0u8; 512];
    let header = reader
        .read_header(&Parser::new(), &mut buf, Table::<8>::new())
        .unwrap();
    assert_eq!(header.len(), st.len());
    for view in st.iter() {
        let name = view.name().as_str().unwrap();
        let info = header.tensor(name).unwrap();
        let want = view.data();
        let mut whole = vec![0u8; want.len()];
        reader.read(&header, &info, &mut whole).unwrap();
        assert_eq!(whole, want, "{name} at base {base}, READ_SIZE {R}");
        for start in 0..=want.len() {
            for end in start..=want.len() {
                let mut part = vec![0u8; end - start];
                reader
                    .read_at(&header, &info, start as u64, &mut part)
                    .unwrap();
                assert_eq!(
                    part,
                    &want[start..end],
                    "{name}[{start}..{end}] at base {base}, READ_SIZE {R}"
                );
            }
        }
    }
}

#[test]
fn reads_are_exact_at_any_alignment_and_read_size() {
    let file = sample_file();
    assert_ne!(file.len() % 4, 0, "the sample file should end unaligned");
    for base in 0..20 {
        check_reads::<1>(&file, base);
        check_reads::<2>(&file, base);
        check_reads::<4>(&file, base);
        check_reads::<8>(&file, base);
        check_reads::<32>(&file, base);
    }
}

#[test]
fn read_size_over_32_takes_aligned_reads_only() {
    let file = sample_file();
    // Base 0 and a header padded to 8: the header's 8-byte prefix is one
    // short read, which a 64-byte unit cannot serve.
    let mut reader = FlashReader::new(chip::<64>(&file, 0, 0), 0, file.len() as u32);
    let err = reader
        .read_header(&Parser::new(), &mut [0u8; 512], Table::<8>::new())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Storage { address: 0, len: 8 });
    assert!(
        reader.storage_error().is_none(),
        "refused before calling the driver"
    );
}

#[test]
fn typed_reads_check_dtype_and_length() {
    let file = sample_file();
    let mut reader = FlashReader::new(chip::<4>(&file, 0, 0), 0, file.len() as u32);
    let mut buf = [0u8; 512];
    let header = reader
        .read_header(&Parser::new(), &mut buf, Table::<8>::new())
        .unwrap();
    let a = header.tensor("a").unwrap();
    let mut floats = [0f32; 6];
    reader.read_into(&header, &a, &mut floats).unwrap();
    let bytes: Vec<u8> = (0..24u8).collect();
    let want: Vec<f32> = bytes
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(floats.to_vec(), want);
    let mut halves = [half::bf16::ZERO; 3];
    reader
        .read_into(&header, &header.tensor("b").unwrap(), &mut halves)
        .unwrap();
    assert_eq!(halves[0].to_bits(), u16::from_le_bytes([100, 101]));

    let err = reader.read_into(&header, &a, &mut [0f32; 5]).unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::LengthMismatch {
            expected: 6,
            found: 5
        }
    );
    assert_eq!(err.tensor_name(header.json()).unwrap(), "a");
    let err = reader.read_into(&header, &a, &mut [0u32; 6]).unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::DtypeMismatch {
            found: safetensors_nano::Dtype::F32,
            asked: safetensors_nano::Dtype::U32
        }
    );
    let err = reader.read(&header, &a, &mut [0u8; 23]).unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::ByteLengthMismatch {
            expected: 24,
            found: 23
        }
    );
    let err = reader.read_at(&header, &a, 20, &mut [0u8; 5]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ReadOutOfRange { end: 25, len: 24 });
    let err = reader
        .read_at(&header, &a, u64::MAX, &mut [0u8; 1])
        .unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::ReadOutOfRange {
            end: u64::MAX,
            len: 24
        }
    );
    reader.read_at(&header, &a, 24, &mut []).unwrap();
}

#[test]
fn driver_errors_are_storage_errors_with_the_driver_error_kept() {
    let file = sample_file();
    let st = SafeTensors::parse(&file, Table::<8>::new()).unwrap();
    let a_start = (st.header().data_start() + st.tensor("a").unwrap().data_offsets().0) as usize;
    // Fails inside the header.
    let mut c = chip::<4>(&file, 0, 0);
    c.bad = Some(20);
    let mut reader = FlashReader::new(c, 0, file.len() as u32);
    let err = reader
        .read_header(&Parser::new(), &mut [0u8; 512], Table::<8>::new())
        .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Storage { address: 8, .. }),
        "{err}"
    );
    assert_eq!(
        reader.storage_error(),
        Some(&ChipError(NorFlashErrorKind::Other))
    );
    // Fails inside tensor "a": the header reads fine, the tensor read fails.
    let mut c = chip::<4>(&file, 0, 0);
    c.bad = Some(a_start as u32 + 5);
    let mut reader = FlashReader::new(c, 0, file.len() as u32);
    let mut buf = [0u8; 512];
    let header = reader
        .read_header(&Parser::new(), &mut buf, Table::<8>::new())
        .unwrap();
    let a = header.tensor("a").unwrap();
    let err = reader.read(&header, &a, &mut [0u8; 24]).unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::Storage {
            address: a_start as u64,
            len: 24
        }
    );
    assert_eq!(err.tensor_name(header.json()).unwrap(), "a");
    // A file said to run past the chip's end: the driver refuses the read.
    let c = chip::<1>(&file, 0, 0);
    let mut reader = FlashReader::new(c, 0, file.len() as u32 + 1);
    let mut buf = [0u8; 512];
    let err = reader
        .read_header(&Parser::new(), &mut buf, Table::<8>::new())
        .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::MetadataIncompleteBuffer { .. }),
        "{err}"
    );
    let mut reader = FlashReader::new(chip::<1>(&file, 0, 0), 0, file.len() as u32);
    let header = reader
        .read_header(&Parser::new(), &mut buf, Table::<8>::new())
        .unwrap();
    let c = header.tensor("c").unwrap(); // the last tensor in the file
    let mut reader2 = FlashReader::new(
        chip::<1>(&file[..file.len() - 1], 0, 0),
        0,
        file.len() as u32,
    );
    let err = reader2.read(&header, &c, &mut [0u8; 7]).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Storage { .. }), "{err}");
    assert_eq!(
        reader2.storage_error(),
        Some(&ChipError(NorFlashErrorKind::OutOfBounds))
    );
    assert!(reader.into_inner().calls > 0);
}

#[test]
fn a_header_that_does_not_fit_the_buffer() {
    let file = sample_file();
    let n = u64::from_le_bytes(file[..8].try_into().unwrap());
    // Without a matching limit: BufferTooSmall, saying how much is needed.
    let err = read_header_kind(
        chip::<4>(&file, 0, 0),
        0,
        Some(file.len() as u32),
        &Parser::new(),
        64,
    )
    .unwrap_err();
    assert_eq!(
        err,
        ErrorKind::BufferTooSmall {
            needed: 8 + n,
            available: 64
        }
    );
    let err = read_header_kind(
        chip::<4>(&file, 0, 0),
        0,
        Some(file.len() as u32),
        &Parser::new(),
        7,
    )
    .unwrap_err();
    assert_eq!(
        err,
        ErrorKind::BufferTooSmall {
            needed: 8,
            available: 7
        }
    );
    // With the limit at the buffer's size: the parser's HeaderTooLarge.
    let parser = Parser::new().header_limit(56);
    let err = read_header_kind(
        chip::<4>(&file, 0, 0),
        0,
        Some(file.len() as u32),
        &parser,
        64,
    )
    .unwrap_err();
    assert_eq!(
        err,
        ErrorKind::HeaderTooLarge {
            header_len: n,
            limit: 56
        }
    );
}

#[test]
fn unknown_length_takes_the_header_s_and_ignores_what_follows() {
    let file = sample_file();
    let expect = parse_kind(&file, &Parser::new());
    for slack in [0, 1, 7, 100] {
        let got = read_header_kind(chip::<4>(&file, 12, slack), 12, None, &Parser::new(), 512);
        assert_eq!(got, expect);
    }
    // The chip ends inside the data.
    let short = &file[..file.len() - 3];
    let c = chip::<1>(short, 0, 0);
    let err = read_header_kind(c, 0, None, &Parser::new(), 512).unwrap_err();
    assert!(
        matches!(err, ErrorKind::MetadataIncompleteBuffer { .. }),
        "{err:?}"
    );
    // The chip ends inside the header.
    let c = chip::<1>(&file[..20], 0, 0);
    let err = read_header_kind(c, 0, None, &Parser::new(), 512).unwrap_err();
    assert!(
        matches!(err, ErrorKind::InvalidHeaderLength { file_len: 20, .. }),
        "{err:?}"
    );
    let c = chip::<1>(&file[..5], 0, 0);
    assert_eq!(
        read_header_kind(c, 0, None, &Parser::new(), 512),
        Err(ErrorKind::HeaderTooSmall { len: 5 })
    );
}

#[test]
fn every_prefix_gets_the_parser_s_verdict() {
    let file = sample_file();
    let parser = Parser::new().header_limit(504);
    for len in 0..=file.len() {
        let prefix = &file[..len];
        let want = parse_kind(prefix, &parser);
        let got = read_header_kind(chip::<4>(prefix, 4, 0), 4, Some(len as u32), &parser, 512);
        assert_eq!(got, want, "prefix of {len} bytes");
    }
}

fn same_verdict(file: &[u8], base: usize) -> Result<(), TestCaseError> {
    let parser = Parser::new().header_limit(1016);
    let want = parse_kind(file, &parser);
    let got = read_header_kind(
        chip::<4>(file, base, 0),
        base as u32,
        Some(file.len() as u32),
        &parser,
        1024,
    );
    prop_assert_eq!(got, want);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn mutated_files_get_the_parser_s_verdict(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
        base in 0usize..9,
    ) {
        let mut file = sample_file();
        for (at, byte) in flips {
            let i = at.index(file.len());
            file[i] = byte;
        }
        if truncate {
            file.truncate(cut.index(file.len() + 1));
        }
        same_verdict(&file, base)?;
    }

    #[test]
    fn random_bytes_get_the_parser_s_verdict(
        n in 0u64..64,
        body in proptest::collection::vec(any::<u8>(), 0..80),
    ) {
        let mut file = n.to_le_bytes().to_vec();
        file.extend_from_slice(&body);
        same_verdict(&file, 1)?;
    }
}

#[test]
fn slices_work_as_storage() {
    let file = sample_file();
    let mut slots = [Slot::EMPTY; 8];
    let mut reader = FlashReader::new(chip::<1>(&file, 0, 0), 0, file.len() as u32);
    let mut buf = [0u8; 512];
    let header = reader
        .read_header(&Parser::new(), &mut buf, &mut slots[..])
        .unwrap();
    assert_eq!(header.metadata().unwrap().get("k").unwrap(), "v");
}
