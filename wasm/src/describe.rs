//! Opening a header and describing it to JS in two flat values.
//!
//! Success, numbers: `[0, N, tensors, pairs (-1 = no metadata)]`, then per
//! tensor in data-offset order `[dtype, name_len, begin, end, elements,
//! rank, dims…]`, then per metadata pair `[key_len, value_len]`. Text: the
//! decoded names, then keys and values, concatenated; lengths count UTF-16
//! code units so JS can `slice` them out.
//!
//! Error, numbers: `[-1, offset (-1 = none), kind_len, message_len,
//! tensor_len (-1 = none)]`; text: kind, message, tensor name.
//!
//! More bytes needed, numbers: `[needed]` (always > 0).

use safetensors_nano::{Error, ErrorKind, Header, Name, Parser, Slot, Status};

/// 2^53: JS numbers are exact integers up to here.
pub const MAX_SAFE: u64 = 1 << 53;

/// Bytes of header per table slot to start with: the smallest tensor entry
/// (`"":{"dtype":"U8","shape":[],"data_offsets":[0,0]}`) is 49 bytes, so
/// only metadata-heavy headers need a second pass.
const BYTES_PER_SLOT: usize = 48;

/// Reused buffers: the slot table and the text being built.
#[derive(Default)]
pub struct State {
    slots: Vec<Slot>,
    numbers: Vec<f64>,
    /// The string half of the last result.
    pub text: String,
}

/// What [`open_prefix`] found. The description (or the error's) is in the
/// state's `numbers` and `text`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened {
    /// The header is described.
    Complete,
    /// This many bytes from the file start are needed.
    Partial(u64),
    /// An error is described.
    Failed,
}

fn to_f64(v: u64) -> f64 {
    // Callers check v ≤ 2^53 where exactness matters.
    v as f64
}

fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().map(char::len_utf16).sum()
    }
}

/// Appends a decoded name to `text`, returning its UTF-16 length.
fn push_name(text: &mut String, name: Name<'_>) -> usize {
    match name.as_str() {
        Some(s) => {
            text.push_str(s);
            utf16_len(s)
        }
        None => name.chars().fold(0usize, |n, c| {
            text.push(c);
            n.saturating_add(c.len_utf16())
        }),
    }
}

/// Describes an error: its kind name, message, header offset and tensor.
fn fail(state: &mut State, kind: &str, message: core::fmt::Arguments<'_>, offset: Option<u64>, tensor: Option<Name<'_>>) -> Opened {
    use core::fmt::Write;
    state.numbers.clear();
    state.text.clear();
    state.text.push_str(kind);
    let at = state.text.len();
    let _ = state.text.write_fmt(message);
    let message_len = utf16_len(state.text.get(at..).unwrap_or_default());
    let tensor_len = tensor.map_or(-1.0, |n| to_f64(push_name(&mut state.text, n) as u64));
    state.numbers.extend_from_slice(&[
        -1.0,
        offset.map_or(-1.0, to_f64),
        to_f64(kind.len() as u64),
        to_f64(message_len as u64),
        tensor_len,
    ]);
    Opened::Failed
}

/// Describes an error of the core; `json` is the header it came from.
fn fail_core(state: &mut State, e: Error, json: &[u8]) -> Opened {
    let kind = e.kind();
    fail(state, kind.name(), format_args!("{kind}"), e.offset(), e.tensor_name(json))
}

