//! With the `alloc` feature: parsing into a `Vec<Slot>` sized for the header.
//!
//! The table is sized once, before the real parse:
//! - a valid header holds at least 5 strings per tensor and 2 per metadata
//!   pair, so a quarter of its unescaped `"` is an upper bound on the slots
//!   it needs; when that bound is small (≤ 256 slots, 8 KiB) the
//!   table gets that many;
//! - otherwise a first pass with no slots at all counts them exactly (the
//!   parser reports [`ErrorKind::CapacityExceeded`] with the number), so a
//!   big header costs one extra walk of its JSON but no slack memory.
//!
//! [`ErrorKind::CapacityExceeded`]: crate::ErrorKind::CapacityExceeded

use alloc::vec::Vec;

use crate::error::{Error, ErrorKind};
use crate::file::{Header, Parser, SafeTensors, Status};
use crate::table::Slot;

/// Upper bound under which the table is sized from the quote count alone.
const SMALL: usize = 256;

/// A quarter of the `"` in `json` that are not escaped: at least the slots
/// any header that parses needs.
fn slot_bound(json: &[u8]) -> usize {
    let mut quotes = 0usize;
    let mut bytes = json.iter();
    while let Some(&b) = bytes.next() {
        match b {
            b'"' => quotes = quotes.saturating_add(1),
            b'\\' => {
                bytes.next();
            }
            _ => {}
        }
    }
    quotes / 4
}

/// Grows `slots` so that the header at the start of `prefix` fits, when
/// `prefix` holds all of it (otherwise the parse that follows reports why).
///
/// # Errors
/// A format error found by the counting pass; it is the one the real parse
/// would report.
pub(crate) fn size_slots(
    parser: &Parser,
    prefix: &[u8],
    slots: &mut Vec<Slot>,
) -> Result<(), Error> {
    let Some(json) = parser
        .bytes_needed(prefix)
        .ok()
        .and_then(|end| usize::try_from(end).ok())
        .and_then(|end| prefix.get(8..end))
    else {
        return Ok(());
    };
    let bound = slot_bound(json);
    if slots.len() >= bound {
        return Ok(());
    }
    let needed = if bound <= SMALL {
        bound
    } else {
        let mut none: [Slot; 0] = [];
        match parser.parse_header(prefix, &mut none[..]) {
            Err(e) => match e.kind() {
                ErrorKind::CapacityExceeded { needed, .. } => {
                    usize::try_from(needed).map_err(|_| Error::new(ErrorKind::TooLargeForTarget))?
                }
                _ => return Err(e),
            },
            Ok(_) => 0,
        }
    };
    if slots.len() < needed {
        slots.resize(needed, Slot::EMPTY);
    }
    Ok(())
}

#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
impl Parser {
    /// [`parse`](Parser::parse) into a `Vec<Slot>` sized for the file (as
    /// [`SafeTensors::parse_alloc`] explains).
    ///
    /// # Errors
    /// As [`Parser::parse`], never [`ErrorKind::CapacityExceeded`].
    ///
    /// ```
    /// use safetensors_nano::Parser;
    /// let h = br#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"__metadata__":{"k":"v"}}"#;
    /// let mut file = (h.len() as u64).to_le_bytes().to_vec();
    /// file.extend_from_slice(h);
    /// file.push(42);
    /// let st = Parser::new().header_limit(4096).parse_alloc(&file).unwrap();
    /// assert_eq!(st.tensor("a").unwrap().data(), &[42]);
    /// assert_eq!(st.metadata().unwrap().get("k").unwrap(), "v");
    /// ```
    pub fn parse_alloc<'a>(&self, file: &'a [u8]) -> Result<SafeTensors<'a, Vec<Slot>>, Error> {
        let mut slots = Vec::new();
        size_slots(self, file, &mut slots)?;
        self.parse(file, slots)
    }

    /// [`parse_header`](Parser::parse_header) into a `Vec<Slot>` sized for
    /// the header.
    ///
    /// # Errors
    /// As [`Parser::parse_header`], never [`ErrorKind::CapacityExceeded`].
    ///
    /// ```
    /// use safetensors_nano::{Parser, Status};
    /// let h = br#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#;
    /// let mut prefix = (h.len() as u64).to_le_bytes().to_vec();
    /// prefix.extend_from_slice(h); // no data
    /// let Status::Complete(header) = Parser::new().parse_header_alloc(&prefix).unwrap() else { unreachable!() };
    /// assert_eq!(header.file_len(), prefix.len() as u64 + 16);
    /// ```
    pub fn parse_header_alloc<'a>(
        &self,
        prefix: &'a [u8],
    ) -> Result<Status<Header<'a, Vec<Slot>>>, Error> {
        let mut slots = Vec::new();
        size_slots(self, prefix, &mut slots)?;
        self.parse_header(prefix, slots)
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
impl<'a> SafeTensors<'a, Vec<Slot>> {
    /// Parses a whole file into a `Vec<Slot>` sized for it: no capacity to
    /// choose.
    ///
    /// Sizing: a header needs a slot per tensor and per metadata pair. When
    /// a quarter of its unescaped `"` (an upper bound: a tensor entry has at
    /// least 5 strings, a pair 2) is at most 256, that many slots are
    /// allocated; otherwise a first pass counts them exactly.
    ///
    /// # Errors
    /// As [`Parser::parse`], never [`ErrorKind::CapacityExceeded`].
    ///
    /// ```
    /// use safetensors_nano::SafeTensors;
    /// let h = br#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#;
    /// let mut file = (h.len() as u64).to_le_bytes().to_vec();
    /// file.extend_from_slice(h);
    /// file.extend_from_slice(&[1, 2]);
    /// let st = SafeTensors::parse_alloc(&file).unwrap();
    /// assert_eq!(st.tensor("a").unwrap().data(), &[1, 2]);
    /// ```
    pub fn parse_alloc(file: &'a [u8]) -> Result<Self, Error> {
        Parser::new().parse_alloc(file)
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
impl<'a> Header<'a, Vec<Slot>> {
    /// Parses a header from the first bytes of a file into a `Vec<Slot>`
    /// sized for it (as [`SafeTensors::parse_alloc`]).
    ///
    /// # Errors
    /// As [`Parser::parse_header`], never [`ErrorKind::CapacityExceeded`].
    ///
    /// ```
    /// use safetensors_nano::{Header, Status};
    /// assert!(matches!(Header::parse_alloc(b"\x02\x00\x00").unwrap(), Status::Partial { needed: 8 }));
    /// let Status::Complete(h) = Header::parse_alloc(b"\x02\x00\x00\x00\x00\x00\x00\x00{}").unwrap() else { unreachable!() };
    /// assert!(h.is_empty());
    /// ```
    pub fn parse_alloc(prefix: &'a [u8]) -> Result<Status<Self>, Error> {
        Parser::new().parse_header_alloc(prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::slot_bound;

    #[test]
    fn escaped_quotes_do_not_count() {
        assert_eq!(slot_bound(br#"{"a":"b\"\"\"\"\"\"\"\"","c":"d"}"#), 2);
        assert_eq!(slot_bound(br#"{"a\\":"b"}"#), 1);
    }
}
