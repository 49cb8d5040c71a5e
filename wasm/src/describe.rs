//! Opening a header and describing it to JS in two flat values.
//!
//! Success, numbers: `[0, N, tensors, pairs (-1 = no metadata)]`, then per
//! tensor in data-offset order `[dtype, name_len, begin, end, rank, dims…]`,
//! then per metadata pair `[key_len, value_len]`. Text: the decoded names,
//! then keys and values, concatenated; lengths count UTF-16 code units so JS
//! can `slice` them out. (Element counts are `(end − begin) × 8 / bits`: the
//! core validated exactly that.)
//!
//! Error, numbers: `[-1, offset (-1 = none), kind_len, message_len,
//! tensor_len (-1 = none), tensor_index (-1 = none; writer errors)]`; text:
//! kind, message, tensor name.
//!
//! More bytes needed, numbers: `[needed]` (always > 0).

use safetensors_nano::{Error, ErrorKind, Header, Name, Parser, Slot, Status};

/// 2^53: JS numbers are exact integers up to here.
pub const MAX_SAFE: u64 = 1 << 53;

/// Bytes of header per table slot to start with: the smallest tensor entry
/// (`"":{"dtype":"U8","shape":[],"data_offsets":[0,0]}`) is 49 bytes, so
/// only metadata-heavy headers need a second pass.
const BYTES_PER_SLOT: usize = 48;

/// Reused buffers: the slot table, the decode scratch, and the result being built.
#[derive(Default)]
pub struct State {
    slots: Vec<Slot>,
    /// Decoded values of the last chunk.
    pub floats: Vec<f32>,
    /// The numbers half of the last result.
    pub numbers: Vec<f64>,
    /// The string half of the last result.
    pub text: String,
    /// Names being gathered (UTF-8) before they become `text`.
    names: Vec<u8>,
    /// Header bytes of the last write plan.
    pub bytes: Vec<u8>,
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

/// UTF-16 code units of valid UTF-8: one per leading byte, two for a
/// four-byte sequence.
fn utf16_units(bytes: &[u8]) -> usize {
    if bytes.is_ascii() {
        return bytes.len();
    }
    let leading = bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count();
    let astral = bytes.iter().filter(|&&b| b >= 0xF0).count();
    leading.saturating_add(astral)
}

/// Appends a decoded name's UTF-8 to `out`, returning its UTF-16 length.
/// Unescaped names are copied as they are: the header is valid UTF-8 and a
/// string's content ends at a quote, on a character boundary.
fn push_raw_name(out: &mut Vec<u8>, name: Name<'_>) -> usize {
    if !name.has_escapes() {
        out.extend_from_slice(name.raw());
        return utf16_units(name.raw());
    }
    let mut buf = [0u8; 4];
    name.chars().fold(0usize, |n, c| {
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        n.saturating_add(c.len_utf16())
    })
}

/// Describes an error: its kind name, message, header offset and tensor.
pub fn fail(
    state: &mut State,
    kind: &str,
    message: core::fmt::Arguments<'_>,
    offset: Option<u64>,
    tensor: Option<Name<'_>>,
) -> Opened {
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
        -1.0,
    ]);
    Opened::Failed
}

/// Describes an error of the core; `json` is the header it came from.
pub fn fail_core(state: &mut State, e: Error, json: &[u8]) -> Opened {
    let kind = e.kind();
    fail(
        state,
        kind.name(),
        format_args!("{kind}"),
        e.offset(),
        e.tensor_name(json),
    )
}

