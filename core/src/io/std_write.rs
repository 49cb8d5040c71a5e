//! `std` integration: a sink for any `std::io::Write`, and files that are
//! written to a temporary name and renamed, so the destination is never
//! left half-written.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::{Error, ErrorKind};
use crate::write::plan::{Placed, Plan};
use crate::write::sink::Sink;
use crate::write::spec::{AsSpec, AsTensor};
use crate::write::stream::Writer;

/// A [`Sink`] over any [`std::io::Write`]. It keeps the `io::Error` of a
/// failed write (the writer itself reports [`ErrorKind::Sink`]); get it with
/// [`take_error`](IoSink::take_error). Wrap unbuffered destinations (a
/// `File`, a socket) in a `BufWriter`: the header is written in small pieces.
///
/// ```
/// use safetensors_nano::{Dtype, write::{IoSink, Plan, Tensor}};
/// let mut tensors = [Tensor::new("x", Dtype::U8, &[1], &[42])];
/// let plan = Plan::new(&mut tensors)?;
/// let sink = plan.write_to(IoSink::new(std::io::Cursor::new(Vec::new())))?;
/// assert_eq!(sink.into_inner().into_inner().len() as u64, plan.file_len());
/// # Ok::<(), safetensors_nano::Error>(())
/// ```
#[derive(Debug)]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub struct IoSink<W> {
    inner: W,
    error: Option<io::Error>,
}

impl<W: Write> IoSink<W> {
    /// Wraps `inner`.
    ///
    /// ```
    /// use safetensors_nano::write::IoSink;
    /// let sink = IoSink::new(Vec::<u8>::new());
    /// assert!(sink.get_ref().is_empty());
    /// ```
    pub fn new(inner: W) -> Self {
        IoSink { inner, error: None }
    }

    /// The `io::Error` of the last failed write or flush, if any.
    ///
    /// ```
    /// use safetensors_nano::write::{IoSink, Sink};
    /// let mut buf = [0u8; 2];
    /// let mut sink = IoSink::new(&mut buf[..]);
    /// assert!(sink.write_all(b"abc").is_err());
    /// assert_eq!(sink.take_error().unwrap().kind(), std::io::ErrorKind::WriteZero);
    /// ```
    pub fn take_error(&mut self) -> Option<io::Error> {
        self.error.take()
    }

    /// The wrapped writer.
    ///
    /// ```
    /// use safetensors_nano::write::IoSink;
    /// assert_eq!(IoSink::new(vec![1u8]).get_ref(), &[1]);
    /// ```
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// Unwraps the writer.
    ///
    /// ```
    /// use safetensors_nano::write::IoSink;
    /// assert_eq!(IoSink::new(vec![1u8]).into_inner(), [1]);
    /// ```
    pub fn into_inner(self) -> W {
        self.inner
    }

    fn keep(&mut self, result: io::Result<()>) -> Result<(), Error> {
        result.map_err(|e| {
            self.error = Some(e);
            Error::new(ErrorKind::Sink)
        })
    }
}

impl<W: Write> Sink for IoSink<W> {
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let result = self.inner.write_all(bytes);
        self.keep(result)
    }

    fn flush(&mut self) -> Result<(), Error> {
        let result = self.inner.flush();
        self.keep(result)
    }
}

/// Our error as an `io::Error`, or the sink's own `io::Error` when the
/// sink is what failed. Ours comes out as `InvalidInput` with the [`Error`]
/// inside (`err.get_ref()` and `downcast_ref::<Error>()` recover it).
fn to_io<W: Write>(err: Error, sink: &mut IoSink<W>) -> io::Error {
    match sink.take_error() {
        Some(io) if err.kind() == ErrorKind::Sink => io,
        _ => io::Error::new(io::ErrorKind::InvalidInput, err),
    }
}

fn invalid(err: Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, err)
}

#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
impl<'p, T: AsSpec> Plan<'p, T> {
    /// Writes the whole file to `w` and returns it (not flushed beyond
    /// what `w.flush()` does).
    ///
    /// # Errors
    /// `w`'s own `io::Error`s; an `InvalidInput` error holding our [`Error`]
    /// (before anything is written) when an item's data length is wrong.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, Tensor}};
    /// let mut tensors = [Tensor::new("x", Dtype::U8, &[1], &[42])];
    /// let plan = Plan::new(&mut tensors)?;
    /// let out = plan.write_io(Vec::new())?;
    /// assert_eq!(out.last(), Some(&42));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_io<W: Write>(&self, w: W) -> io::Result<W>
    where
        T: AsTensor,
    {
        let mut sink = IoSink::new(w);
        match self.write_to(&mut sink) {
            Ok(_) => Ok(sink.into_inner()),
            Err(e) => Err(to_io(e, &mut sink)),
        }
    }

