//! Re-writes a safetensors file: keep a subset of its tensors, rename them,
//! convert float dtypes — streaming, without ever loading the input whole.
//!
//! ```text
//! cargo run --release -p safetensors-nano --example rewrite -- IN OUT
//!     [--keep REGEX]... [--drop REGEX]... [--rename OLD=NEW]... [--convert FROM:TO]...
//! ```
//!
//! - `--keep REGEX`: keep only tensors whose name matches one of these.
//! - `--drop REGEX`: then drop tensors whose name matches one of these.
//! - `--rename OLD=NEW`: replace every match of the regex `OLD` in each kept
//!   name with `NEW` (`$1`, `${name}` refer to groups); applied in order.
//! - `--convert FROM:TO`: write every tensor of float dtype `FROM` as `TO`
//!   (`F64`, `F32`, `F16` or `BF16`), rounding to nearest, ties to even.
//!
//! With no options OUT holds the same tensors and metadata in the canonical
//! layout: byte for byte what the reference writer makes of them (when there
//! is at most one metadata key; more keys are written sorted).
//!
//! Only the header is read into memory; tensor data is copied (or converted)
//! through one fixed-size buffer, in the order the writer needs it. OUT is
//! written to a temporary file renamed into place at the end: on any error
//! (an invalid IN, a name collision after renaming, a read error) there is
//! no OUT file and an existing one is left as it was.

use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use regex::Regex;
use safetensors_nano::write::{convert_into, Existing, Plan, Sink, Writer};
use safetensors_nano::{Dtype, Error, ErrorKind, Header, Parser, Slot, Status, TensorRef};
use tempfile::NamedTempFile;

/// What to do, from the command line.
#[derive(Debug, Default)]
pub struct Options {
    /// Keep only names matching one of these (all when empty).
    pub keep: Vec<Regex>,
    /// Drop names matching one of these.
    pub drop: Vec<Regex>,
    /// `(pattern, replacement)` pairs applied in order to kept names.
    pub renames: Vec<(Regex, String)>,
    /// `(from, to)` dtype conversions.
    pub converts: Vec<(Dtype, Dtype)>,
}

/// Why a rewrite failed.
#[derive(Debug)]
pub enum RewriteError {
    /// Bad command line.
    Usage(String),
    /// Reading IN or writing OUT failed.
    Io(io::Error),
    /// IN is not a valid safetensors file: our reader's typed error, and
    /// its message (naming the tensor, when the header was read).
    Input(Error, String),
    /// IN holds a tensor of a rank over [`MAX_RANK`] (named).
    Rank(String),
    /// The output cannot be planned (e.g. two tensors renamed to one name);
    /// the tensor's name when the error names one.
    Output(Error, Option<String>),
}

impl fmt::Display for RewriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RewriteError::Usage(msg) => write!(f, "usage: {msg}"),
            RewriteError::Io(e) => write!(f, "i/o: {e}"),
            RewriteError::Input(e, message) => {
                write!(f, "invalid input ({}): {message}", e.kind().name())
            }
            RewriteError::Rank(name) => {
                write!(f, "tensor {name:?} has more than {MAX_RANK} dimensions")
            }
            RewriteError::Output(e, Some(name)) => {
                write!(
                    f,
                    "cannot write output ({}): {e}: {name:?}",
                    e.kind().name()
                )
            }
            RewriteError::Output(e, None) => {
                write!(f, "cannot write output ({}): {e}", e.kind().name())
            }
        }
    }
}

impl From<Error> for RewriteError {
    /// An input error found before the header was read.
    fn from(e: Error) -> Self {
        RewriteError::Input(e, e.to_string())
    }
}

impl From<io::Error> for RewriteError {
    fn from(e: io::Error) -> Self {
        RewriteError::Io(e)
    }
}

/// A [`Sink`] over a buffered file that keeps the `io::Error` of a failed
/// write (the writer reports [`ErrorKind::Sink`]).
struct FileSink {
    file: BufWriter<NamedTempFile>,
    error: Option<io::Error>,
}