/// Parses the header in `prefix` (the first bytes of a file of `file_len`
/// bytes) and describes it into `state`, checking the rules in the order of
/// a whole-file parse: R1, R2, R3, then the header, then R13.
pub fn open_prefix(prefix: &[u8], file_len: u64, state: &mut State) -> Opened {
    state.numbers.clear();
    state.text.clear();
    if file_len < 8 {
        return fail_core(state, Error::new(ErrorKind::HeaderTooSmall { len: file_len }), &[]);
    }
    let parser = Parser::new();
    let needed = match parser.bytes_needed(prefix) {
        Ok(n) => n,
        Err(e) => return fail_core(state, e, &[]),
    };
    if prefix.len() >= 8 && needed > file_len {
        let e = Error::new(ErrorKind::InvalidHeaderLength {
            header_len: needed.saturating_sub(8),
            file_len,
        });
        return fail_core(state, e, &[]);
    }
    let Some(prefix) = usize::try_from(needed).ok().and_then(|n| prefix.get(..n)) else {
        return Opened::Partial(needed);
    };
    let json = prefix.get(8..).unwrap_or_default();
    let want = json.len() / BYTES_PER_SLOT + 1;
    let mut slots = core::mem::take(&mut state.slots);
    if slots.len() < want {
        slots.resize(want, Slot::EMPTY);
    }
    let opened = loop {
        match parser.parse_header(prefix, &mut slots[..]) {
            Ok(Status::Complete(header)) => {
                break match header.check_file_len(file_len) {
                    Ok(()) => describe(&header, state),
                    Err(e) => fail_core(state, e, json),
                };
            }
            Ok(Status::Partial { needed }) => break Opened::Partial(needed),
            Err(e) => match e.kind() {
                ErrorKind::CapacityExceeded { capacity, needed } if needed > capacity => {
                    match usize::try_from(needed) {
                        Ok(n) => slots.resize(n, Slot::EMPTY),
                        Err(_) => break fail_core(state, e, json),
                    }
                }
                _ => break fail_core(state, e, json),
            },
        }
    };
    state.slots = slots;
    opened
}

fn describe(header: &Header<'_, &mut [Slot]>, state: &mut State) -> Opened {
    let data_start = header.data_start();
    let pairs = header.metadata().map(|m| m.len());
    let numbers = &mut state.numbers;
    let text = &mut state.text;
    numbers.reserve(header.len().saturating_mul(8).saturating_add(4));
    numbers.extend_from_slice(&[
        0.0,
        to_f64(header.header_len()),
        to_f64(header.len() as u64),
        pairs.map_or(-1.0, |p| to_f64(p as u64)),
    ]);
    for t in header.iter() {
        let (begin, end) = t.data_offsets();
        let abs_end = data_start.saturating_add(end);
        if abs_end > MAX_SAFE {
            return fail(
                state,
                "OffsetTooLarge",
                format_args!("tensor ends at file byte {abs_end}, above 2^53 where JS numbers stop being exact"),
                None,
                Some(t.name()),
            );
        }
        let name_len = push_name(text, t.name());
        numbers.extend_from_slice(&[
            f64::from(t.dtype() as u8),
            to_f64(name_len as u64),
            to_f64(begin),
            to_f64(end),
            to_f64(t.element_count()),
            0.0,
        ]);
        let rank_at = numbers.len().saturating_sub(1);
        let mut rank = 0u64;
        for d in t.shape().iter() {
            if d > MAX_SAFE {
                return fail(
                    state,
                    "DimensionTooLarge",
                    format_args!("dimension {d} is above 2^53, where JS numbers stop being exact"),
                    None,
                    Some(t.name()),
                );
            }
            numbers.push(to_f64(d));
            rank = rank.saturating_add(1);
        }
        if let Some(r) = numbers.get_mut(rank_at) {
            *r = to_f64(rank);
        }
    }
    if let Some(meta) = header.metadata() {
        for (k, v) in meta.iter() {
            let kl = push_name(text, k);
            let vl = push_name(text, v);
            numbers.extend_from_slice(&[to_f64(kl as u64), to_f64(vl as u64)]);
        }
    }
    Opened::Complete
}

impl State {
    /// The numbers for JS, moved out of the state (the strings stay in
    /// `text` until taken).
    pub fn finish(&mut self, opened: Opened) -> Vec<f64> {
        match opened {
            Opened::Partial(needed) => {
                self.text.clear();
                vec![to_f64(needed)]
            }
            Opened::Complete | Opened::Failed => core::mem::take(&mut self.numbers),
        }
    }
}
