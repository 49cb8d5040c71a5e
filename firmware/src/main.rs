//! Test firmware for safetensors-nano, one program for every board (see
//! `safetensors_nano_firmware::board`; build.rs picks it from the target).
//!
//! Embeds a model file and a sample file 8-byte aligned in flash, parses
//! them with the crate (no heap: the tables are arrays on the stack), runs
//! the model on every sample twice — once through typed views of the
//! memory-mapped file, once through `FlashReader` over a flash driver that
//! copies words out of the region — and prints the predictions, the
//! accuracy, a hash of all logits, the stack each step used and the whole
//! run's stack high-water (`ram stack=`). The host test
//! (tests/firmware/run.py) repeats the computation with numpy and compares.
//!
//! Exit status (semihosting): 0 pass; 1 the two passes disagree; 2 a typed
//! parse or storage error; 3 the file is valid but not the expected model;
//! 101 panic; 102 hard fault.

#![no_std]
#![no_main]

// Test-only canary: with this the build must fail, as no allocator is linked.
#[cfg(feature = "alloc-canary")]
extern crate alloc;

mod memflash;
mod model;

use safetensors_nano::flash::FlashReader;
use safetensors_nano::{Error, Parser, SafeTensors, Slot, Table};
use safetensors_nano_firmware::board::{self, entry};
use safetensors_nano_firmware::println as hprintln;
use safetensors_nano_firmware::semihost::exit;
use safetensors_nano_firmware::stack;

use memflash::MemFlash;
use model::{evaluate, Failure, Mapped, MappedSamples, Outcome, Streamed, StreamedSamples};

safetensors_nano_firmware::exit_on_panic_and_fault!();

const EXIT_PASS: u32 = 0;
const EXIT_MISMATCH: u32 = 1;
const EXIT_FORMAT: u32 = 2;
const EXIT_MODEL: u32 = 3;

/// Places the bytes it wraps at an 8-byte aligned address.
#[repr(C, align(8))]
struct Aligned<B: ?Sized>(B);

static MODEL: &Aligned<[u8]> = &Aligned(*include_bytes!(env!("FIRMWARE_MODEL_PATH")));
static SAMPLES: &Aligned<[u8]> = &Aligned(*include_bytes!(env!("FIRMWARE_SAMPLES_PATH")));
/// Extra files to parse (hostile inputs), packed by the test: for each, a
/// u32 LE length, 4 reserved bytes, the file, zero padding to 8 bytes.
static STRESS: &Aligned<[u8]> = &Aligned(*include_bytes!(env!("FIRMWARE_STRESS_PATH")));

/// RAM for a header read through the flash path.
const HEADER_BUF: usize = 1024;
/// One parser for both paths: a header must fit the flash path's buffer.
const PARSER: Parser = Parser::new().header_limit(HEADER_BUF as u64 - 8);
/// Table slots: tensors plus metadata entries.
const SLOTS: usize = 16;

#[entry]
fn main() -> ! {
    stack::paint();
    let code = match run() {
        Ok(true) => {
            hprintln!("result=pass");
            EXIT_PASS
        }
        Ok(false) => {
            hprintln!("result=mismatch");
            EXIT_MISMATCH
        }
        Err((file, Failure::Format(e))) => {
            report_error(file, &e);
            EXIT_FORMAT
        }
        Err((file, Failure::Model(why))) => {
            hprintln!("error file={} kind=Model msg=\"{}\"", file.name, why);
            EXIT_MODEL
        }
    };
    hprintln!("ram board={} stack={}", board::NAME, stack::peak());
    exit(code)
}

/// An embedded file and its name in the output.
#[derive(Clone, Copy)]
struct File {
    name: &'static str,
    bytes: &'static [u8],
}

impl File {
    const MODEL: File = File {
        name: "model",
        bytes: &MODEL.0,
    };
    const SAMPLES: File = File {
        name: "samples",
        bytes: &SAMPLES.0,
    };
}