impl Sink for FileSink {
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.file.write_all(bytes).map_err(|e| {
            self.error = Some(e);
            Error::new(ErrorKind::Sink)
        })
    }
}

/// The writer's error, or the file's when the file is what failed.
fn output_error(e: Error, io: Option<&io::Error>, name: Option<&str>) -> RewriteError {
    match io {
        Some(io) if e.kind() == ErrorKind::Sink => {
            RewriteError::Io(io::Error::new(io.kind(), io.to_string()))
        }
        _ => RewriteError::Output(e, name.map(str::to_owned)),
    }
}

/// What a rewrite did.
#[derive(Debug, PartialEq, Eq)]
pub struct Summary {
    /// Tensors written.
    pub written: usize,
    /// Tensors left out by `--keep` / `--drop`.
    pub dropped: usize,
    /// Tensors whose name changed.
    pub renamed: usize,
    /// Tensors whose dtype changed.
    pub converted: usize,
    /// Bytes in OUT.
    pub file_len: u64,
}

/// Parses `IN OUT [options]`.
///
/// # Errors
/// [`RewriteError::Usage`] for anything it does not understand.
pub fn parse_args(
    args: impl IntoIterator<Item = String>,
) -> Result<(PathBuf, PathBuf, Options), RewriteError> {
    let usage = |msg: String| RewriteError::Usage(msg);
    let regex = |r: &str| Regex::new(r).map_err(|e| usage(format!("bad regex {r:?}: {e}")));
    let mut paths = Vec::new();
    let mut options = Options::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .ok_or_else(|| usage(format!("{name} needs a value")))
        };
        match arg.as_str() {
            "--keep" => options.keep.push(regex(&value("--keep")?)?),
            "--drop" => options.drop.push(regex(&value("--drop")?)?),
            "--rename" => {
                let v = value("--rename")?;
                let (old, new) = v
                    .split_once('=')
                    .ok_or_else(|| usage(format!("--rename {v:?}: expected OLD=NEW")))?;
                options.renames.push((regex(old)?, new.to_owned()));
            }
            "--convert" => {
                let v = value("--convert")?;
                let parse = |name: &str| {
                    Dtype::from_name(name.as_bytes())
                        .ok_or_else(|| usage(format!("--convert {v:?}: unknown dtype {name:?}")))
                };
                let (from, to) = v
                    .split_once(':')
                    .ok_or_else(|| usage(format!("--convert {v:?}: expected FROM:TO")))?;
                let (from, to) = (parse(from)?, parse(to)?);
                if !from.is_float() {
                    return Err(usage(format!(
                        "--convert {v:?}: {from} is not a float dtype"
                    )));
                }
                if !matches!(to, Dtype::F64 | Dtype::F32 | Dtype::F16 | Dtype::BF16) {
                    return Err(usage(format!(
                        "--convert {v:?}: TO must be F64, F32, F16 or BF16"
                    )));
                }
                if options.converts.iter().any(|&(f, _)| f == from) {
                    return Err(usage(format!("--convert: {from} given twice")));
                }
                options.converts.push((from, to));
            }
            a if a.starts_with("--") => return Err(usage(format!("unknown option {a}"))),
            _ => paths.push(PathBuf::from(arg)),
        }
    }
    match <[PathBuf; 2]>::try_from(paths) {
        Ok([input, output]) => Ok((input, output, options)),
        Err(_) => Err(usage("expected IN OUT".to_owned())),
    }
}

/// The most dimensions a tensor may have here (the writer's entries hold
/// their dims inline).
pub const MAX_RANK: usize = 32;

/// One output tensor: IN's tensor (its `source()`, where its data is),
/// under its output name and dtype.
type Entry<'a> = Existing<'a, MAX_RANK>;