    /// Starts writing the file at `path` through a temporary file in the
    /// same folder; [`FileWriter::commit`] renames it to `path`. Until then
    /// `path` is untouched, and dropping the writer removes the temporary
    /// file.
    ///
    /// # Errors
    /// The `io::Error` of creating or writing the temporary file;
    /// `InvalidInput` when `path` has no file name.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("counts.safetensors");
    /// let mut specs = [TensorSpec::new("counts", Dtype::U32, &[3], 12)];
    /// let plan = Plan::new(&mut specs)?;
    /// let mut file = plan.create_file(&path)?;
    /// for n in [1u32, 2, 3] {
    ///     file.write_tensor_data(&n.to_le_bytes())?;
    /// }
    /// file.finish_tensor()?;
    /// assert!(!path.exists());
    /// file.commit()?;
    /// assert_eq!(std::fs::metadata(&path)?.len(), plan.file_len());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn create_file(&self, path: impl AsRef<Path>) -> io::Result<FileWriter<'p, T>> {
        let dest = path.as_ref().to_path_buf();
        let (file, temp) = create_temp(&dest)?;
        let guard = TempGuard { path: Some(temp) };
        let mut sink = IoSink::new(BufWriter::new(file));
        if let Err(e) = self.write_header(&mut sink) {
            return Err(to_io(e, &mut sink));
        }
        let writer = Writer::after_header(self, sink);
        Ok(FileWriter {
            writer,
            guard,
            dest,
        })
    }

    /// Writes the whole file at `path` through a temporary file and a
    /// rename: `path` gets the complete file or is left as it was.
    ///
    /// # Errors
    /// As [`create_file`](Plan::create_file) and
    /// [`FileWriter::commit`]; an `InvalidInput` error holding our
    /// [`Error`] (before any file is created) when an item's data length is
    /// wrong.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, Tensor}};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("model.safetensors");
    /// let bias = 0.5f32.to_le_bytes();
    /// let mut tensors = [Tensor::new("bias", Dtype::F32, &[1], &bias)];
    /// Plan::new(&mut tensors)?.write_file(&path)?;
    /// assert!(path.exists());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_file(&self, path: impl AsRef<Path>) -> io::Result<()>
    where
        T: AsTensor,
    {
        self.check_data().map_err(invalid)?;
        let mut file = self.create_file(path)?;
        for tensor in self.tensors() {
            file.write_tensor_data(tensor.data())?;
            file.finish_tensor()?;
        }
        file.commit()
    }
}

/// Writes `bytes` to the file at `path` by the same rule as the
/// safetensors files (docs/format.md W12 replace-atomically): through a
/// temporary file beside it, synced and renamed; for the files that go
/// with a checkpoint, such as a sharded checkpoint's index.
///
/// # Errors
/// The `io::Error` of creating, writing, syncing or renaming; then the
/// temporary file is removed and `path` is as it was.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("model.safetensors.index.json");
/// safetensors_nano::write::replace_file(&path, b"{}")?;
/// assert_eq!(std::fs::read(&path)?, b"{}");
/// # Ok::<(), std::io::Error>(())
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub fn replace_file(path: impl AsRef<Path>, bytes: &[u8]) -> io::Result<()> {
    let dest = path.as_ref();
    let (mut file, temp) = create_temp(dest)?;
    let mut guard = TempGuard { path: Some(temp) };
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    if let Some(temp) = &guard.path {
        fs::rename(temp, dest)?;
    }
    guard.path = None;
    sync_dir(dest);
    Ok(())
}

/// What ends the name of every temporary file the writer makes
/// (docs/format.md W12 replace-atomically).
const TEMP_SUFFIX: &str = ".safetensors-nano-tmp";

/// Creates the temporary file for `dest` in its folder, named
/// `.<file name>.<pid>.<16 lowercase hex digits>.safetensors-nano-tmp`
/// (W12 replace-atomically), after removing the ones a dead process left
/// for the same file name.
fn create_temp(dest: &Path) -> io::Result<(File, PathBuf)> {
    let name = dest.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "destination has no file name")
    })?;
    let dir = match dest.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    remove_stale_temps(dir, name);
    let pid = std::process::id();
    let mut last = None;
    for _ in 0..64 {
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(std::format!(".{pid}.{:016x}{TEMP_SUFFIX}", random_u64()));
        let temp = dir.join(temp_name);
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((file, temp)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists)))
}