/// Runs everything; `Ok(true)` when both passes agree.
fn run() -> Result<bool, (File, Failure)> {
    let (model, samples) = (File::MODEL, File::SAMPLES);
    // What `stack::measure` itself adds to every figure (its call into the closure).
    let ((), overhead) = stack::measure(|| ());
    hprintln!(
        "firmware board={} model_bytes={} model_addr={:#010x} samples_bytes={} slot_bytes={} table_bytes={} header_buf={} error_bytes={} stack_overhead={}",
        board::NAME,
        model.bytes.len(),
        model.bytes.as_ptr() as usize,
        samples.bytes.len(),
        core::mem::size_of::<Slot>(),
        core::mem::size_of::<Table<SLOTS>>(),
        HEADER_BUF,
        core::mem::size_of::<Error>(),
        overhead
    );
    stress();

    // Pass 1: typed views into the memory-mapped files.
    let (mapped, stack) = stack::measure(mapped_pass);
    let mapped = mapped?;
    print_outcome("mapped", &mapped, stack);

    // Pass 2: the same model through FlashReader, one weight row at a time.
    measured_flash_header(model).map_err(|e| (model, e.into()))?;
    let mut model_flash = MemFlash::new(model.bytes);
    let mut sample_flash = MemFlash::new(samples.bytes);
    let (streamed, stack) = stack::measure(|| flash_pass(&mut model_flash, &mut sample_flash));
    let streamed = streamed?;
    print_outcome("flash", &streamed, stack);
    hprintln!(
        "flash reads={} read_bytes={} model_bytes={}",
        model_flash.reads + sample_flash.reads,
        model_flash.bytes + sample_flash.bytes,
        model.bytes.len()
    );
    Ok(mapped == streamed)
}

/// Pass 1 in full: tables, views and inference, in this frame and below.
#[inline(never)]
fn mapped_pass() -> Result<Outcome, (File, Failure)> {
    let (model, samples) = (File::MODEL, File::SAMPLES);
    let mut model_table = Table::<SLOTS>::new();
    let parsed = measured_parse(model, &mut model_table).map_err(|e| (model, e.into()))?;
    if let Some(arch) = parsed.metadata().and_then(|m| m.get("arch")) {
        hprintln!("metadata arch=\"{}\"", arch);
    }
    let mut sample_table = Table::<SLOTS>::new();
    let parsed_samples =
        measured_parse(samples, &mut sample_table).map_err(|e| (samples, e.into()))?;
    let mut weights = Mapped::new(&parsed).map_err(|e| (model, e))?;
    let mut inputs = MappedSamples::new(&parsed_samples).map_err(|e| (samples, e))?;
    let mut line = PredictionLine::new("mapped");
    let outcome = evaluate(&mut weights, &mut inputs, |class| line.push(class));
    line.flush();
    outcome.map_err(|e| (model, e))
}

/// Pass 2 in full: header buffers, tables, reads and inference, all in this
/// frame and below (the stack it uses is all the RAM the pass needs).
#[inline(never)]
fn flash_pass(
    model_flash: &mut MemFlash,
    sample_flash: &mut MemFlash,
) -> Result<Outcome, (File, Failure)> {
    let (model, samples) = (File::MODEL, File::SAMPLES);
    let mut model_reader = FlashReader::new(model_flash, 0, model.bytes.len() as u32);
    let mut model_buf = [0u8; HEADER_BUF];
    let mut model_table = Table::<SLOTS>::new();
    let header = model_reader
        .read_header(&PARSER, &mut model_buf, &mut model_table)
        .map_err(|e| (model, e.into()))?;
    let mut sample_reader = FlashReader::new(sample_flash, 0, samples.bytes.len() as u32);
    let mut sample_buf = [0u8; 256];
    let mut sample_table = Table::<4>::new();
    let sample_header = sample_reader
        .read_header(&PARSER, &mut sample_buf, &mut sample_table)
        .map_err(|e| (samples, e.into()))?;
    let mut weights = Streamed::new(&mut model_reader, &header).map_err(|e| (model, e))?;
    let mut inputs =
        StreamedSamples::new(&mut sample_reader, &sample_header).map_err(|e| (samples, e))?;
    let mut line = PredictionLine::new("flash");
    let outcome = evaluate(&mut weights, &mut inputs, |class| line.push(class));
    line.flush();
    outcome.map_err(|e| (model, e))
}

/// Prints predictions as digits, [`PredictionLine::WIDTH`] to a line:
/// `preds pass=<pass> at=<index of the first> <digits>`.
struct PredictionLine {
    pass: &'static str,
    at: usize,
    digits: [u8; Self::WIDTH],
    len: usize,
}

impl PredictionLine {
    const WIDTH: usize = 60;

    fn new(pass: &'static str) -> Self {
        PredictionLine {
            pass,
            at: 0,
            digits: [b'0'; Self::WIDTH],
            len: 0,
        }
    }

