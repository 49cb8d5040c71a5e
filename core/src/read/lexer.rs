//! A strict RFC 8259 lexer over the header bytes. It owns the position: the
//! header grammar only calls it, and every error it makes carries the byte
//! offset where it was found. What a string's or a number's bytes say is
//! worked out in [`string`](super::string) and [`number`](super::number).
//!
//! Nothing here recurses: skipping a value of any nesting uses a 128-bit
//! stack of container kinds, so stack use is constant for any input.

use super::hash::{self, NameHasher};
use super::number::{self, leading_digits};
use super::string::{care_mask, needs_care};
use super::utf8;
use crate::error::{Error, ErrorKind, Expected, TensorRef};
use crate::mode::{self, Plain};
use crate::view::name::Name;

/// Most arrays and objects open at once, counting the header object itself
/// (the reference's serde_json recursion limit of 128, which fails when the
/// 128th container opens).
pub(crate) const MAX_DEPTH: u32 = 127;

/// A string's raw content, between the quotes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawString {
    /// Offset of the first content byte (after the opening quote).
    pub start: usize,
    /// Offset of the closing quote.
    pub end: usize,
    /// Whether the content holds a backslash escape.
    pub escaped: bool,
}

/// Lexing or parsing stopped at an error, which the lexer holds
/// ([`Lexer::finish`]). Only [`Lexer::fail_at`] makes one, so a `Stopped`
/// always means the error was recorded. Results carry this zero-sized marker
/// instead of the 48-byte [`Error`]: no error is copied from frame to frame,
/// which keeps code and stack small on microcontrollers.
#[derive(Debug)]
pub(crate) struct Stopped(());

/// A lexer or grammar result; on `Err`, the lexer holds the error.
pub(crate) type Step<T> = Result<T, Stopped>;

pub(crate) struct Lexer<'h> {
    bytes: &'h [u8],
    pos: usize,
    /// No string so far held an escape or a non-ASCII byte (nothing else
    /// may): the text read so far is plain ASCII, its bytes its characters.
    plain: Plain,
    /// The error that stopped parsing (set by [`Lexer::fail_at`]).
    error: Error,
}

