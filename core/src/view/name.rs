//! Strings borrowed from the header, still JSON-escaped, decoded lazily.

use core::cmp::Ordering;
use core::fmt;

/// A string from the header (a tensor name, a metadata key or value),
/// borrowed as its raw JSON content and unescaped only when read.
///
/// Comparisons and [`Display`](fmt::Display) see the decoded text; nothing
/// is allocated.
///
/// ```
/// use safetensors_nano::Name;
/// let name = Name::from_raw(br"caf\u00e9\n");
/// assert_eq!(name, "café\n");
/// assert_eq!(name.as_str(), None); // it has escapes
/// assert_eq!(name.to_string(), "café\n");
/// assert_eq!(Name::from_raw(b"plain").as_str(), Some("plain"));
/// ```
#[derive(Clone, Copy)]
pub struct Name<'a> {
    raw: &'a [u8],
}

impl<'a> Name<'a> {
    /// Wraps the raw content of a JSON string (the bytes between the quotes).
    ///
    /// The header parser only hands out names it has validated; for other
    /// input, invalid escapes decode as U+FFFD and never panic.
    ///
    /// ```
    /// use safetensors_nano::Name;
    /// assert_eq!(Name::from_raw(br#"a\"b"#), "a\"b");
    /// ```
    pub const fn from_raw(raw: &'a [u8]) -> Name<'a> {
        Name { raw }
    }

    /// The raw, still escaped bytes between the quotes.
    ///
    /// ```
    /// use safetensors_nano::Name;
    /// assert_eq!(Name::from_raw(br"a\tb").raw(), br"a\tb");
    /// ```
    pub const fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// Whether the raw text holds any escape (so decoding changes it).
    ///
    /// ```
    /// use safetensors_nano::Name;
    /// assert!(Name::from_raw(br"\u0041").has_escapes());
    /// ```
    // A plain loop, not `contains` (a word-at-a-time memchr): names are
    // short, and on a Cortex-M the memchr costs 116 bytes of flash.
    #[allow(clippy::manual_contains)]
    pub fn has_escapes(&self) -> bool {
        self.raw.iter().any(|&b| b == b'\\')
    }

    /// The text itself, borrowed, when it has no escapes to decode.
    ///
    /// ```
    /// use safetensors_nano::Name;
    /// assert_eq!(Name::from_raw(b"model.embed").as_str(), Some("model.embed"));
    /// ```
    pub fn as_str(&self) -> Option<&'a str> {
        if self.has_escapes() {
            None
        } else {
            core::str::from_utf8(self.raw).ok()
        }
    }

    /// The decoded characters.
    ///
    /// ```
    /// use safetensors_nano::Name;
    /// let s: String = Name::from_raw(br"\ud83d\ude00!").chars().collect();
    /// assert_eq!(s, "😀!");
    /// ```
    pub fn chars(&self) -> Chars<'a> {
        Chars { rest: self.raw }
    }

    /// The decoded text's UTF-8 bytes, without a buffer (what hashing and
    /// comparing need; same order as comparing chars).
    pub(crate) fn bytes(&self) -> Bytes<'a> {
        Bytes {
            chars: self.chars(),
            pending: [0; 4],
            at: 0,
            len: 0,
        }
    }

    /// Length of the decoded text in UTF-8 bytes.
    ///
    /// ```
    /// use safetensors_nano::Name;
    /// assert_eq!(Name::from_raw(br"\u00e9").decoded_len(), 2);
    /// ```
    pub fn decoded_len(&self) -> usize {
        if self.has_escapes() {
            self.chars()
                .fold(0usize, |n, c| n.saturating_add(c.len_utf8()))
        } else {
            self.raw.len()
        }
    }

    /// Decodes into `buf` and returns the text, or `None` when `buf` is
    /// shorter than [`decoded_len`](Name::decoded_len).
    ///
    /// ```
    /// use safetensors_nano::Name;
    /// let mut buf = [0u8; 16];
    /// assert_eq!(Name::from_raw(br"a\/b").decode_into(&mut buf), Some("a/b"));
    /// ```
    pub fn decode_into<'b>(&self, buf: &'b mut [u8]) -> Option<&'b str> {
        let mut len = 0usize;
        for c in self.chars() {
            let end = len.checked_add(c.len_utf8())?;
            c.encode_utf8(buf.get_mut(len..end)?);
            len = end;
        }
        core::str::from_utf8(buf.get(..len)?).ok()
    }

    /// Compares the decoded text with `other`, in code-point (= UTF-8 byte) order.
    ///
    /// ```
    /// use safetensors_nano::Name;
    /// use core::cmp::Ordering;
    /// assert_eq!(Name::from_raw(b"a").cmp_str("b"), Ordering::Less);
    /// ```
    pub fn cmp_str(&self, other: &str) -> Ordering {
        if self.has_escapes() {
            self.bytes().cmp(other.as_bytes().iter().copied())
        } else {
            self.raw.cmp(other.as_bytes())
        }
    }

    /// Compares two names by their decoded text.
    ///
    /// ```
    /// use safetensors_nano::Name;
    /// use core::cmp::Ordering;
    /// assert_eq!(Name::from_raw(br"\u0061").cmp_name(&Name::from_raw(b"a")), Ordering::Equal);
    /// ```
    pub fn cmp_name(&self, other: &Name<'_>) -> Ordering {
        if !self.has_escapes() && !other.has_escapes() {
            self.raw.cmp(other.raw)
        } else {
            self.bytes().cmp(other.bytes())
        }
    }
}

