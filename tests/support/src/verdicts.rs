//! The adversarial suite's runner, shared by every target that runs it:
//! natively (`core/tests/adversarial.rs`), as wasm32 in Node
//! (`core/tests/wasm_verdicts.rs`), and on a Cortex-M4F (the firmware's
//! `verdicts` binary).
//!
//! It uses `core` only and allocates nothing, so it runs unchanged in a
//! `no_std` firmware.
//!
//! The suite is data: `tests/adversarial/cases.json` (the source, with the
//! reasons) is compiled into two files that any platform can read:
//!
//! * `tests/adversarial/cases.bin` — all inputs, little-endian:
//!   ```text
//!   magic   8 bytes  "STNADV\0\x01"
//!   count   u32
//!   count × {
//!     mode   u8   0 = Parser::parse (whole file), 1 = Parser::parse_header (prefix)
//!     pad    u8   0
//!     slots  u16  table capacity to parse into (at most MAX_SLOTS)
//!     limit  u64  header limit for Parser::header_limit, 0 = the default
//!     name   u32 length + UTF-8 bytes ([a-z0-9_]+)
//!     input  u32 length + bytes
//!   }
//!   ```
//! * `tests/adversarial/verdicts.txt` — one line per case, same order:
//!   `<name> <verdict>`, where `<verdict>` is one of
//!   `ok tensors=<n> meta=<pairs or -> data_len=<bytes>`,
//!   `err <ErrorKind::name()> at=<header byte offset or ->`,
//!   `partial needed=<bytes>`.

use core::fmt::{self, Write};

use safetensors_nano::{Error, Parser, SafeTensors, Slot, Status};

/// First bytes of `cases.bin`.
pub const MAGIC: &[u8; 8] = b"STNADV\x00\x01";

/// Largest table a case may ask for (a firmware can hold this many slots).
pub const MAX_SLOTS: usize = 64;

/// Which entry point a case goes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `Parser::parse` on the whole input.
    File,
    /// `Parser::parse_header` on the input as a prefix of a file.
    Header,
}

/// One case of the suite.
#[derive(Clone, Copy, Debug)]
pub struct Case<'a> {
    /// Its name in `cases.json` and `verdicts.txt`.
    pub name: &'a str,
    /// Which entry point.
    pub mode: Mode,
    /// Table capacity.
    pub slots: u16,
    /// Header limit, 0 = default.
    pub limit: u64,
    /// The bytes.
    pub input: &'a [u8],
}

/// The cases in a `cases.bin`.
pub struct Cases<'a> {
    rest: &'a [u8],
    left: u32,
}

/// Reads the header of `cases.bin`; `None` if it is not one.
pub fn cases(bin: &[u8]) -> Option<Cases<'_>> {
    let rest = bin.strip_prefix(MAGIC.as_slice())?;
    let (count, rest) = rest.split_first_chunk::<4>()?;
    Some(Cases {
        rest,
        left: u32::from_le_bytes(*count),
    })
}

impl Cases<'_> {
    /// Cases not yet read.
    pub fn remaining(&self) -> u32 {
        self.left
    }

    /// Whether everything was read and nothing is left over.
    pub fn is_finished(&self) -> bool {
        self.left == 0 && self.rest.is_empty()
    }
}

fn take<'a>(rest: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if rest.len() < n {
        return None;
    }
    let (head, tail) = rest.split_at(n);
    *rest = tail;
    Some(head)
}

fn take_u32(rest: &mut &[u8]) -> Option<u32> {
    let b = take(rest, 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

impl<'a> Iterator for Cases<'a> {
    type Item = Case<'a>;

    /// The next case; `None` at the end, or if the file is malformed
    /// (check [`Cases::is_finished`] afterwards).
    fn next(&mut self) -> Option<Case<'a>> {
        if self.left == 0 {
            return None;
        }
        let mut rest = self.rest;
        let head = take(&mut rest, 12)?;
        let mode = match head[0] {
            0 => Mode::File,
            1 => Mode::Header,
            _ => return None,
        };
        let slots = u16::from_le_bytes([head[2], head[3]]);
        let mut limit = [0u8; 8];
        limit.copy_from_slice(&head[4..12]);
        let name_len = take_u32(&mut rest)? as usize;
        let name = core::str::from_utf8(take(&mut rest, name_len)?).ok()?;
        let input_len = take_u32(&mut rest)? as usize;
        let input = take(&mut rest, input_len)?;
        self.rest = rest;
        self.left -= 1;
        Some(Case {
            name,
            mode,
            slots,
            limit: u64::from_le_bytes(limit),
            input,
        })
    }
}

/// What a case gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Accepted.
    Ok {
        /// Tensors.
        tensors: usize,
        /// Metadata pairs, `None` without `__metadata__` (or with `null`).
        meta: Option<usize>,
        /// Byte buffer length the header describes.
        data_len: u64,
    },
    /// Rejected.
    Err {
        /// `ErrorKind::name()`.
        kind: &'static str,
        /// Header byte offset.
        at: Option<u64>,
    },
    /// Header mode only: the prefix is too short.
    Partial {
        /// Bytes needed from the start of the file.
        needed: u64,
    },
}