/// 64 unpredictable bits without a dependency: std's `RandomState` is
/// seeded from the OS once per thread and stepped on each call; the clock
/// and a counter make two calls differ even where it is not.
fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(t.as_nanos());
    }
    hasher.finish()
}

/// The process id in `file`, when it is a temporary file of ours for the
/// file name `name` (W12's pattern, exactly).
fn temp_owner(file: &str, name: &str) -> Option<u32> {
    let rest = file
        .strip_prefix('.')?
        .strip_prefix(name)?
        .strip_prefix('.')?
        .strip_suffix(TEMP_SUFFIX)?;
    let (pid, random) = rest.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let hex = random.len() == 16
        && random
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if digits(pid) && hex {
        pid.parse().ok()
    } else {
        None
    }
}

/// Removes the temporary files for `name` in `dir` whose process is gone
/// (W12: a writer killed before its rename leaves one). Only where a
/// process's liveness can be told from `/proc` (Linux), and only files of
/// our own user: another user's process may be hidden from us (`/proc`
/// mounted with `hidepid`, another PID namespace) while it writes. Elsewhere
/// they are left alone. Failing to list or remove is not an error: the
/// write goes on.
fn remove_stale_temps(dir: &Path, name: &std::ffi::OsStr) {
    let proc = Path::new("/proc");
    if !cfg!(target_os = "linux") {
        return;
    }
    // `/proc/self` belongs to the user this process runs as.
    let (Some(me), Some(name), Ok(entries)) = (
        fs::metadata(proc.join("self"))
            .ok()
            .and_then(|m| user_of(&m)),
        name.to_str(),
        fs::read_dir(dir),
    ) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(pid) = file.to_str().and_then(|f| temp_owner(f, name)) else {
            continue;
        };
        let ours = entry.metadata().ok().and_then(|m| user_of(&m)) == Some(me);
        if ours && !proc.join(std::format!("{pid}")).exists() {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The user id that owns a file (Unix); `None` elsewhere.
#[cfg(unix)]
fn user_of(metadata: &fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    Some(metadata.uid())
}

/// The user id that owns a file (Unix); `None` elsewhere.
#[cfg(not(unix))]
fn user_of(_: &fs::Metadata) -> Option<u32> {
    None
}

/// Makes the rename durable (W12): syncs the folder that holds `dest`,
/// where the platform allows opening one. The file is in place whatever
/// this does, so its failure is not reported.
fn sync_dir(dest: &Path) {
    let dir = match dest.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Removes the temporary file unless disarmed.
#[derive(Debug)]
struct TempGuard {
    path: Option<PathBuf>,
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let _ = fs::remove_file(path);
        }
    }
}

/// A [`Writer`] into a temporary file that becomes the destination only on
/// [`commit`](FileWriter::commit). Dropped before that (an error, a panic,
/// data that never arrived), it removes the temporary file and leaves the
/// destination as it was.
///
/// Its methods are the [`Writer`]'s, returning `io::Result`: our errors
/// come as `InvalidInput` with the [`Error`] inside.
///
/// ```
/// use safetensors_nano::{Dtype, Error, ErrorKind, write::{Plan, TensorSpec}};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("partial.safetensors");
/// let mut specs = [TensorSpec::new("x", Dtype::U8, &[4], 4)];
/// let plan = Plan::new(&mut specs)?;
/// let mut file = plan.create_file(&path)?;
/// file.write_tensor_data(&[1, 2])?; // ...and then the source fails
/// let err = file.commit().unwrap_err();
/// let ours = err.get_ref().and_then(|e| e.downcast_ref::<Error>()).unwrap();
/// assert_eq!(ours.kind(), ErrorKind::DataLengthMismatch { expected: 4, found: 2 });
/// assert!(!path.exists());
/// assert_eq!(std::fs::read_dir(dir.path())?.count(), 0); // no temporary file either
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub struct FileWriter<'p, T> {
    // Declared first so the file is closed before the guard removes it.
    writer: Writer<'p, T, IoSink<BufWriter<File>>>,
    guard: TempGuard,
    dest: PathBuf,
}

impl<'p, T: AsSpec> FileWriter<'p, T> {
    fn io<R>(&mut self, result: Result<R, Error>) -> io::Result<R> {
        result.map_err(|e| to_io(e, self.writer.sink_mut()))
    }