/// Reads and validates IN's header (the header only), checking the file
/// length too.
fn read_header(file: &mut File, header_bytes: &mut Vec<u8>) -> Result<(), RewriteError> {
    let parser = Parser::new();
    let file_len = file.metadata()?.len();
    let mut prefix = [0u8; 8];
    let got = read_up_to(file, &mut prefix)?;
    let needed = parser.bytes_needed(&prefix[..got])?;
    if got < 8 {
        return Err(Error::new(ErrorKind::HeaderTooSmall { len: file_len }).into());
    }
    if needed > file_len {
        return Err(Error::new(ErrorKind::InvalidHeaderLength {
            header_len: needed - 8,
            file_len,
        })
        .into());
    }
    header_bytes.clear();
    header_bytes.extend_from_slice(&prefix);
    let needed = usize::try_from(needed).map_err(|_| Error::from(ErrorKind::TooLargeForTarget))?;
    header_bytes.resize(needed, 0);
    file.read_exact(&mut header_bytes[8..])?;
    Ok(())
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn read_up_to(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Parses the header with a slot table sized to it.
fn parse_header(prefix: &[u8]) -> Result<Header<'_, Vec<Slot>>, Error> {
    let mut slots = 64;
    loop {
        match Parser::new().parse_header(prefix, vec![Slot::EMPTY; slots]) {
            Ok(Status::Complete(header)) => return Ok(header),
            Ok(Status::Partial { needed }) => {
                return Err(Error::new(ErrorKind::InvalidHeaderLength {
                    header_len: needed.saturating_sub(8),
                    file_len: prefix.len() as u64,
                }))
            }
            Err(e) => match e.kind() {
                ErrorKind::CapacityExceeded { needed, .. } if needed as usize > slots => {
                    slots = needed as usize;
                }
                _ => return Err(e),
            },
        }
    }
}

/// Rewrites `input` into `output` as `options` say.
///
/// # Errors
/// See [`RewriteError`]; on any error `output` is not created or changed.
pub fn rewrite(input: &Path, output: &Path, options: &Options) -> Result<Summary, RewriteError> {
    let mut file = File::open(input)?;
    let mut header_bytes = Vec::new();
    read_header(&mut file, &mut header_bytes)?;
    // Input errors name their tensor (`display_in`), not its header bytes.
    let input = |e: Error| RewriteError::Input(e, e.display_in(&header_bytes[8..]).to_string());
    let header = parse_header(&header_bytes).map_err(input)?;
    header
        .check_file_len(file.metadata()?.len())
        .map_err(input)?;

    // Which tensors, under which names (the entries borrow them), as which dtype.
    let mut chosen: Vec<(_, String, Dtype)> = Vec::with_capacity(header.len());
    let (mut dropped, mut renamed, mut converted) = (0, 0, 0);
    for info in header.iter() {
        let original = info.name().to_string();
        let kept = options.keep.is_empty() || options.keep.iter().any(|r| r.is_match(&original));
        if !kept || options.drop.iter().any(|r| r.is_match(&original)) {
            dropped += 1;
            continue;
        }
        let mut name = original.clone();
        for (pattern, replacement) in &options.renames {
            name = pattern
                .replace_all(&name, replacement.as_str())
                .into_owned();
        }
        renamed += usize::from(name != original);
        let source_dtype = info.dtype();
        let dtype = options
            .converts
            .iter()
            .find(|&&(from, _)| from == source_dtype)
            .map_or(source_dtype, |&(_, to)| to);
        converted += usize::from(dtype != source_dtype);
        chosen.push((info, name, dtype));
    }
    let mut entries = Vec::with_capacity(chosen.len());
    for (info, name, dtype) in &chosen {
        let entry = Entry::with_name(info, name).ok_or_else(|| RewriteError::Rank(name.clone()))?;
        let entry = if *dtype == info.dtype() {
            entry
        } else {
            entry
                .with_dtype(*dtype)
                .map_err(|e| RewriteError::Output(e, Some(name.clone())))?
        };
        entries.push(entry);
    }
    let mut metadata: Option<Vec<(String, String)>> = header.metadata().map(|m| {
        m.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    });
    let mut pairs: Option<Vec<(&str, &str)>> = metadata
        .as_mut()
        .map(|m| m.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect());

    let plan = match pairs.as_mut() {
        Some(pairs) => Plan::with_metadata(&mut entries, pairs),
        None => Plan::new(&mut entries),
    };
    let plan = match plan {
        Ok(plan) => plan,
        Err(e) => {
            let name = match e.tensor() {
                Some(TensorRef::Index(i)) => {
                    entries.get(i as usize).map(|t| t.spec().name().to_owned())
                }
                _ => None,
            };
            return Err(RewriteError::Output(e, name));
        }
    };

    // OUT: a temporary file next to it, renamed into place when complete
    // (removed on any error when `temp` drops). It gets IN's permissions.
    let dir = match output.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let temp = tempfile::Builder::new()
        .prefix(".rewrite-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    temp.as_file()
        .set_permissions(file.metadata()?.permissions())?;
    let sink = FileSink {
        file: BufWriter::new(temp),
        error: None,
    };
    let mut out = Writer::begin(&plan, sink).map_err(|e| output_error(e, None, None))?;
    let mut buf = vec![0u8; 1 << 16];
    let mut converted_buf = vec![0u8; 1 << 17];
    for placed in plan.iter() {
        let entry = placed.tensor();
        let (source, spec) = (entry.source(), entry.spec());
        let (dtype, source_dtype) = (spec.dtype(), source.dtype());
        let fail = |e: Error, out: &Writer<'_, Entry, FileSink>| {
            output_error(e, out.sink().error.as_ref(), Some(spec.name()))
        };
        file.seek(SeekFrom::Start(
            header.data_start() + source.data_offsets().0,
        ))?;
        let mut left = source.byte_len();
        if dtype == source_dtype {
            while left > 0 {
                let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                file.read_exact(&mut buf[..n])?;
                out.write_tensor_data(&buf[..n])
                    .map_err(|e| fail(e, &out))?;
                left -= n as u64;
            }
        } else {
            // 8192 elements per step: whole bytes for every dtype, and at most
            // 64 KiB in (8192 × 8 bytes) and out.
            let elements_per_step = 8192u64;
            let bits_in = u64::from(source_dtype.bits());
            let bytes_out = u64::from(dtype.bits()) / 8;
            while left > 0 {
                let n_in = (elements_per_step * bits_in / 8).min(left);
                let n_out = n_in * 8 / bits_in * bytes_out;
                let (n_in, n_out) = (n_in as usize, n_out as usize);
                file.read_exact(&mut buf[..n_in])?;
                convert_into(
                    source_dtype,
                    &buf[..n_in],
                    dtype,
                    &mut converted_buf[..n_out],
                )
                .map_err(|e| fail(e, &out))?;
                out.write_tensor_data(&converted_buf[..n_out])
                    .map_err(|e| fail(e, &out))?;
                left -= n_in as u64;
            }
        }
        out.finish_tensor().map_err(|e| fail(e, &out))?;
    }
    let sink = out.finish().map_err(|e| output_error(e, None, None))?;
    if let Some(e) = sink.error {
        return Err(RewriteError::Io(e));
    }
    let temp = sink
        .file
        .into_inner()
        .map_err(io::IntoInnerError::into_error)?;
    temp.as_file().sync_all()?;
    temp.persist(output)
        .map_err(|e| RewriteError::Io(e.error))?;
    Ok(Summary {
        written: plan.len(),
        dropped,
        renamed,
        converted,
        file_len: plan.file_len(),
    })
}

/// Parses the arguments (without the program name) and rewrites.
///
/// # Errors
/// See [`RewriteError`].
pub fn run(args: impl IntoIterator<Item = String>) -> Result<Summary, RewriteError> {
    let (input, output, options) = parse_args(args)?;
    rewrite(&input, &output, &options)
}

#[allow(dead_code)] // when included by the tests
fn main() -> ExitCode {
    match run(std::env::args().skip(1)) {
        Ok(s) => {
            println!(
                "wrote {} tensors ({} dropped, {} renamed, {} converted), {} bytes",
                s.written, s.dropped, s.renamed, s.converted, s.file_len
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            if matches!(e, RewriteError::Usage(_)) {
                eprintln!(
                    "usage: rewrite IN OUT [--keep REGEX]... [--drop REGEX]... \
                     [--rename OLD=NEW]... [--convert FROM:TO]..."
                );
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
