//! The async NOR-flash reader: a driver that yields before every read (as a
//! QSPI driver awaits its transfer) and fails on request. The reader gives
//! the blocking `FlashReader`'s verdicts and bytes, really awaits the driver,
//! and turns a driver failure into the typed storage error.

mod flash_chip;

use core::future::Future;
use core::pin::pin;
use core::task::{Context, Poll, Waker};

use embassy_futures::{block_on, yield_now};
use embedded_storage_async::nor_flash::{ErrorType, NorFlashErrorKind, ReadNorFlash};
use flash_chip::{sample_file, Chip, ChipError};
use safetensors_nano::flash::FlashReader;
use safetensors_nano::flash_async::AsyncFlashReader;
use safetensors_nano::{Error, ErrorKind, Parser, SafeTensors, Table};

/// The tests' chip behind an async driver that yields before every read,
/// as a QSPI driver awaits its transfer.
struct SlowChip<const R: usize>(Chip<R>);

impl<const R: usize> ErrorType for SlowChip<R> {
    type Error = ChipError;
}

impl<const R: usize> ReadNorFlash for SlowChip<R> {
    const READ_SIZE: usize = R;

    async fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), ChipError> {
        yield_now().await;
        embedded_storage::nor_flash::ReadNorFlash::read(&mut self.0, offset, bytes)
    }

    fn capacity(&self) -> usize {
        self.0.bytes.len()
    }
}

/// `file` at address `base` of a chip of whole units filled with 0xFF,
/// whose `fail_on`-th read (counting from 1) fails when asked to.
fn chip<const R: usize>(file: &[u8], base: usize, fail_on: Option<usize>) -> Chip<R> {
    Chip {
        fail_on,
        ..flash_chip::chip(file, base, 0)
    }
}

/// Polls `fut` to completion with a waker that does nothing; returns its
/// output and how many times it was pending.
fn run_counting<F: Future>(fut: F) -> (F::Output, usize) {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    let mut pending = 0;
    loop {
        match fut.as_mut().poll(&mut cx) {
            Poll::Ready(out) => return (out, pending),
            Poll::Pending => pending += 1,
        }
    }
}

/// Header verdict and every tensor's bytes, through the async reader.
async fn read_all_async<const R: usize>(
    chip: Chip<R>,
    base: u32,
    len: u32,
) -> (Result<Vec<Vec<u8>>, Error>, AsyncFlashReader<SlowChip<R>>) {
    let mut reader = AsyncFlashReader::new(SlowChip(chip), base, len);
    let mut buf = [0u8; 512];
    let result = async {
        let header = reader
            .read_header(&Parser::new(), &mut buf, Table::<8>::new())
            .await?;
        let mut out = Vec::new();
        for info in header.iter() {
            let mut bytes = vec![0u8; info.byte_len() as usize];
            reader.read(&header, &info, &mut bytes).await?;
            out.push(bytes);
        }
        Ok(out)
    }
    .await;
    (result, reader)
}

/// The same through the blocking reader.
fn read_all_blocking<const R: usize>(
    chip: Chip<R>,
    base: u32,
    len: u32,
) -> (Result<Vec<Vec<u8>>, Error>, FlashReader<Chip<R>>) {
    let mut reader = FlashReader::new(chip, base, len);
    let mut buf = [0u8; 512];
    let result = (|| {
        let header = reader.read_header(&Parser::new(), &mut buf, Table::<8>::new())?;
        let mut out = Vec::new();
        for info in header.iter() {
            let mut bytes = vec![0u8; info.byte_len() as usize];
            reader.read(&header, &info, &mut bytes)?;
            out.push(bytes);
        }
        Ok(out)
    })();
    (result, reader)
}

fn same_as_blocking<const R: usize>(file: &[u8], base: usize, fail_on: Option<usize>) {
    let len = file.len() as u32;
    let (want, blocking) = read_all_blocking(chip::<R>(file, base, fail_on), base as u32, len);
    let (got, reader) = block_on(read_all_async(
        chip::<R>(file, base, fail_on),
        base as u32,
        len,
    ));
    let at = format!(
        "{} bytes at base {base}, READ_SIZE {R}, fail_on {fail_on:?}",
        file.len()
    );
    assert_eq!(got, want, "{at}");
    assert_eq!(reader.storage_error(), blocking.storage_error(), "{at}");
    assert_eq!(
        reader.into_inner().0.calls,
        blocking.into_inner().calls,
        "{at}"
    );
}