    /// See [`Writer::current`].
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let dir = tempfile::tempdir()?;
    /// let mut specs = [TensorSpec::new("x", Dtype::U8, &[1], 1)];
    /// let plan = Plan::new(&mut specs)?;
    /// let file = plan.create_file(dir.path().join("a.safetensors"))?;
    /// assert_eq!(file.current().unwrap().spec().name(), "x");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn current(&self) -> Option<Placed<'p, T>> {
        self.writer.current()
    }

    /// See [`Writer::remaining`].
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let dir = tempfile::tempdir()?;
    /// let mut specs = [TensorSpec::new("x", Dtype::U8, &[3], 3)];
    /// let plan = Plan::new(&mut specs)?;
    /// let file = plan.create_file(dir.path().join("a.safetensors"))?;
    /// assert_eq!(file.remaining(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn remaining(&self) -> u64 {
        self.writer.remaining()
    }

    /// See [`Writer::begin_tensor`].
    ///
    /// # Errors
    /// `InvalidInput` holding [`ErrorKind::DataOutOfOrder`].
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let dir = tempfile::tempdir()?;
    /// let mut specs = [TensorSpec::new("x", Dtype::U8, &[1], 1)];
    /// let plan = Plan::new(&mut specs)?;
    /// let mut file = plan.create_file(dir.path().join("a.safetensors"))?;
    /// assert!(file.begin_tensor("y").is_err());
    /// assert!(file.begin_tensor("x").is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn begin_tensor(&mut self, name: &str) -> io::Result<Placed<'p, T>> {
        let result = self.writer.begin_tensor(name);
        self.io(result)
    }

    /// See [`Writer::write_tensor_data`].
    ///
    /// # Errors
    /// The file's `io::Error`; `InvalidInput` holding our [`Error`] for data
    /// refused (nothing written).
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let dir = tempfile::tempdir()?;
    /// let mut specs = [TensorSpec::new("x", Dtype::U8, &[1], 1)];
    /// let plan = Plan::new(&mut specs)?;
    /// let mut file = plan.create_file(dir.path().join("a.safetensors"))?;
    /// assert!(file.write_tensor_data(&[1, 2]).is_err());
    /// file.write_tensor_data(&[1])?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_tensor_data(&mut self, chunk: &[u8]) -> io::Result<()> {
        let result = self.writer.write_tensor_data(chunk);
        self.io(result)
    }

    /// See [`Writer::finish_tensor`].
    ///
    /// # Errors
    /// `InvalidInput` holding our [`Error`].
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let dir = tempfile::tempdir()?;
    /// let mut specs = [TensorSpec::new("x", Dtype::U8, &[1], 1)];
    /// let plan = Plan::new(&mut specs)?;
    /// let mut file = plan.create_file(dir.path().join("a.safetensors"))?;
    /// assert!(file.finish_tensor().is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish_tensor(&mut self) -> io::Result<()> {
        let result = self.writer.finish_tensor();
        self.io(result)
    }

    /// See [`Writer::write_tensor`].
    ///
    /// # Errors
    /// The file's `io::Error`; `InvalidInput` holding our [`Error`].
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let dir = tempfile::tempdir()?;
    /// let mut specs = [TensorSpec::new("x", Dtype::U8, &[1], 1)];
    /// let plan = Plan::new(&mut specs)?;
    /// let mut file = plan.create_file(dir.path().join("a.safetensors"))?;
    /// file.write_tensor("x", &[7])?;
    /// file.commit()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_tensor(&mut self, name: &str, data: &[u8]) -> io::Result<()> {
        let result = self.writer.write_tensor(name, data);
        self.io(result)
    }

    /// Checks that every tensor is complete, flushes and syncs the
    /// temporary file, and renames it to the destination (replacing any
    /// file there).
    ///
    /// # Errors
    /// `InvalidInput` holding [`ErrorKind::DataLengthMismatch`] for a tensor
    /// not complete; the `io::Error` of flushing, syncing or renaming. On
    /// error the temporary file is removed and the destination untouched.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("a.safetensors");
    /// let mut specs = [TensorSpec::new("x", Dtype::U8, &[1], 1)];
    /// let plan = Plan::new(&mut specs)?;
    /// let mut file = plan.create_file(&path)?;
    /// file.write_tensor("x", &[7])?;
    /// file.commit()?;
    /// assert_eq!(std::fs::read(&path)?.last(), Some(&7));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn commit(self) -> io::Result<()> {
        let FileWriter {
            writer,
            mut guard,
            dest,
        } = self;
        let sink = writer.finish_unflushed().map_err(invalid)?;
        let file = sink
            .into_inner()
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        drop(file);
        if let Some(temp) = &guard.path {
            fs::rename(temp, &dest)?;
        }
        guard.path = None;
        sync_dir(&dest);
        Ok(())
    }
}