/// Parses the header in `prefix` (the first bytes of a file of `file_len`
/// bytes) and describes it into `state`, checking the rules in the order of
/// a whole-file parse: R1, R2, R3, then the header, then R13.
pub fn open_prefix(prefix: &[u8], file_len: u64, state: &mut State) -> Opened {
    state.numbers.clear();
    state.text.clear();
    if file_len < 8 {
        return fail_core(
            state,
            Error::new(ErrorKind::HeaderTooSmall { len: file_len }),
            &[],
        );
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
    let want = (json.len() / BYTES_PER_SLOT).saturating_add(1);
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
    let mut names = core::mem::take(&mut state.names);
    names.clear();
    let numbers = &mut state.numbers;
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
        let name_len = push_raw_name(&mut names, t.name());
        numbers.extend_from_slice(&[
            f64::from(t.dtype() as u8),
            to_f64(name_len as u64),
            to_f64(begin),
            to_f64(end),
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
            let kl = push_raw_name(&mut names, k);
            let vl = push_raw_name(&mut names, v);
            numbers.extend_from_slice(&[to_f64(kl as u64), to_f64(vl as u64)]);
        }
    }
    match String::from_utf8(names) {
        Ok(text) => {
            state.text = text;
            Opened::Complete
        }
        // Unreachable: the core validated the header as UTF-8.
        Err(e) => {
            state.names = e.into_bytes();
            fail(
                state,
                "InvalidUtf8",
                format_args!("names are not valid UTF-8"),
                None,
                None,
            )
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: usize) -> Vec<u8> {
        let mut f = (header.len() as u64).to_le_bytes().to_vec();
        f.extend_from_slice(header.as_bytes());
        f.resize(f.len() + data, 0);
        f
    }

    fn open(prefix: &[u8], len: u64) -> (Opened, Vec<f64>, String) {
        let mut state = State::default();
        let opened = open_prefix(prefix, len, &mut state);
        let numbers = state.finish(opened);
        (opened, numbers, state.text)
    }

    #[test]
    fn describes_tensors_in_offset_order_with_utf16_lengths() {
        let h = r#"{"__metadata__":{"k":"v\u00e9"},"b\ud83d\ude00":{"dtype":"F32","shape":[2,1],"data_offsets":[2,10]},"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#;
        let f = file(h, 10);
        let (opened, n, text) = open(&f, f.len() as u64);
        assert_eq!(opened, Opened::Complete);
        let hl = h.len() as f64;
        assert_eq!(
            n,
            [
                0.0, hl, 2.0, 1.0, 4.0, 1.0, 0.0, 2.0, 1.0, 2.0, 17.0, 3.0, 2.0, 10.0, 2.0, 2.0,
                1.0, 1.0, 2.0
            ]
        );
        assert_eq!(text, "ab\u{1F600}kv\u{e9}");
    }

    #[test]
    fn asks_for_more_bytes_then_checks_the_length_like_a_whole_parse() {
        let f = file(
            r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#,
            1,
        );
        let len = f.len() as u64;
        assert_eq!(open(&f[..3], len).0, Opened::Partial(8));
        assert_eq!(open(&f[..8], len).0, Opened::Partial(len - 1));
        assert_eq!(open(&f[..20], len).0, Opened::Partial(len - 1));
        let (opened, n, text) = open(&f[..8], 20);
        assert_eq!(opened, Opened::Failed);
        assert!(text.starts_with("InvalidHeaderLength"));
        assert_eq!(n[0], -1.0);
        let (_, _, text) = open(&f, len + 1);
        assert!(text.starts_with("MetadataIncompleteBuffer"));
        let (_, _, text) = open(&f[..2], 2);
        assert!(text.starts_with("HeaderTooSmall"));
    }

    #[test]
    fn errors_name_the_tensor_and_offset() {
        let h = r#"{"x\n":{"dtype":"F33","shape":[],"data_offsets":[0,4]}}"#;
        let f = file(h, 4);
        let (opened, n, text) = open(&f, f.len() as u64);
        assert_eq!(opened, Opened::Failed);
        let (kind, rest) = text.split_at(n[2] as usize);
        assert_eq!(kind, "UnknownDtype");
        assert_eq!(n[1], 16.0);
        assert_eq!(&rest[n[3] as usize..], "x\n");
    }

    #[test]
    fn offsets_above_2_53_are_refused() {
        let end = MAX_SAFE;
        let h = format!(r#"{{"t":{{"dtype":"U8","shape":[{end}],"data_offsets":[0,{end}]}}}}"#);
        let f = file(&h, 0);
        let (opened, _, text) = open(&f, f.len() as u64 + end);
        assert_eq!(opened, Opened::Failed);
        assert!(text.starts_with("OffsetTooLarge"));
        assert!(text.ends_with('t'));
    }

    #[test]
    fn the_table_grows_for_metadata_heavy_headers() {
        let pairs: Vec<String> = (0..500).map(|i| format!(r#""k{i}":"v""#)).collect();
        let h = format!(r#"{{"__metadata__":{{{}}}}}"#, pairs.join(","));
        let f = file(&h, 0);
        let (opened, n, _) = open(&f, f.len() as u64);
        assert_eq!(opened, Opened::Complete);
        assert_eq!(n[3], 500.0);
    }

    #[test]
    fn utf16_units_of_utf8() {
        assert_eq!(utf16_units("a\u{e9}\u{4e2d}\u{1F600}".as_bytes()), 5);
    }
}
