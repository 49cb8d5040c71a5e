//! With the `alloc` feature: parsing into a `Vec<Slot>` sized for the header.
//!
//! The table is sized from the header's length, so that one parse does the
//! work:
//! - a tensor entry takes at least `ENTRY_BYTES` of JSON, so
//!   `N / ENTRY_BYTES` slots hold every tensor of an N-byte header; the
//!   parse runs in a table of that many, and the table is then compacted
//!   and shrunk to the slots used;
//! - metadata pairs can be shorter (`"a":"",` is 6 bytes). When a header
//!   has more of them than that guess leaves room for, the parse reports
//!   [`ErrorKind::CapacityExceeded`] with the exact count, and a second
//!   parse runs in a table of that size.
//!
//! A table the caller keeps (`read_header`) cannot be shrunk after the
//! parse, so `size_slots` sizes it exactly beforehand.
//!
//! [`ErrorKind::CapacityExceeded`]: crate::ErrorKind::CapacityExceeded

use alloc::vec::Vec;

use crate::error::{Error, ErrorKind};
use crate::file::{Header, Parser, SafeTensors, Status};
use crate::table::{self, Slot};

/// Fewest header bytes a tensor entry takes: `"":{"dtype":"U8","shape":[],`
/// `"data_offsets":[0,0]},` is 51, and only one tensor can have the empty
/// name.
const ENTRY_BYTES: usize = 40;

/// Slots every table gets, for the few metadata pairs a small header holds.
const MIN_SLOTS: usize = 8;

/// The first table for the header at the start of `prefix`: room for every
/// tensor it can hold, and a few metadata pairs (none when `prefix` does not
/// hold the whole header: the parse then only says how much it needs).
fn first_table(parser: &Parser, prefix: &[u8]) -> Vec<Slot> {
    let header_len = parser
        .bytes_needed(prefix)
        .ok()
        .and_then(|end| usize::try_from(end).ok())
        .filter(|&end| prefix.len() >= end && end > 8)
        .map(|end| end.saturating_sub(8));
    let mut slots = Vec::new();
    if let Some(n) = header_len {
        slots.resize((n / ENTRY_BYTES).saturating_add(MIN_SLOTS), Slot::EMPTY);
    }
    slots
}

/// Runs `parse` in a table sized by [`first_table`], again in an exact one
/// if that was too small, and hands back the result.
fn with_table<T>(
    mut slots: Vec<Slot>,
    parse: impl Fn(Vec<Slot>) -> Result<T, Error>,
) -> Result<T, Error> {
    let needed = match parse(core::mem::take(&mut slots)) {
        Err(e) => match e.kind() {
            ErrorKind::CapacityExceeded { needed, .. } => {
                usize::try_from(needed).map_err(|_| Error::new(ErrorKind::TooLargeForTarget))?
            }
            _ => return Err(e),
        },
        done => return done,
    };
    slots.resize(needed, Slot::EMPTY);
    parse(slots)
}

/// Compacts the table of `header` to the slots it uses and gives the rest
/// back to the allocator.
fn shrink(header: &mut Header<'_, Vec<Slot>>) {
    let (slots, tensors, pairs) = header.storage_mut();
    if slots.len() > tensors.saturating_add(pairs) {
        let used = table::compact(slots, tensors, pairs);
        slots.truncate(used);
        slots.shrink_to_fit();
    }
}

/// Upper bound under which the table is sized from the quote count alone.
#[cfg(feature = "std")]
const SMALL: usize = 256;