impl PartialEq<str> for Name<'_> {
    fn eq(&self, other: &str) -> bool {
        self.cmp_str(other) == Ordering::Equal
    }
}

impl PartialEq<&str> for Name<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.cmp_str(other) == Ordering::Equal
    }
}

impl PartialEq for Name<'_> {
    fn eq(&self, other: &Name<'_>) -> bool {
        self.cmp_name(other) == Ordering::Equal
    }
}

impl Eq for Name<'_> {}

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = self.as_str() {
            return f.write_str(s);
        }
        for c in self.chars() {
            fmt::Write::write_char(f, c)?;
        }
        Ok(())
    }
}

impl fmt::Debug for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for c in self.chars() {
            for e in c.escape_debug() {
                fmt::Write::write_char(f, e)?;
            }
        }
        f.write_str("\"")
    }
}

#[cfg(feature = "defmt")]
#[cfg_attr(docsrs, doc(cfg(feature = "defmt")))]
impl defmt::Format for Name<'_> {
    fn format(&self, f: defmt::Formatter<'_>) {
        match self.as_str() {
            Some(s) => defmt::write!(f, "{=str}", s),
            None => defmt::write!(f, "{=[u8]}", self.raw),
        }
    }
}

/// Iterator over the decoded characters of a [`Name`].
///
/// ```
/// use safetensors_nano::Name;
/// assert_eq!(Name::from_raw(b"ab").chars().count(), 2);
/// ```
#[derive(Clone, Debug)]
pub struct Chars<'a> {
    rest: &'a [u8],
}

/// The decoded UTF-8 bytes of a name: raw bytes pass through, escapes are
/// decoded and encoded.
pub(crate) struct Bytes<'a> {
    chars: Chars<'a>,
    pending: [u8; 4],
    at: usize,
    len: usize,
}

impl Iterator for Bytes<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        if self.at < self.len {
            let b = self.pending.get(self.at).copied();
            self.at = self.at.saturating_add(1);
            return b;
        }
        let (&first, rest) = self.chars.rest.split_first()?;
        self.chars.rest = rest;
        if first != b'\\' {
            return Some(first);
        }
        let c = self.chars.escape();
        self.len = c.encode_utf8(&mut self.pending).len();
        self.at = 1;
        self.pending.first().copied()
    }
}

impl Chars<'_> {
    fn take_hex4(&mut self) -> Option<u32> {
        let (digits, rest) = self.rest.split_first_chunk::<4>()?;
        self.rest = rest;
        digits.iter().try_fold(0u32, |acc, &d| {
            Some((acc << 4) | char::from(d).to_digit(16)?)
        })
    }

    fn escape(&mut self) -> char {
        let Some((&kind, rest)) = self.rest.split_first() else {
            return char::REPLACEMENT_CHARACTER;
        };
        self.rest = rest;
        match kind {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => self.unicode_escape(),
            _ => char::REPLACEMENT_CHARACTER,
        }
    }

    fn unicode_escape(&mut self) -> char {
        let Some(first) = self.take_hex4() else {
            return char::REPLACEMENT_CHARACTER;
        };
        if !(0xD800..0xDC00).contains(&first) {
            return char::from_u32(first).unwrap_or(char::REPLACEMENT_CHARACTER);
        }
        let Some(rest) = self.rest.strip_prefix(br"\u") else {
            return char::REPLACEMENT_CHARACTER;
        };
        self.rest = rest;
        match self.take_hex4() {
            Some(low @ 0xDC00..=0xDFFF) => {
                // Both halves were checked to be in range: this is at most 0x10FFFF.
                let c = (first.wrapping_sub(0xD800) << 10)
                    .wrapping_add(low.wrapping_sub(0xDC00))
                    .wrapping_add(0x10000);
                char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER)
            }
            _ => char::REPLACEMENT_CHARACTER,
        }
    }
}

impl Iterator for Chars<'_> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        let (&first, rest) = self.rest.split_first()?;
        if first == b'\\' {
            self.rest = rest;
            return Some(self.escape());
        }
        if first < 0x80 {
            self.rest = rest;
            return Some(char::from(first));
        }
        let width = match first {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => 4,
        };
        let width = width.min(self.rest.len());
        let (bytes, rest) = self.rest.split_at(width);
        self.rest = rest;
        Some(
            core::str::from_utf8(bytes)
                .ok()
                .and_then(|s| s.chars().next())
                .unwrap_or(char::REPLACEMENT_CHARACTER),
        )
    }
}