impl Verdict {
    fn error(e: Error) -> Verdict {
        Verdict::Err {
            kind: e.kind().name(),
            at: e.offset(),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Verdict::Ok {
                tensors,
                meta,
                data_len,
            } => {
                write!(f, "ok tensors={tensors} meta=")?;
                match meta {
                    Some(m) => write!(f, "{m}")?,
                    None => f.write_char('-')?,
                }
                write!(f, " data_len={data_len}")
            }
            Verdict::Err { kind, at } => {
                write!(f, "err {kind} at=")?;
                match at {
                    Some(o) => write!(f, "{o}"),
                    None => f.write_char('-'),
                }
            }
            Verdict::Partial { needed } => write!(f, "partial needed={needed}"),
        }
    }
}

/// Runs one case with `scratch` as the table (its first `case.slots` slots;
/// `scratch` must hold at least [`MAX_SLOTS`]).
// `#[inline]` here and on `matches`: inlined into the caller as when this
// runner was a module of each test, so the firmware's `verdicts` binary
// measures the stack it did (992 bytes; 1,080 without).
#[inline]
pub fn run(case: &Case<'_>, scratch: &mut [Slot]) -> Verdict {
    let slots = scratch.len().min(usize::from(case.slots));
    let table = &mut scratch[..slots];
    let parser = if case.limit == 0 {
        Parser::new()
    } else {
        Parser::new().header_limit(case.limit)
    };
    match case.mode {
        Mode::File => match parser.parse(case.input, table) {
            Ok(st) => ok(&st),
            Err(e) => Verdict::error(e),
        },
        Mode::Header => match parser.parse_header(case.input, table) {
            Ok(Status::Complete(h)) => Verdict::Ok {
                tensors: h.len(),
                meta: h.metadata().map(|m| m.len()),
                data_len: h.data_len(),
            },
            Ok(Status::Partial { needed }) => Verdict::Partial { needed },
            Err(e) => Verdict::error(e),
        },
    }
}

fn ok(st: &SafeTensors<'_, &mut [Slot]>) -> Verdict {
    Verdict::Ok {
        tensors: st.len(),
        meta: st.metadata().map(|m| m.len()),
        data_len: st.header().data_len(),
    }
}

/// A `fmt::Write` that compares what is written with an expected text,
/// so a verdict can be checked without formatting it into a buffer.
struct Compare<'e> {
    expected: &'e [u8],
    same: bool,
}

impl Write for Compare<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        match self.expected.strip_prefix(s.as_bytes()) {
            Some(rest) if self.same => self.expected = rest,
            _ => self.same = false,
        }
        Ok(())
    }
}

/// Whether `line` (from `verdicts.txt`) is exactly `<case.name> <verdict>`.
#[inline]
pub fn matches(case: &Case<'_>, verdict: &Verdict, line: &str) -> bool {
    let mut cmp = Compare {
        expected: line.as_bytes(),
        same: true,
    };
    let _ = write!(cmp, "{} {}", case.name, verdict);
    cmp.same && cmp.expected.is_empty()
}