/// A quarter of the `"` in `json` that are not escaped: at least the slots
/// any header that parses needs.
#[cfg(feature = "std")]
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
/// For a table the caller keeps (`read_header`), which cannot be shrunk
/// after the parse: the size is exact, from the quote bound when that is
/// small, else from a counting pass.
///
/// # Errors
/// A format error found by the counting pass; it is the one the real parse
/// would report.
#[cfg(feature = "std")]
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
        let mut st = with_table(first_table(self, file), |slots| self.parse(file, slots))?;
        shrink(st.header_mut());
        Ok(st)
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
        let mut status = with_table(first_table(self, prefix), |slots| {
            self.parse_header(prefix, slots)
        })?;
        if let Status::Complete(header) = &mut status {
            shrink(header);
        }
        Ok(status)
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
impl<'a> SafeTensors<'a, Vec<Slot>> {
    /// Parses a whole file into a `Vec<Slot>` sized for it: no capacity to
    /// choose.
    ///
    /// Sizing: a header needs a slot per tensor and per metadata pair. The
    /// parse runs in a table with room for every tensor a header of its
    /// length can hold (an entry takes at least 40 bytes), which is then
    /// shrunk to the slots used; a header with more metadata pairs than
    /// that leaves room for is parsed again in a table of the exact size.
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
    use crate::{Parser, SafeTensors, Status};
    use std::string::{String, ToString};
    use std::vec::Vec;
    use std::{format, vec};

    #[cfg(feature = "std")]
    #[test]
    fn escaped_quotes_do_not_count() {
        use super::slot_bound;
        assert_eq!(slot_bound(br#"{"a":"b\"\"\"\"\"\"\"\"","c":"d"}"#), 2);
        assert_eq!(slot_bound(br#"{"a\\":"b"}"#), 1);
    }

    fn file(json: &str) -> Vec<u8> {
        let mut f = (json.len() as u64).to_le_bytes().to_vec();
        f.extend_from_slice(json.as_bytes());
        f
    }

    #[test]
    fn many_metadata_pairs_take_a_second_parse() {
        let pairs: Vec<String> = (0..500).map(|i| format!(r#""{i}":"""#)).collect();
        let json = format!(
            r#"{{"w":{{"dtype":"U8","shape":[1],"data_offsets":[0,1]}},"__metadata__":{{{}}}}}"#,
            pairs.join(",")
        );
        let mut f = file(&json);
        f.push(5);
        let st = SafeTensors::parse_alloc(&f).unwrap();
        assert_eq!(st.tensor("w").unwrap().data(), &[5]);
        let meta = st.metadata().unwrap();
        assert_eq!(meta.len(), 500);
        assert!(meta.get("499").is_some_and(|v| v == ""));
        assert_eq!(st.into_header().into_storage().len(), 501);
    }

    #[test]
    fn shrunk_tables_answer_as_the_table_path_does() {
        let mut entries: Vec<String> = (0..300)
            .map(|i| {
                format!(
                    r#""t{i}":{{"dtype":"U8","shape":[1],"data_offsets":[{},{}]}}"#,
                    299 - i,
                    300 - i
                )
            })
            .collect();
        entries.push(r#""__metadata__":{"b":"2","a":"1"}"#.into());
        let f = file(&format!("{{{}}}", entries.join(",")));
        let Status::Complete(h) = Parser::new().parse_header_alloc(&f).unwrap() else {
            panic!("whole header")
        };
        let mut slots = vec![crate::Slot::EMPTY; 400];
        let Status::Complete(t) = Parser::new().parse_header(&f, &mut slots[..]).unwrap() else {
            panic!("whole header")
        };
        assert_eq!(h.len(), 300);
        assert!(h
            .iter()
            .map(|i| i.name().to_string())
            .eq(t.iter().map(|i| i.name().to_string())));
        for i in 0..300 {
            let name = format!("t{i}");
            assert_eq!(
                h.tensor(&name).unwrap().data_offsets(),
                t.tensor(&name).unwrap().data_offsets()
            );
        }
        let meta = h.metadata().unwrap();
        assert!(meta.get("a").is_some_and(|v| v == "1"));
        assert!(meta.get("b").is_some_and(|v| v == "2"));
        assert!(meta.get("c").is_none());
        assert_eq!(h.into_storage().len(), 302);
    }
}