#[inline]
const fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl<'h> Lexer<'h> {
    pub(crate) const fn new(bytes: &'h [u8]) -> Self {
        Lexer {
            bytes,
            pos: 0,
            plain: Plain::new(),
            // Never read before `fail_at` overwrites it (see `Stopped`).
            error: Error::new(ErrorKind::InvalidUtf8),
        }
    }

    /// Records `kind` at header byte `offset` as the error that stops parsing.
    #[cold]
    pub(crate) fn fail_at(&mut self, kind: ErrorKind, offset: usize) -> Stopped {
        self.error = Error::at(kind, offset);
        Stopped(())
    }

    /// Tags the recorded error with the tensor it belongs to.
    #[cold]
    pub(crate) fn tag_tensor(&mut self, tensor: TensorRef) -> Stopped {
        self.error = self.error.with_tensor(tensor);
        Stopped(())
    }

    /// The result of a step with its error, if it stopped, taken out.
    pub(crate) fn finish<T>(&self, step: Step<T>) -> Result<T, Error> {
        step.map_err(|Stopped(())| self.error)
    }

    #[inline]
    pub(crate) const fn pos(&self) -> usize {
        self.pos
    }

    /// Whether every string read so far was plain ASCII without escapes.
    #[inline]
    pub(crate) const fn plain(&self) -> Plain {
        self.plain
    }

    #[inline]
    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// Records `kind` at the cursor as the error that stops parsing.
    #[inline]
    pub(crate) fn fail(&mut self, kind: ErrorKind) -> Stopped {
        self.fail_at(kind, self.pos)
    }

    /// Stops at the byte under the cursor not being what `expected` wants.
    pub(crate) fn unexpected(&mut self, expected: Expected) -> Stopped {
        match self.peek() {
            Some(found) => self.fail(ErrorKind::UnexpectedByte { found, expected }),
            None => self.fail(ErrorKind::UnexpectedEnd { expected }),
        }
    }

    #[inline]
    pub(crate) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Moves past one byte; only called after `peek` returned `Some`, so
    /// `pos < len ≤ isize::MAX` and the add cannot wrap (a saturating add
    /// costs two more instructions at each of its many inlined uses).
    #[inline]
    fn bump(&mut self) {
        self.pos = self.pos.wrapping_add(1);
    }

    #[inline]
    pub(crate) fn skip_ws(&mut self) {
        while let Some(b) = self.peek() {
            if !is_ws(b) {
                break;
            }
            self.bump();
        }
    }

    /// Skips whitespace, then consumes `byte` or fails wanting `expected`.
    #[inline]
    pub(crate) fn expect(&mut self, byte: u8, expected: Expected) -> Step<()> {
        self.skip_ws();
        if self.peek() == Some(byte) {
            self.bump();
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// Skips whitespace; consumes `byte` and returns true if it is next.
    #[inline]
    pub(crate) fn eat(&mut self, byte: u8) -> bool {
        self.skip_ws();
        if self.peek() == Some(byte) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// Skips whitespace and reads a string, validating its escapes.
    pub(crate) fn string(&mut self) -> Step<RawString> {
        self.skip_ws();
        if self.peek() != Some(b'"') {
            return Err(self.unexpected(Expected::String));
        }
        self.bump();
        let start = self.pos;
        let mut escaped = false;
        loop {
            self.skip_plain_string_bytes();
            match self.peek() {
                Some(b'"') => {
                    let end = self.pos;
                    self.bump();
                    return Ok(RawString {
                        start,
                        end,
                        escaped,
                    });
                }
                Some(b'\\') => {
                    escaped = true;
                    self.plain.clear();
                    self.escape()?;
                }
                Some(0x80..=0xff) => {
                    self.plain.clear();
                    self.non_ascii()?;
                }
                Some(_) => return Err(self.fail(ErrorKind::ControlCharacterInString)),
                None => {
                    return Err(self.fail(ErrorKind::UnexpectedEnd {
                        expected: Expected::String,
                    }))
                }
            }
        }
    }

    /// Skips whitespace and reads a string that is a key, with the hash of
    /// its decoded text ([`NameHasher`]). Plain keys are hashed while they
    /// are scanned; others are read by [`Lexer::string`] and hashed after.
    #[cfg_attr(not(small), inline(always))]
    pub(crate) fn key(&mut self) -> Step<(RawString, u32)> {
        self.skip_ws();
        let start = self.pos.saturating_add(1);
        // Small builds take the general way below: smaller code.
        if self.peek() == Some(b'"') && mode::SHORTCUTS {
            let mut hasher = NameHasher::new();
            let mut rest = self.bytes.get(start..).unwrap_or_default();
            while let Some((word, next)) = rest.split_first_chunk::<8>() {
                let word = u64::from_le_bytes(*word);
                let mask = care_mask(word);
                if mask == 0 {
                    hasher.mix(word);
                    rest = next;
                    continue;
                }
                let within = mask.trailing_zeros() / 8;
                let end = self
                    .bytes
                    .len()
                    .saturating_sub(rest.len())
                    .saturating_add(within as usize);
                if self.bytes.get(end) != Some(&b'"') {
                    break;
                }
                let tail = word & (1u64 << (within.wrapping_mul(8) & 63)).wrapping_sub(1);
                self.pos = end.saturating_add(1);
                let key = RawString {
                    start,
                    end,
                    escaped: false,
                };
                return Ok((key, hasher.finish_with(tail, within)));
            }
        }
        let key = self.string()?;
        let raw = self.bytes.get(key.start..key.end).unwrap_or_default();
        let hash = if key.escaped {
            hash::hash_name(Name::from_raw(raw))
        } else {
            hash::hash_bytes(raw)
        };
        Ok((key, hash))
    }

    /// At a byte above 0x7f inside a string: checks the run of non-ASCII
    /// bytes from here is valid UTF-8 and moves past it. (Nothing else in a
    /// header may be non-ASCII, so a header that parses is valid UTF-8.)
    fn non_ascii(&mut self) -> Step<()> {
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        let run = rest.iter().position(u8::is_ascii).unwrap_or(rest.len());
        match utf8::invalid_at(rest.get(..run).unwrap_or_default()) {
            None => {
                self.pos = self.pos.saturating_add(run);
                Ok(())
            }
            Some(valid) => {
                Err(self.fail_at(ErrorKind::InvalidUtf8, self.pos.saturating_add(valid)))
            }
        }
    }

    /// Advances over bytes that need no attention inside a string, eight at
    /// a time where possible.
    #[inline]
    fn skip_plain_string_bytes(&mut self) {
        if !mode::WORDWISE {
            while self.peek().is_some_and(|b| !needs_care(b)) {
                self.bump();
            }
            return;
        }
        let mut rest = self.bytes.get(self.pos..).unwrap_or_default();
        let within = loop {
            match rest.split_first_chunk::<8>() {
                Some((word, next)) => {
                    let mask = care_mask(u64::from_le_bytes(*word));
                    if mask != 0 {
                        break (mask.trailing_zeros() / 8) as usize;
                    }
                    rest = next;
                }
                None => {
                    break rest
                        .iter()
                        .position(|&b| needs_care(b))
                        .unwrap_or(rest.len())
                }
            }
        };
        // `rest` is a suffix of the header: it starts at len − rest.len().
        self.pos = self
            .bytes
            .len()
            .saturating_sub(rest.len())
            .saturating_add(within);
    }

    /// If the next bytes (after whitespace) are exactly `lit` — a quoted key
    /// without escapes, e.g. `"dtype"` — consumes them and returns true.
    #[inline]
    pub(crate) fn eat_literal<const L: usize>(&mut self, lit: &[u8; L]) -> bool {
        self.skip_ws();
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        if rest.first_chunk::<L>() == Some(lit) {
            self.pos = self.pos.saturating_add(L);
            true
        } else {
            false
        }
    }

    /// Moves past `n` bytes the caller has already checked.
    #[inline]
    pub(crate) fn advance(&mut self, n: usize) {
        self.pos = self.pos.saturating_add(n).min(self.bytes.len());
    }

    /// At a backslash: validates one escape (a surrogate pair counts as one).
    fn escape(&mut self) -> Step<()> {
        let at = self.pos;
        self.bump();
        let Some(kind) = self.peek() else {
            return Err(self.fail(ErrorKind::UnexpectedEnd {
                expected: Expected::String,
            }));
        };
        self.bump();
        match kind {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Ok(()),
            b'u' => {
                let unit = self.hex4()?;
                if (0xDC00..0xE000).contains(&unit) {
                    return Err(self.fail_at(ErrorKind::LoneSurrogate, at));
                }
                if (0xD800..0xDC00).contains(&unit) {
                    let rest = self.bytes.get(self.pos..).unwrap_or_default();
                    if !rest.starts_with(br"\u") {
                        return Err(self.fail_at(ErrorKind::LoneSurrogate, at));
                    }
                    self.pos = self.pos.saturating_add(2);
                    let low = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return Err(self.fail_at(ErrorKind::LoneSurrogate, at));
                    }
                }
                Ok(())
            }
            _ => Err(self.fail_at(ErrorKind::InvalidEscape, at)),
        }
    }

    fn hex4(&mut self) -> Step<u32> {
        let mut value = 0u32;
        for _ in 0..4 {
            let Some(digit) = self.peek().and_then(|b| char::from(b).to_digit(16)) else {
                return Err(match self.peek() {
                    Some(_) => self.fail(ErrorKind::InvalidEscape),
                    None => self.fail(ErrorKind::UnexpectedEnd {
                        expected: Expected::String,
                    }),
                });
            };
            value = (value << 4) | digit;
            self.bump();
        }
        Ok(value)
    }

    /// Skips whitespace and reads a non-negative integer written the strict
    /// way: digits only, no sign, fraction or exponent, no leading zero.
    #[inline]
    pub(crate) fn uint(&mut self) -> Step<u64> {
        self.skip_ws();
        let start = self.pos;
        let digits_at = self.bytes.get(start..).unwrap_or_default();
        let (value, digits) = leading_digits(digits_at);
        // Up to 19 digits always fit; 20 fit up to u64::MAX, which compares
        // as text (same length), and then the wrapping value is exact.
        let overflow = match digits_at.get(..digits) {
            Some(text) if digits == 20 => text > b"18446744073709551615".as_slice(),
            _ => digits > 20,
        };
        self.pos = start.saturating_add(digits);
        if digits == 0 {
            return Err(self.unexpected(Expected::Integer));
        }
        if digits > 1 && self.bytes.get(start) == Some(&b'0') {
            return Err(self.fail_at(ErrorKind::InvalidNumber, start));
        }
        if let Some(found @ (b'.' | b'e' | b'E')) = self.peek() {
            // A fraction or exponent: valid JSON (when well formed), but not an integer.
            let at = self.pos;
            self.pos = start;
            self.number()?;
            return Err(self.fail_at(
                ErrorKind::UnexpectedByte {
                    found,
                    expected: Expected::Integer,
                },
                at,
            ));
        }
        if overflow {
            return Err(self.fail_at(ErrorKind::IntegerTooLarge, start));
        }
        Ok(value)
    }

    /// Skips one number, checking the JSON grammar and that it is finite
    /// the way serde_json reads it: integers that fit 64 bits stay exact,
    /// anything else is parsed as an f64 and fails when that overflows to
    /// infinity. Decided exactly from the decimal digits (no float parsing:
    /// that would cost kilobytes of code and stack on a microcontroller).
    fn number(&mut self) -> Step<()> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.bump();
        }
        let int_start = self.pos;
        let int_digits = self.digits();
        if int_digits == 0 {
            return Err(self.unexpected(Expected::Digit));
        }
        if int_digits > 1 && self.bytes.get(int_start) == Some(&b'0') {
            return Err(self.fail_at(ErrorKind::InvalidNumber, start));
        }
        let mut is_float = false;
        if self.peek() == Some(b'.') {
            self.bump();
            is_float = true;
            if self.digits() == 0 {
                return Err(self.unexpected(Expected::Digit));
            }
        }
        let mantissa = self.bytes.get(int_start..self.pos).unwrap_or_default();
        let mut exp = 0i32;
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.bump();
            is_float = true;
            let negative = self.peek() == Some(b'-');
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.bump();
            }
            let exp_start = self.pos;
            if self.digits() == 0 {
                return Err(self.unexpected(Expected::Digit));
            }
            for &d in self.bytes.get(exp_start..self.pos).unwrap_or_default() {
                exp = exp
                    .saturating_mul(10)
                    .saturating_add(i32::from(d.wrapping_sub(b'0')));
            }
            if negative {
                exp = exp.saturating_neg();
            }
        }
        if !is_float && int_digits <= 18 {
            return Ok(());
        }
        if number::finite(mantissa, int_digits, exp) {
            Ok(())
        } else {
            Err(self.fail_at(ErrorKind::InvalidNumber, start))
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.bump();
        }
        self.pos.saturating_sub(start)
    }

    fn literal(&mut self, word: &'static [u8]) -> Step<()> {
        for &expected in word {
            if self.peek() != Some(expected) {
                return Err(self.unexpected(Expected::Value));
            }
            self.bump();
        }
        Ok(())
    }

    /// Skips whitespace and `null`, returning whether it was there.
    pub(crate) fn eat_null(&mut self) -> Step<bool> {
        self.skip_ws();
        if self.peek() == Some(b'n') {
            self.literal(b"null")?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Skips one value of any kind. `depth` is the number of containers
    /// already open around it. Iterative: a 128-bit stack records whether each
    /// open container is an object (1) or an array (0).
    pub(crate) fn skip_value(&mut self, depth: u32) -> Step<()> {
        let mut kinds: u128 = 0;
        let mut open: u32 = 0;
        // Whether an object key and its ':' come before the next value.
        let mut key = false;
        loop {
            if key {
                self.string()?;
                self.expect(b':', Expected::Colon)?;
            }
            // A value is expected here.
            self.skip_ws();
            match self.peek() {
                Some(b @ (b'{' | b'[')) => {
                    if depth.saturating_add(open) >= MAX_DEPTH {
                        return Err(self.fail(ErrorKind::NestingTooDeep));
                    }
                    self.bump();
                    key = b == b'{';
                    // `]` and `}` are `[` and `{` plus 2.
                    if !self.eat(b.wrapping_add(2)) {
                        kinds = (kinds << 1) | u128::from(key);
                        open = open.saturating_add(1);
                        continue;
                    }
                }
                Some(b'"') => {
                    self.string()?;
                }
                Some(b @ (b't' | b'f' | b'n')) => self.literal(match b {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                })?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                _ => return Err(self.unexpected(Expected::Value)),
            }
            // After a value: close containers or move to the next element.
            loop {
                if open == 0 {
                    return Ok(());
                }
                key = kinds & 1 == 1;
                self.skip_ws();
                match (self.peek(), key) {
                    (Some(b','), _) => {
                        self.bump();
                        break;
                    }
                    (Some(b'}'), true) | (Some(b']'), false) => {
                        self.bump();
                        kinds >>= 1;
                        open = open.saturating_sub(1);
                    }
                    (_, true) => return Err(self.unexpected(Expected::CommaOrObjectEnd)),
                    (_, false) => return Err(self.unexpected(Expected::CommaOrArrayEnd)),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;

    fn skip(text: &str) -> Result<usize, Error> {
        let mut lexer = Lexer::new(text.as_bytes());
        let step = lexer.skip_value(0).and_then(|()| {
            lexer.skip_ws();
            if lexer.at_end() {
                Ok(lexer.pos())
            } else {
                Err(lexer.unexpected(Expected::End))
            }
        });
        lexer.finish(step)
    }

    /// Runs one lexer step over `text`, its error taken out.
    fn run<'t, T>(
        text: &'t [u8],
        step: impl FnOnce(&mut Lexer<'t>) -> Step<T>,
    ) -> Result<T, Error> {
        let mut lexer = Lexer::new(text);
        let result = step(&mut lexer);
        lexer.finish(result)
    }

    #[test]
    fn skips_valid_values() {
        for ok in [
            "0",
            "-0",
            "1.5e-3",
            "-12E+4",
            "\"a\\u00e9\\ud83d\\ude00\"",
            "true",
            "null",
            "[]",
            "{}",
            "[1,[2,{\"a\":[]}],\"x\"]",
            " { \"k\" : [ 1 , 2 ] } ",
        ] {
            assert!(skip(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn rejects_invalid_values() {
        for bad in [
            "01",
            "-",
            "1.",
            ".5",
            "1e",
            "+1",
            "[,1]",
            "[1,]",
            "{\"a\":1,}",
            "{a:1}",
            "[1 2]",
            "tru",
            "\"\\x\"",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "\"a\u{1}\"",
            "1e400",
            "[1}",
            "NaN",
            "\"abc",
        ] {
            assert!(skip(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn nesting_limit_is_enforced_without_recursion() {
        let deep = "[".repeat(if cfg!(miri) { 1_000 } else { 100_000 });
        let err = skip(&deep).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NestingTooDeep);
        assert_eq!(err.offset(), Some(u64::from(MAX_DEPTH)));
        let ok = format!("{}{}", "[".repeat(127), "]".repeat(127));
        assert!(skip(&ok).is_ok());
    }

    #[test]
    fn strict_integers() {
        let int = |s: &str| run(s.as_bytes(), Lexer::uint);
        assert_eq!(int("0").unwrap(), 0);
        assert_eq!(int("18446744073709551615").unwrap(), u64::MAX);
        assert_eq!(
            int("18446744073709551616").unwrap_err().kind(),
            ErrorKind::IntegerTooLarge
        );
        // Twenty digits: compared as text with u64::MAX.
        assert_eq!(
            int("10000000000000000000").unwrap(),
            10_000_000_000_000_000_000
        );
        assert_eq!(int("18446744073709551614 ").unwrap(), u64::MAX - 1);
        for big in [
            "18446744073709551616",
            "99999999999999999999",
            "100000000000000000000",
        ] {
            assert_eq!(
                int(big).unwrap_err().kind(),
                ErrorKind::IntegerTooLarge,
                "{big}"
            );
        }
        assert_eq!(int("01").unwrap_err().kind(), ErrorKind::InvalidNumber);
        assert!(matches!(
            int("1.0").unwrap_err().kind(),
            ErrorKind::UnexpectedByte { found: b'.', .. }
        ));
        assert!(matches!(
            int("1e3").unwrap_err().kind(),
            ErrorKind::UnexpectedByte { found: b'e', .. }
        ));
        assert!(matches!(
            int("-0").unwrap_err().kind(),
            ErrorKind::UnexpectedByte { found: b'-', .. }
        ));
    }

    #[test]
    fn float_overflow_is_decided_exactly() {
        let finite = |t: &str| {
            let mut lexer = Lexer::new(t.as_bytes());
            let step = lexer.number();
            let at_end = lexer.at_end();
            match lexer.finish(step) {
                Ok(()) => {
                    assert!(at_end, "{t}");
                    true
                }
                Err(e) => {
                    assert_eq!(e.kind(), ErrorKind::InvalidNumber, "{t}");
                    assert_eq!(e.offset(), Some(0), "{t}");
                    false
                }
            }
        };
        let max = "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368";
        assert!(finite(max));
        assert!(finite(&format!("-{max}")));
        assert!(finite("1.7976931348623157e308"));
        assert!(!finite("1.7976931348623159e308"));
        let threshold = format!(
            "0.{}e309",
            core::str::from_utf8(number::F64_OVERFLOW_DIGITS).unwrap()
        );
        assert!(!finite(&threshold));
        assert!(finite(&threshold.replace("97792e309", "97791999e309")));
        assert!(!finite("1e309"));
        assert!(finite("0e999999999999999999999"));
        assert!(finite("0.000e400"));
        assert!(finite("1e-999999999999999999999"));
        assert!(!finite("1e999999999999999999999"));
        assert!(finite("0.0001e312"));
        assert!(!finite("0.001e312"));
        assert!(finite(&"9".repeat(308)));
        assert!(!finite(&"9".repeat(309)));
        // Agrees with Rust's correctly rounded parser on a sweep near the edge.
        for digits in [
            "1797693134862315",
            "17976931348623157",
            "17976931348623158",
            "1797693134862316",
            "18",
            "2",
        ] {
            // (Under Miri, only the exponents around the edge: it is slow there.)
            let exps = if cfg!(miri) { 306..=310 } else { 290..=330 };
            for exp in exps {
                let text = format!("{digits}e{exp}");
                assert_eq!(
                    finite(&text),
                    text.parse::<f64>().unwrap().is_finite(),
                    "{text}"
                );
            }
        }
        // Fractions, leading zeros and signs move the decimal point.
        for (int, frac) in [
            ("1", "797693134862316"),
            ("0", "0017976931348623158"),
            ("17", "9769"),
        ] {
            let exps = if cfg!(miri) { 306..=310 } else { 280..=340 };
            for exp in exps {
                for text in [
                    format!("{int}.{frac}e{exp}"),
                    format!("-{int}.{frac}E+{exp}"),
                    format!("{int}.{frac}e-{exp}"),
                ] {
                    assert_eq!(
                        finite(&text),
                        text.parse::<f64>().unwrap().is_finite(),
                        "{text}"
                    );
                }
            }
        }
    }

    #[test]
    fn eight_digits_at_a_time() {
        for text in ["00000000", "12345678", "99999999", "10000001", "08070605"] {
            let whole = (text.parse().unwrap(), 8);
            assert_eq!(leading_digits(text.as_bytes()), whole, "{text}");
        }
        // A word that is not eight digits: the digits before the first other byte.
        for (text, digits) in [
            ("1234567a", 7),
            ("/2345678", 0),
            (":2345678", 0),
            ("1234 678", 4),
            ("\0\0\0\0\0\0\0\0", 0),
        ] {
            let value = text[..digits].parse().unwrap_or(0);
            assert_eq!(leading_digits(text.as_bytes()), (value, digits), "{text:?}");
        }
        let int = |s: &str| run(s.as_bytes(), Lexer::uint);
        for n in [
            0u64,
            7,
            12345678,
            123456789,
            1234567890123456,
            12345678901234567,
            u64::MAX,
            10_000_000_000_000_000_000,
        ] {
            assert_eq!(int(&format!("{n},")).unwrap(), n);
        }
    }

    #[test]
    fn keys_hash_like_their_decoded_text() {
        let names = [
            "",
            "a",
            "abcdefg",
            "abcdefgh",
            "abcdefghi",
            "model.layers.17.mlp.gate_proj.weight",
            "0123456789abcdef",
            "é😀 unicode",
            "exactly_sixteen!",
        ];
        for name in names {
            for padding in ["", " ", ":{}", "        :        "] {
                let text = format!(" \"{name}\"{padding}");
                let mut lexer = Lexer::new(text.as_bytes());
                let (key, hash) = lexer.key().unwrap();
                assert_eq!(hash, hash::hash_str(name), "{text:?}");
                assert_eq!(&text[key.start..key.end], name);
                assert_eq!(lexer.pos(), name.len() + 3);
            }
        }
        let mut lexer = Lexer::new(br#""a\u00e9\ud83d\ude00 b\"c" "#);
        let (key, hash) = lexer.key().unwrap();
        assert!(key.escaped);
        assert_eq!(hash, hash::hash_str("aé😀 b\"c"));
        for bad in [&b"\"abc"[..], b"\"abcdefghij", b"\"a\x01b\"", b"abc"] {
            assert!(Lexer::new(bad).key().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn care_mask_finds_the_first_special_byte() {
        let specials = [b'"', b'\\', 0x00, 0x1f, 0x01, 0x80, 0xc3, 0xff];
        for pos in 0..8 {
            for &special in &specials {
                for &later in &specials {
                    let mut word = *b"abcdefgh";
                    word[pos] = special;
                    if pos < 7 {
                        word[7] = later;
                    }
                    let mask = care_mask(u64::from_le_bytes(word));
                    assert_eq!((mask.trailing_zeros() / 8) as usize, pos, "{word:?}");
                }
            }
        }
        for text in ["plain text, no quote", "plain text, then é😀"] {
            let mut lexer = Lexer::new(text.as_bytes());
            lexer.skip_plain_string_bytes();
            assert_eq!(lexer.pos(), text.find('é').unwrap_or(text.len()));
        }
    }
}