/// Runs every case of `bin` against the lines of `verdicts`, calling
/// `report(case, verdict, expected_line, matched)` for each. Returns
/// (cases run, mismatches), or `None` if the files are malformed or do not
/// have the same number of entries.
pub fn run_all(
    bin: &[u8],
    verdicts: &str,
    scratch: &mut [Slot],
    mut report: impl FnMut(&Case<'_>, &Verdict, &str, bool),
) -> Option<(u32, u32)> {
    let mut cases = cases(bin)?;
    let mut lines = verdicts.lines().filter(|l| !l.is_empty());
    let (mut run_count, mut mismatches) = (0u32, 0u32);
    for case in cases.by_ref() {
        let line = lines.next()?;
        let verdict = run(&case, scratch);
        let same = matches(&case, &verdict, line);
        report(&case, &verdict, line, same);
        run_count += 1;
        if !same {
            mismatches += 1;
        }
    }
    if !cases.is_finished() || lines.next().is_some() {
        return None;
    }
    Some((run_count, mismatches))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cases.bin` bytes holding one whole-file case.
    fn one_case(name: &str, input: &[u8]) -> ([u8; 64], usize) {
        let mut bin = [0u8; 64];
        let mut at = 0;
        let mut put = |bytes: &[u8]| {
            bin[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        put(MAGIC);
        put(&1u32.to_le_bytes());
        put(&[0, 0]);
        put(&4u16.to_le_bytes());
        put(&0u64.to_le_bytes());
        put(&(name.len() as u32).to_le_bytes());
        put(name.as_bytes());
        put(&(input.len() as u32).to_le_bytes());
        put(input);
        (bin, at)
    }

    #[test]
    fn reads_runs_and_matches_a_case() {
        let (bin, len) = one_case("short", b"\x01\x02");
        let mut scratch = [Slot::EMPTY; MAX_SLOTS];
        let mut seen = 0;
        let result = run_all(
            &bin[..len],
            "short err HeaderTooSmall at=-\n",
            &mut scratch,
            |case, verdict, line, same| {
                assert_eq!((case.name, case.mode, case.slots), ("short", Mode::File, 4));
                assert_eq!(
                    *verdict,
                    Verdict::Err {
                        kind: "HeaderTooSmall",
                        at: None
                    }
                );
                assert_eq!(line, "short err HeaderTooSmall at=-");
                assert!(same);
                seen += 1;
            },
        );
        assert_eq!(result, Some((1, 0)));
        assert_eq!(seen, 1);
    }

    #[test]
    fn a_different_line_is_a_mismatch() {
        let (bin, len) = one_case("short", b"\x01\x02");
        let mut scratch = [Slot::EMPTY; MAX_SLOTS];
        for line in [
            "short err HeaderTooSmall at=0",
            "short err HeaderTooSmall",
            "x",
        ] {
            let result = run_all(&bin[..len], line, &mut scratch, |_, _, _, _| {});
            assert_eq!(result, Some((1, 1)), "{line}");
        }
    }

    #[test]
    fn malformed_or_unequal_files_are_none() {
        let (bin, len) = one_case("short", b"\x01\x02");
        let mut scratch = [Slot::EMPTY; MAX_SLOTS];
        let line = "short err HeaderTooSmall at=-";
        let mut run = |bin: &[u8], lines: &str| run_all(bin, lines, &mut scratch, |_, _, _, _| {});
        assert_eq!(run(&bin[..len - 1], line), None, "truncated");
        assert_eq!(run(&bin[..len + 1], line), None, "trailing byte");
        assert_eq!(run(&bin[1..len], line), None, "no magic");
        assert_eq!(run(&bin[..len], ""), None, "fewer lines");
        assert_eq!(run(&bin[..len], "a\nb"), None, "more lines");
    }

    #[test]
    fn verdict_lines() {
        let case = Case {
            name: "c",
            mode: Mode::Header,
            slots: 1,
            limit: 0,
            input: &[],
        };
        for (verdict, line) in [
            (
                Verdict::Ok {
                    tensors: 2,
                    meta: None,
                    data_len: 1 << 40,
                },
                "c ok tensors=2 meta=- data_len=1099511627776",
            ),
            (
                Verdict::Ok {
                    tensors: 0,
                    meta: Some(3),
                    data_len: 0,
                },
                "c ok tensors=0 meta=3 data_len=0",
            ),
            (
                Verdict::Err {
                    kind: "InvalidOffset",
                    at: Some(17),
                },
                "c err InvalidOffset at=17",
            ),
            (Verdict::Partial { needed: 8 }, "c partial needed=8"),
        ] {
            assert!(matches(&case, &verdict, line), "{line}");
            assert!(!matches(&case, &verdict, &line[..line.len() - 1]), "{line}");
        }
    }
}