    fn push(&mut self, class: u8) {
        if let Some(d) = self.digits.get_mut(self.len) {
            *d = b'0' + class;
            self.len += 1;
        }
        if self.len == Self::WIDTH {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.len > 0 {
            let digits = core::str::from_utf8(&self.digits[..self.len]).unwrap_or("?");
            hprintln!("preds pass={} at={} {}", self.pass, self.at, digits);
        }
        self.at += self.len;
        self.len = 0;
    }
}

fn print_outcome(pass: &str, o: &Outcome, stack: usize) {
    hprintln!(
        "pass={} total={} correct={} logits_hash={:#010x} predictions_hash={:#010x} stack={}",
        pass,
        o.total,
        o.correct,
        o.logits_hash,
        o.predictions_hash,
        stack
    );
}

/// Parses a whole embedded file, printing what it found and the stack the parse used.
fn measured_parse(
    file: File,
    table: &mut Table<SLOTS>,
) -> Result<SafeTensors<'static, &mut Table<SLOTS>>, Error> {
    let (parsed, stack) = stack::measure(|| PARSER.parse(file.bytes, table));
    match &parsed {
        Ok(st) => hprintln!(
            "parse file={} result=ok tensors={} header_len={} stack={}",
            file.name,
            st.len(),
            st.header().header_len(),
            stack
        ),
        Err(e) => hprintln!(
            "parse file={} result={} stack={}",
            file.name,
            e.kind().name(),
            stack
        ),
    }
    parsed
}

/// Reads and parses a file's header through the flash path, printing the stack it used.
#[inline(never)]
fn measured_flash_header(file: File) -> Result<(), Error> {
    let mut buf = [0u8; HEADER_BUF];
    let mut table = Table::<SLOTS>::new();
    let mut reader = FlashReader::new(MemFlash::new(file.bytes), 0, file.bytes.len() as u32);
    let (result, stack) = stack::measure(|| {
        reader
            .read_header(&PARSER, &mut buf, &mut table)
            .map(|h| h.len())
    });
    match result {
        Ok(n) => hprintln!(
            "flash_header file={} result=ok tensors={} stack={}",
            file.name,
            n,
            stack
        ),
        Err(e) => hprintln!(
            "flash_header file={} result={} stack={}",
            file.name,
            e.kind().name(),
            stack
        ),
    }
    result.map(|_| ())
}

/// Parses each file of the stress pack both ways; prints each verdict and stack.
#[inline(never)]
fn stress() {
    let mut rest: &'static [u8] = &STRESS.0;
    let mut case = 0u32;
    while let Some((len, tail)) = rest.split_first_chunk::<8>() {
        let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let Some(file) = tail.get(..len) else { break };
        let mut table = Table::<SLOTS>::new();
        let (parsed, parse_stack) =
            stack::measure(|| PARSER.parse(file, &mut table).map(|st| st.len()));
        let mut buf = [0u8; HEADER_BUF];
        let mut header_table = Table::<SLOTS>::new();
        let mut reader = FlashReader::new(MemFlash::new(file), 0, len as u32);
        let (header, header_stack) = stack::measure(|| {
            reader
                .read_header(&PARSER, &mut buf, &mut header_table)
                .map(|h| h.len())
        });
        hprintln!(
            "case={} parse={} header={} parse_stack={} header_stack={}",
            case,
            Verdict(parsed),
            Verdict(header),
            parse_stack,
            header_stack
        );
        case += 1;
        rest = tail.get(len.next_multiple_of(8)..).unwrap_or(&[]);
    }
    if case > 0 {
        hprintln!("stress cases={}", case);
    }
}

/// `ok:<tensors>` or the error kind's name.
struct Verdict(Result<usize, Error>);

impl core::fmt::Display for Verdict {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match &self.0 {
            Ok(n) => write!(f, "ok:{n}"),
            Err(e) => f.write_str(e.kind().name()),
        }
    }
}

fn report_error(file: File, e: &Error) {
    // The header bytes, to name the tensor the error is about.
    let json = file
        .bytes
        .first_chunk::<8>()
        .and_then(|n| usize::try_from(u64::from_le_bytes(*n)).ok())
        .and_then(|n| file.bytes.get(8..8 + n.min(file.bytes.len())))
        .unwrap_or(&[]);
    let tensor = e.tensor_name(json);
    hprintln!(
        "error file={} kind={} reference={} offset={} tensor=\"{}\" msg=\"{}\"",
        file.name,
        e.kind().name(),
        e.kind().reference_name().unwrap_or("-"),
        e.offset().map_or(-1, |o| o as i64),
        tensor.unwrap_or(safetensors_nano::Name::from_raw(b"-")),
        e
    );
    #[cfg(feature = "defmt")]
    defmt::error!("safetensors: {}", e);
}
