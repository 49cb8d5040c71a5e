//! `std` file writing: complete files only, never a half-written
//! destination, never a stray temporary file.
#![cfg(feature = "std")]

use std::io::{self, Write};

use safetensors_nano::write::{write_file, IoSink, Plan, Tensor, TensorSpec};
use safetensors_nano::{Dtype, Error, ErrorKind};
use safetensors_nano_test_support::tensors::{dir_entries, write, Owned};

fn ours_inside(err: &io::Error) -> ErrorKind {
    err.get_ref()
        .and_then(|e| e.downcast_ref::<Error>())
        .unwrap_or_else(|| panic!("not our error: {err}"))
        .kind()
}

#[test]
fn write_file_matches_the_buffer_writer_and_replaces_the_destination() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    std::fs::write(&path, b"old contents").unwrap();
    let tensors = [
        Owned::new("w", Dtype::F32, &[2], &[0, 0, 128, 63, 0, 0, 0, 64]),
        Owned::new("b", Dtype::U8, &[1], &[7]),
    ];
    let mut views: Vec<Tensor<'_>> = tensors.iter().map(Owned::view).collect();
    write_file(&path, &mut views, Some(&mut [("format", "pt")])).unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        write(&tensors, Some(&[("format".into(), "pt".into())])).unwrap()
    );
    assert_eq!(dir_entries(dir.path()), ["m.safetensors"]);
}

#[test]
fn invalid_input_creates_no_file_and_keeps_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    std::fs::write(&path, b"old contents").unwrap();
    let mut dup = [
        Tensor::new("x", Dtype::U8, &[1], &[1]),
        Tensor::new("x", Dtype::U8, &[1], &[2]),
    ];
    let err = write_file(&path, &mut dup, None).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert_eq!(ours_inside(&err), ErrorKind::DuplicateTensorName);
    let mut bad = [Tensor::new("x", Dtype::F32, &[1], &[1])];
    assert_eq!(
        ours_inside(&write_file(&path, &mut bad, None).unwrap_err()),
        ErrorKind::DataLengthMismatch {
            expected: 4,
            found: 1
        }
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"old contents");
    assert_eq!(dir_entries(dir.path()), ["m.safetensors"]);
}

#[test]
fn data_that_never_arrives_leaves_no_trace() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stream.safetensors");
    let mut specs = [
        TensorSpec::new("a", Dtype::U16, &[1000], 2000),
        TensorSpec::new("b", Dtype::U8, &[10], 10),
    ];
    let plan = Plan::new(&mut specs).unwrap();

    // 1. dropped half-way (the source failed, the caller returned early)
    {
        let mut file = plan.create_file(&path).unwrap();
        file.write_tensor_data(&[0; 1500]).unwrap();
        assert_eq!(
            dir_entries(dir.path()).len(),
            1,
            "the temporary file exists meanwhile"
        );
        assert!(!path.exists());
    }
    assert!(dir_entries(dir.path()).is_empty());

    // 2. committed with a tensor short
    let mut file = plan.create_file(&path).unwrap();
    file.write_tensor("a", &[0; 2000]).unwrap();
    file.write_tensor_data(&[1; 4]).unwrap();
    let err = file.commit().unwrap_err();
    assert_eq!(
        ours_inside(&err),
        ErrorKind::DataLengthMismatch {
            expected: 10,
            found: 4
        }
    );
    assert!(dir_entries(dir.path()).is_empty());

    // 3. a panic while streaming
    let result = std::panic::catch_unwind(|| {
        let mut file = plan.create_file(&path).unwrap();
        file.write_tensor_data(&[0; 10]).unwrap();
        panic!("source crashed");
    });
    assert!(result.is_err());
    assert!(dir_entries(dir.path()).is_empty());

    // 4. refused data keeps the writer usable
    let mut file = plan.create_file(&path).unwrap();
    assert_eq!(
        ours_inside(&file.write_tensor("b", &[0; 10]).unwrap_err()),
        ErrorKind::DataOutOfOrder
    );
    assert_eq!(file.current().unwrap().spec().name(), "a");
    assert_eq!(file.remaining(), 2000);
    assert_eq!(file.begin_tensor("a").unwrap().byte_len(), 2000);
    file.write_tensor_data(&[0; 2000]).unwrap();
    file.finish_tensor().unwrap();
    file.write_tensor("b", &[9; 10]).unwrap();
    file.commit().unwrap();
    assert_eq!(dir_entries(dir.path()), ["stream.safetensors"]);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), plan.file_len());
}

#[test]
fn missing_folder_is_an_io_error_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no/such/folder/m.safetensors");
    let mut tensors = [Tensor::new("x", Dtype::U8, &[1], &[1])];
    let err = write_file(&path, &mut tensors, None).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    assert!(dir_entries(dir.path()).is_empty());
    let mut specs = [TensorSpec::new("x", Dtype::U8, &[1], 1)];
    let plan = Plan::new(&mut specs).unwrap();
    assert_eq!(
        plan.create_file("/").unwrap_err().kind(),
        io::ErrorKind::InvalidInput
    );
}

#[test]
fn relative_path_in_the_current_folder() {
    // A bare file name has an empty parent: the temporary file goes in ".".
    let dir = tempfile::tempdir().unwrap();
    let old = std::env::current_dir().unwrap();
    std::env::set_current_dir(dir.path()).unwrap();
    let mut tensors = [Tensor::new("x", Dtype::U8, &[1], &[1])];
    let result = write_file("bare.safetensors", &mut tensors, None);
    std::env::set_current_dir(old).unwrap();
    result.unwrap();
    assert_eq!(dir_entries(dir.path()), ["bare.safetensors"]);
}

/// A writer that fails after `left` bytes.
#[derive(Debug)]
struct Failing {
    left: usize,
}
impl Write for Failing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Err(io::Error::other("disk full"));
        }
        let n = buf.len().min(self.left);
        self.left -= n;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn io_errors_come_back_as_themselves() {
    let mut tensors = [Tensor::new("x", Dtype::U8, &[100], &[1; 100])];
    let plan = Plan::new(&mut tensors).unwrap();
    let err = plan.write_io(Failing { left: 70 }).unwrap_err();
    assert_eq!(err.to_string(), "disk full");
    let mut sink = IoSink::new(Failing { left: 10 });
    let err = plan.write_to(&mut sink).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Sink);
    assert_eq!(sink.take_error().unwrap().to_string(), "disk full");
    let out = plan.write_io(Vec::new()).unwrap();
    assert_eq!(
        out,
        write(&[Owned::new("x", Dtype::U8, &[100], &[1; 100])], None).unwrap()
    );
}