#[test]
fn reads_equal_the_blocking_reader_and_the_mapped_views() {
    let file = sample_file();
    let st = SafeTensors::parse(&file, Table::<8>::new()).unwrap();
    let want: Vec<Vec<u8>> = st.iter().map(|v| v.data().to_vec()).collect();
    for base in 0..8 {
        same_as_blocking::<1>(&file, base, None);
        same_as_blocking::<4>(&file, base, None);
        same_as_blocking::<8>(&file, base, None);
        let (got, _) = block_on(read_all_async(
            chip::<4>(&file, base, None),
            base as u32,
            file.len() as u32,
        ));
        assert_eq!(got.unwrap(), want, "base {base}");
    }
}

#[test]
fn every_prefix_gets_the_blocking_reader_s_verdict() {
    let file = sample_file();
    for cut in 0..=file.len() {
        same_as_blocking::<4>(&file[..cut], 3, None);
    }
}

#[test]
fn read_at_and_read_into_match_at_every_offset() {
    let file = sample_file();
    block_on(async {
        let mut reader =
            AsyncFlashReader::new(SlowChip(chip::<4>(&file, 5, None)), 5, file.len() as u32);
        let mut buf = [0u8; 512];
        let header = reader
            .read_header(&Parser::new(), &mut buf, Table::<8>::new())
            .await
            .unwrap();
        let c = header.tensor("c").unwrap();
        let want: Vec<u8> = (200..207u8).collect();
        for start in 0..=want.len() {
            for end in start..=want.len() {
                let mut part = vec![0u8; end - start];
                reader
                    .read_at(&header, &c, start as u64, &mut part)
                    .await
                    .unwrap();
                assert_eq!(part, &want[start..end]);
            }
        }
        let mut typed = [0i8; 7];
        reader.read_into(&header, &c, &mut typed).await.unwrap();
        assert_eq!(typed, [-56, -55, -54, -53, -52, -51, -50]);
        let err = reader
            .read_into(&header, &c, &mut [0u8; 7])
            .await
            .unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::DtypeMismatch { .. }));
        let err = reader
            .read_at(&header, &c, 5, &mut [0u8; 3])
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ReadOutOfRange { end: 8, len: 7 });
    });
}

#[test]
fn the_reader_awaits_the_driver_between_reads() {
    let file = sample_file();
    let ((result, reader), pending) = run_counting(read_all_async(
        chip::<4>(&file, 0, None),
        0,
        file.len() as u32,
    ));
    assert!(result.is_ok());
    let reads = reader.into_inner().0.calls;
    // Each driver read yields once, and the reader passes that on: it
    // never blocks its executor for the length of a transfer.
    assert!(reads > 3, "{reads} reads");
    assert_eq!(pending, reads);
}

#[test]
fn a_failed_read_is_the_typed_storage_error_with_the_driver_s_error_kept() {
    let file = sample_file();
    let (ok, reader) = block_on(read_all_async(
        chip::<4>(&file, 2, None),
        2,
        file.len() as u32,
    ));
    assert!(ok.is_ok());
    let reads = reader.into_inner().0.calls;
    for fail_on in 1..=reads {
        let (got, reader) = block_on(read_all_async(
            chip::<4>(&file, 2, Some(fail_on)),
            2,
            file.len() as u32,
        ));
        let err = got.unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::Storage { .. }),
            "read {fail_on}: {:?}",
            err.kind()
        );
        assert_eq!(
            reader.storage_error(),
            Some(&ChipError(NorFlashErrorKind::Other)),
            "read {fail_on}"
        );
        // The same error, address and length as the blocking reader's.
        same_as_blocking::<4>(&file, 2, Some(fail_on));
    }
    // The first read is the 8-byte length prefix at the file's start.
    let (got, _) = block_on(read_all_async(
        chip::<4>(&file, 2, Some(1)),
        2,
        file.len() as u32,
    ));
    assert_eq!(
        got.unwrap_err().kind(),
        ErrorKind::Storage { address: 2, len: 8 }
    );
}
