//! The entry points: a whole file ([`SafeTensors`]) or just its header
//! ([`Header`]), parsed by a [`Parser`] into caller-owned slots.

use crate::error::{Error, ErrorKind};
use crate::mode::Plain;
use crate::read::header::{self, MetadataState};
use crate::read::string::tensor_error;
use crate::read::{names, utf8, validate};
use crate::table::{self, Entry, Slot, OFFSET_MASK};
use crate::view::metadata::Metadata;
use crate::view::name::Name;
use crate::view::tensor::{TensorInfo, TensorView};
use crate::view::visit::Visitor;

/// The largest header the reference accepts, and our default limit: 100,000,000 bytes.
///
/// ```
/// assert_eq!(safetensors_nano::HEADER_LIMIT, 100_000_000);
/// ```
pub const HEADER_LIMIT: u64 = 100_000_000;

/// Result of parsing from a prefix of a file that may be too short.
///
/// ```
/// use safetensors_nano::{Parser, Slot, Status};
/// let mut slots = [Slot::EMPTY; 4];
/// let st = Parser::new().parse_header(&[2, 0, 0, 0, 0, 0, 0, 0, b'{'], &mut slots[..]).unwrap();
/// assert!(matches!(st, Status::Partial { needed: 10 }));
/// ```
#[derive(Debug)]
pub enum Status<T> {
    /// Parsed.
    Complete(T),
    /// The prefix is too short: this many bytes from the file start are needed.
    Partial {
        /// Bytes from the start of the file.
        needed: u64,
    },
}

impl<T> Status<T> {
    /// Whether this is [`Status::Complete`].
    ///
    /// ```
    /// use safetensors_nano::Status;
    /// assert!(Status::Complete(()).is_complete());
    /// assert!(!Status::<()>::Partial { needed: 8 }.is_complete());
    /// ```
    pub const fn is_complete(&self) -> bool {
        matches!(self, Status::Complete(_))
    }

    /// Whether this is [`Status::Partial`].
    ///
    /// ```
    /// use safetensors_nano::Status;
    /// assert!(Status::<()>::Partial { needed: 8 }.is_partial());
    /// ```
    pub const fn is_partial(&self) -> bool {
        matches!(self, Status::Partial { .. })
    }

    /// The parsed value, or `None` when partial. (httparse's
    /// `Status::unwrap` panics instead; this crate has no panicking paths,
    /// so `.complete().expect("…")` or `let … else` are the caller's to
    /// write.)
    ///
    /// ```
    /// use safetensors_nano::{Header, Table};
    /// let header = Header::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new())?
    ///     .complete()
    ///     .expect("the prefix holds the whole header");
    /// assert!(header.is_empty());
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn complete(self) -> Option<T> {
        match self {
            Status::Complete(t) => Some(t),
            Status::Partial { .. } => None,
        }
    }

    /// How many bytes from the start of the file are needed, or `None`
    /// when complete.
    ///
    /// ```
    /// use safetensors_nano::{Header, Table};
    /// assert_eq!(Header::parse(b"\x02\x00", Table::<1>::new())?.needed(), Some(8));
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub const fn needed(&self) -> Option<u64> {
        match self {
            Status::Complete(_) => None,
            Status::Partial { needed } => Some(*needed),
        }
    }

    /// The parsed value mapped by `f`; a partial status stays as it is.
    ///
    /// ```
    /// use safetensors_nano::Status;
    /// assert_eq!(Status::Complete(2).map(|n| n * 10).complete(), Some(20));
    /// ```
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Status<U> {
        match self {
            Status::Complete(t) => Status::Complete(f(t)),
            Status::Partial { needed } => Status::Partial { needed },
        }
    }
}

/// Parser settings. [`Parser::new`] gives the reference's behaviour.
///
/// ```
/// use safetensors_nano::{ErrorKind, Parser, Table};
/// let file = b"\x02\x00\x00\x00\x00\x00\x00\x00{}";
/// let small = Parser::new().header_limit(1);
/// let err = small.parse(file, Table::<1>::new()).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::HeaderTooLarge { header_len: 2, limit: 1 });
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Parser {
    header_limit: u64,
}

impl Default for Parser {
    fn default() -> Self {
        Parser::new()
    }
}

fn read_len(prefix: &[u8]) -> Option<u64> {
    prefix.first_chunk::<8>().map(|b| u64::from_le_bytes(*b))
}

impl Parser {
    /// A parser with the default header limit ([`HEADER_LIMIT`]).
    ///
    /// ```
    /// let parser = safetensors_nano::Parser::new();
    /// # let _ = parser;
    /// ```
    pub const fn new() -> Self {
        Parser {
            header_limit: HEADER_LIMIT,
        }
    }

    /// Lowers the header size limit (a microcontroller may want 16 KB).
    /// Values above [`HEADER_LIMIT`] are clamped to it.
    ///
    /// ```
    /// let parser = safetensors_nano::Parser::new().header_limit(16_384);
    /// # let _ = parser;
    /// ```
    pub const fn header_limit(mut self, limit: u64) -> Self {
        self.header_limit = if limit < HEADER_LIMIT {
            limit
        } else {
            HEADER_LIMIT
        };
        self
    }

    /// How many bytes from the start of the file [`parse_header`](Parser::parse_header)
    /// needs: 8 while `prefix` is shorter than that, then `8 + N`.
    ///
    /// # Errors
    /// [`ErrorKind::HeaderTooLarge`] when N is over the limit.
    ///
    /// ```
    /// use safetensors_nano::Parser;
    /// assert_eq!(Parser::new().bytes_needed(&[]).unwrap(), 8);
    /// assert_eq!(Parser::new().bytes_needed(&[40, 0, 0, 0, 0, 0, 0, 0]).unwrap(), 48);
    /// ```
    pub fn bytes_needed(&self, prefix: &[u8]) -> Result<u64, Error> {
        match read_len(prefix) {
            None => Ok(8),
            Some(n) => {
                self.check_limit(n)?;
                Ok(n.saturating_add(8))
            }
        }
    }

    fn check_limit(&self, n: u64) -> Result<(), Error> {
        if n > self.header_limit {
            Err(Error::new(ErrorKind::HeaderTooLarge {
                header_len: n,
                limit: self.header_limit,
            }))
        } else {
            Ok(())
        }
    }

    /// Parses and validates a whole file: every rule of docs/format.md,
    /// R1 prefix-present to R13 exact-length.
    ///
    /// # Errors
    /// Any format violation, or [`ErrorKind::CapacityExceeded`] when the
    /// table is too small (the error says how many slots are needed).
    ///
    /// ```
    /// use safetensors_nano::{Parser, Slot};
    /// let mut slots = [Slot::EMPTY; 2];
    /// let file = b"\x02\x00\x00\x00\x00\x00\x00\x00{}";
    /// let st = Parser::new().parse(file, &mut slots[..]).unwrap();
    /// assert!(st.is_empty());
    /// ```
    pub fn parse<'a, S>(&self, file: &'a [u8], storage: S) -> Result<SafeTensors<'a, S>, Error>
    where
        S: AsRef<[Slot]> + AsMut<[Slot]>,
    {
        let n = read_len(file).ok_or(Error::new(ErrorKind::HeaderTooSmall {
            len: file.len() as u64,
        }))?;
        self.check_limit(n)?;
        let file_len = file.len() as u64;
        let invalid_len = Error::new(ErrorKind::InvalidHeaderLength {
            header_len: n,
            file_len,
        });
        // n ≤ HEADER_LIMIT, so it fits usize on every target we build for.
        let data_start = usize::try_from(n)
            .ok()
            .and_then(|n| n.checked_add(8))
            .ok_or(invalid_len)?;
        let json = file.get(8..data_start).ok_or(invalid_len)?;
        let data = file.get(data_start..).unwrap_or_default();
        let header = Header::from_json(json, storage, &mut ())?;
        header.check_data_len(data.len() as u64)?;
        Ok(SafeTensors { header, data })
    }

    /// Parses and validates the header from the first bytes of a file
    /// (docs/format.md R1 prefix-present, R2 header-limit, R4 utf8 to R12
    /// size-matches), without the data. Check the file length with
    /// [`Header::check_file_len`] when it is known.
    ///
    /// # Errors
    /// As [`parse`](Parser::parse), less the rules that need the file length.
    ///
    /// ```
    /// use safetensors_nano::{Parser, Status, Table};
    /// let prefix = b"\x02\x00\x00\x00\x00\x00\x00\x00{}";
    /// let Status::Complete(header) = Parser::new().parse_header(prefix, Table::<2>::new()).unwrap() else {
    ///     panic!("prefix holds the whole header")
    /// };
    /// assert_eq!(header.data_start(), 10);
    /// ```
    pub fn parse_header<'a, S>(
        &self,
        prefix: &'a [u8],
        storage: S,
    ) -> Result<Status<Header<'a, S>>, Error>
    where
        S: AsRef<[Slot]> + AsMut<[Slot]>,
    {
        self.parse_header_with(prefix, storage, &mut ())
    }

    /// [`parse_header`](Parser::parse_header), showing each entry to
    /// `visitor` as it is read (see [`Visitor`]).
    ///
    /// # Errors
    /// As [`parse_header`](Parser::parse_header).
    ///
    /// ```
    /// use safetensors_nano::{Dtype, Name, Parser, Shape, Table, Visitor};
    /// struct Names(Vec<String>);
    /// impl<'h> Visitor<'h> for Names {
    ///     fn tensor(&mut self, name: Name<'h>, _: Dtype, _: Shape<'h>, _: (u64, u64)) {
    ///         self.0.push(name.to_string());
    ///     }
    /// }
    /// let h = br#"{"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#;
    /// let mut prefix = (h.len() as u64).to_le_bytes().to_vec();
    /// prefix.extend_from_slice(h);
    /// let mut names = Names(Vec::new());
    /// Parser::new().parse_header_with(&prefix, Table::<2>::new(), &mut names).unwrap();
    /// assert_eq!(names.0, ["b", "a"]); // header order
    /// ```
    pub fn parse_header_with<'a, S>(
        &self,
        prefix: &'a [u8],
        storage: S,
        visitor: &mut dyn Visitor<'a>,
    ) -> Result<Status<Header<'a, S>>, Error>
    where
        S: AsRef<[Slot]> + AsMut<[Slot]>,
    {
        let needed = self.bytes_needed(prefix)?;
        let Some(json) = usize::try_from(needed)
            .ok()
            .and_then(|end| prefix.get(8..end))
        else {
            return Ok(Status::Partial { needed });
        };
        Header::from_json(json, storage, visitor).map(Status::Complete)
    }
}

/// A validated header: tensor entries and metadata, borrowed from the
/// header bytes, stored in the caller's slots `S`.
///
/// ```
/// use safetensors_nano::{Header, Status, Table};
/// let file = b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ";
/// let Status::Complete(header) = Header::parse(file, Table::<1>::new()).unwrap() else { unreachable!() };
/// assert_eq!((header.len(), header.header_len(), header.data_len()), (0, 8, 0));
/// ```
pub struct Header<'a, S> {
    json: &'a [u8],
    storage: S,
    tensors: usize,
    metadata: MetadataState,
    data_len: u64,
    /// Whether the text is ASCII without escapes (see
    /// [`Header::is_plain_ascii`]).
    plain: Plain,
}

impl<'a, S: AsRef<[Slot]> + AsMut<[Slot]>> Header<'a, S> {
    /// [`Parser::parse_header`] with default settings.
    ///
    /// # Errors
    /// As [`Parser::parse_header`].
    ///
    /// ```
    /// use safetensors_nano::{Header, Status, Table};
    /// assert!(matches!(Header::parse(b"\x02\x00", Table::<1>::new()).unwrap(), Status::Partial { needed: 8 }));
    /// ```
    pub fn parse(prefix: &'a [u8], storage: S) -> Result<Status<Header<'a, S>>, Error> {
        Parser::new().parse_header(prefix, storage)
    }

    fn from_json(
        json: &'a [u8],
        mut storage: S,
        visitor: &mut dyn Visitor<'a>,
    ) -> Result<Self, Error> {
        // Like the reference, a header that is not UTF-8 fails as that,
        // whatever else is wrong with it. The lexer checks every byte it
        // passes; the whole header is checked only when something failed.
        let utf8_first = |e: Error| match utf8::invalid_at(json) {
            Some(valid) => Error::at(ErrorKind::InvalidUtf8, valid),
            None => e,
        };
        if json.len() > OFFSET_MASK as usize {
            // Only reachable with a limit above HEADER_LIMIT, which Parser clamps.
            return Err(utf8_first(Error::new(ErrorKind::HeaderTooLarge {
                header_len: json.len() as u64,
                limit: HEADER_LIMIT,
            })));
        }
        let slots = storage.as_mut();
        let capacity = table::capacity(slots);
        let building = table::building(slots);
        let parsed = header::parse(json, building, visitor).map_err(utf8_first)?;
        let pairs = match parsed.metadata {
            MetadataState::Present(n) => n,
            _ => 0,
        };
        let needed = parsed.tensors.saturating_add(pairs);
        if needed > capacity {
            return Err(Error::new(ErrorKind::CapacityExceeded {
                capacity: capacity as u64,
                needed: needed as u64,
            }));
        }
        let t = parsed.tensors;
        let meta_start = capacity.saturating_sub(pairs);
        // Name orders, tensors first (see `names::build`).
        let duplicate = |kind, start| tensor_error(json, kind, start);
        names::build(json, slots, 0..t, 0)
            .map_err(|start| duplicate(ErrorKind::DuplicateTensorName, start))?;
        names::build(json, slots, meta_start..capacity, meta_start)
            .map_err(|start| duplicate(ErrorKind::DuplicateMetadataKey, start))?;
        let regions = table::regions_mut(slots);
        let tensor_entries = regions.entries.get(..t).unwrap_or_default();
        let offsets = regions.by_offset.get_mut(..t).unwrap_or_default();
        let data_len = validate::tile(tensor_entries, offsets).map_err(|m| m.error(json))?;
        Ok(Header {
            json,
            storage,
            tensors: t,
            metadata: parsed.metadata,
            data_len,
            plain: parsed.plain,
        })
    }
}

impl<'a, S: AsRef<[Slot]>> Header<'a, S> {
    fn entries(&self) -> &[Entry] {
        let r = table::regions(self.storage.as_ref());
        r.entries.get(..self.tensors).unwrap_or_default()
    }

    /// Number of tensors.
    ///
    /// ```
    /// use safetensors_nano::{Header, Status, Table};
    /// let Status::Complete(h) = Header::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert_eq!(h.len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.tensors
    }

    /// Whether the header has no tensors.
    ///
    /// ```
    /// use safetensors_nano::{Header, Status, Table};
    /// let Status::Complete(h) = Header::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert!(h.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.tensors == 0
    }

    /// The header length N (JSON plus padding).
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table};
    /// # let Status::Complete(h) = Header::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert_eq!(h.header_len(), 2);
    /// ```
    pub fn header_len(&self) -> u64 {
        self.json.len() as u64
    }

    /// File offset where the byte buffer starts: `8 + N`.
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table};
    /// # let Status::Complete(h) = Header::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert_eq!(h.data_start(), 10);
    /// ```
    pub fn data_start(&self) -> u64 {
        self.header_len().saturating_add(8)
    }

    /// Length of the byte buffer the header describes.
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table};
    /// # let Status::Complete(h) = Header::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert_eq!(h.data_len(), 0);
    /// ```
    pub fn data_len(&self) -> u64 {
        self.data_len
    }

    /// The length the whole file must have: `8 + N + data_len`
    /// (saturating at `u64::MAX`, which no real file reaches).
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table};
    /// # let Status::Complete(h) = Header::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert_eq!(h.file_len(), 10);
    /// ```
    pub fn file_len(&self) -> u64 {
        self.data_start().saturating_add(self.data_len)
    }

    /// Checks a file length against the header (docs/format.md R3
    /// header-fits and R13 exact-length).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidHeaderLength`] if the header does not fit, else
    /// [`ErrorKind::MetadataIncompleteBuffer`] if the buffer is not exactly
    /// as long as the tensors need.
    ///
    /// ```
    /// # use safetensors_nano::{ErrorKind, Header, Status, Table};
    /// # let Status::Complete(h) = Header::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert!(h.check_file_len(10).is_ok());
    /// assert_eq!(h.check_file_len(11).unwrap_err().kind(),
    ///            ErrorKind::MetadataIncompleteBuffer { expected: 0, found: 1 });
    /// ```
    pub fn check_file_len(&self, file_len: u64) -> Result<(), Error> {
        let Some(data) = file_len.checked_sub(self.data_start()) else {
            return Err(Error::new(ErrorKind::InvalidHeaderLength {
                header_len: self.header_len(),
                file_len,
            }));
        };
        self.check_data_len(data)
    }

    fn check_data_len(&self, found: u64) -> Result<(), Error> {
        if found == self.data_len {
            Ok(())
        } else {
            Err(Error::new(ErrorKind::MetadataIncompleteBuffer {
                expected: self.data_len,
                found,
            }))
        }
    }

    /// The header's JSON bytes (N bytes, padding included).
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table};
    /// # let Status::Complete(h) = Header::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert_eq!(h.json(), b"{}");
    /// ```
    pub fn json(&self) -> &'a [u8] {
        self.json
    }

    /// Whether the header's text is plain ASCII, without escapes: then
    /// every name and metadata string is its raw bytes
    /// ([`Name::as_str`](crate::Name::as_str) is never `None`), and a byte
    /// offset in the header is also a character offset. Found while
    /// parsing, at no extra cost (on bare metal, where that would cost
    /// code, by a pass over the header).
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table};
    /// let header = |json: &str| {
    ///     let mut file = (json.len() as u64).to_le_bytes().to_vec();
    ///     file.extend_from_slice(json.as_bytes());
    ///     match Header::parse(&file, Table::<1>::new()).unwrap() {
    ///         Status::Complete(h) => h.is_plain_ascii(),
    ///         Status::Partial { .. } => unreachable!(),
    ///     }
    /// };
    /// assert!(header(r#"{"__metadata__":{"k":"v"}}"#));
    /// assert!(!header(r#"{"__metadata__":{"k":"caf\u00e9"}}"#));
    /// assert!(!header(r#"{"__metadata__":{"k":"café"}}"#));
    /// ```
    pub fn is_plain_ascii(&self) -> bool {
        self.plain.get(self.json)
    }

    /// The tensor with this (decoded) name. O(log n).
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table};
    /// # let Status::Complete(h) = Header::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert!(h.tensor("missing").is_none());
    /// ```
    pub fn tensor(&self, name: &str) -> Option<TensorInfo<'a>> {
        let r = table::regions(self.storage.as_ref());
        let entries = r.entries.get(..self.tensors)?;
        let by_name = r.by_name.get(..self.tensors)?;
        let i = names::find(self.json, entries, by_name, name)?;
        self.info(i)
    }

    /// [`tensor`](Header::tensor), as a `Result` whose error is
    /// [`ErrorKind::TensorNotFound`] (the reference's `TensorNotFound`),
    /// for `?`.
    ///
    /// # Errors
    /// [`ErrorKind::TensorNotFound`] when no tensor has this name.
    ///
    /// ```
    /// # use safetensors_nano::{ErrorKind, Header, Status, Table};
    /// # let Status::Complete(h) = Header::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert_eq!(h.try_tensor("missing").unwrap_err().kind(), ErrorKind::TensorNotFound);
    /// ```
    pub fn try_tensor(&self, name: &str) -> Result<TensorInfo<'a>, Error> {
        self.tensor(name)
            .ok_or(Error::new(ErrorKind::TensorNotFound))
    }

    /// The tensors' names (decoded lazily), in data-offset order as
    /// [`iter`](Header::iter) gives them. The reference's `names()`
    /// collects a `Vec` in its hash map's (unspecified) order; here it is
    /// an iterator, so no allocation: `.collect::<Vec<_>>()` when a `Vec`
    /// is wanted, `.to_string()` on a name for an owned `String`.
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table};
    /// let h = br#"{"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#;
    /// let mut prefix = (h.len() as u64).to_le_bytes().to_vec();
    /// prefix.extend_from_slice(h);
    /// let Status::Complete(header) = Header::parse(&prefix, Table::<2>::new()).unwrap() else { unreachable!() };
    /// assert_eq!(header.names().collect::<Vec<_>>(), ["a", "b"]);
    /// ```
    pub fn names(&self) -> impl ExactSizeIterator<Item = Name<'a>> + '_ {
        self.iter().map(|info| info.name())
    }

    fn info(&self, i: u32) -> Option<TensorInfo<'a>> {
        self.entries()
            .get(i as usize)
            .map(|e| TensorInfo::new(self.json, *e, i))
    }

    /// Tensors in data-offset order (the order of their bytes in the file).
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table};
    /// # let Status::Complete(h) = Header::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert_eq!(h.iter().count(), 0);
    /// ```
    pub fn iter(&self) -> Tensors<'a, '_> {
        let r = table::regions(self.storage.as_ref());
        Tensors {
            json: self.json,
            entries: r.entries.get(..self.tensors).unwrap_or_default(),
            order: Order::Indexed(r.by_offset.get(..self.tensors).unwrap_or_default().iter()),
        }
    }

    /// Tensors in the order the header lists them.
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table};
    /// # let Status::Complete(h) = Header::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert_eq!(h.iter_header_order().count(), 0);
    /// ```
    pub fn iter_header_order(&self) -> Tensors<'a, '_> {
        Tensors {
            json: self.json,
            entries: self.entries(),
            order: Order::Sequential(0..self.tensors),
        }
    }

    /// The `__metadata__` map, or `None` when the header has none (absent or `null`).
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table};
    /// # let Status::Complete(h) = Header::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert!(h.metadata().is_none());
    /// ```
    pub fn metadata(&self) -> Option<Metadata<'a, '_>> {
        let MetadataState::Present(pairs) = self.metadata else {
            return None;
        };
        let r = table::regions(self.storage.as_ref());
        let start = r.entries.len().saturating_sub(pairs);
        Some(Metadata::new(
            self.json,
            r.entries.get(start..).unwrap_or_default(),
            r.by_name.get(start..).unwrap_or_default(),
        ))
    }

    /// The storage with the tensor and metadata-pair counts, so that an
    /// oversized table can be shrunk after the parse (`io::alloc`).
    #[cfg(feature = "alloc")]
    pub(crate) fn storage_mut(&mut self) -> (&mut S, usize, usize) {
        let pairs = match self.metadata {
            MetadataState::Present(n) => n,
            _ => 0,
        };
        (&mut self.storage, self.tensors, pairs)
    }

    /// Gives back the storage.
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table};
    /// # let Status::Complete(h) = Header::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap() else { unreachable!() };
    /// let table: Table<1> = h.into_storage();
    /// # let _ = table;
    /// ```
    pub fn into_storage(self) -> S {
        self.storage
    }
}

impl<S: AsRef<[Slot]>> core::fmt::Debug for Header<'_, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Header")
            .field("header_len", &self.header_len())
            .field("tensors", &self.tensors)
            .field("data_len", &self.data_len)
            .finish()
    }
}

enum Order<'t> {
    Indexed(core::slice::Iter<'t, u32>),
    Sequential(core::ops::Range<usize>),
}

/// Iterator over a header's tensors.
///
/// ```
/// # use safetensors_nano::{Header, Status, Table};
/// # let Status::Complete(h) = Header::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap() else { unreachable!() };
/// let names: Vec<String> = h.iter().map(|t| t.name().to_string()).collect();
/// assert!(names.is_empty());
/// ```
pub struct Tensors<'a, 't> {
    json: &'a [u8],
    entries: &'t [Entry],
    order: Order<'t>,
}

impl<'a> Iterator for Tensors<'a, '_> {
    type Item = TensorInfo<'a>;

    fn next(&mut self) -> Option<TensorInfo<'a>> {
        let i = match &mut self.order {
            Order::Indexed(it) => *it.next()? as usize,
            Order::Sequential(range) => range.next()?,
        };
        let entry = self.entries.get(i)?;
        Some(TensorInfo::new(
            self.json,
            *entry,
            u32::try_from(i).unwrap_or(u32::MAX),
        ))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.order {
            Order::Indexed(it) => it.size_hint(),
            Order::Sequential(range) => range.size_hint(),
        }
    }
}

impl ExactSizeIterator for Tensors<'_, '_> {}

/// A validated file: its [`Header`] and its byte buffer.
///
/// ```
/// use safetensors_nano::{SafeTensors, Table};
/// let header = br#"{"w":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#;
/// let mut file = (header.len() as u64).to_le_bytes().to_vec();
/// file.extend_from_slice(header);
/// file.extend_from_slice(&[7, 9]);
/// let st = SafeTensors::parse(&file, Table::<4>::new()).unwrap();
/// assert_eq!(st.tensor("w").unwrap().data(), &[7, 9]);
/// ```
pub struct SafeTensors<'a, S> {
    header: Header<'a, S>,
    data: &'a [u8],
}

impl<'a, S: AsRef<[Slot]> + AsMut<[Slot]>> SafeTensors<'a, S> {
    /// [`Parser::parse`] with default settings.
    ///
    /// # Errors
    /// As [`Parser::parse`].
    ///
    /// ```
    /// use safetensors_nano::{ErrorKind, SafeTensors, Table};
    /// let err = SafeTensors::parse(b"\x01", Table::<1>::new()).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::HeaderTooSmall { len: 1 });
    /// ```
    pub fn parse(file: &'a [u8], storage: S) -> Result<Self, Error> {
        Parser::new().parse(file, storage)
    }
}

impl<'a, S: AsRef<[Slot]>> SafeTensors<'a, S> {
    /// The validated header.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let st = SafeTensors::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap();
    /// assert_eq!(st.header().data_start(), 10);
    /// ```
    pub fn header(&self) -> &Header<'a, S> {
        &self.header
    }

    /// Number of tensors.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let st = SafeTensors::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap();
    /// assert_eq!(st.len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.header.len()
    }

    /// Whether there are no tensors.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let st = SafeTensors::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap();
    /// assert!(st.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.header.is_empty()
    }

    /// The byte buffer (everything after the header).
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let st = SafeTensors::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap();
    /// assert!(st.data().is_empty());
    /// ```
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    fn view(&self, info: TensorInfo<'a>) -> TensorView<'a> {
        let (begin, end) = info.data_offsets();
        // Validation proved begin ≤ end ≤ data.len().
        let data = usize::try_from(begin)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(b, e)| self.data.get(b..e))
            .unwrap_or_default();
        TensorView::new(info, data)
    }

    /// The tensor with this (decoded) name, with its bytes.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let st = SafeTensors::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap();
    /// assert!(st.tensor("x").is_none());
    /// ```
    pub fn tensor(&self, name: &str) -> Option<TensorView<'a>> {
        self.header.tensor(name).map(|info| self.view(info))
    }

    /// [`tensor`](SafeTensors::tensor), as a `Result` whose error is
    /// [`ErrorKind::TensorNotFound`] (the reference's `tensor` returns its
    /// `TensorNotFound`), for `?`.
    ///
    /// # Errors
    /// [`ErrorKind::TensorNotFound`] when no tensor has this name.
    ///
    /// ```
    /// use safetensors_nano::{ErrorKind, SafeTensors, Table};
    /// let st = SafeTensors::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new())?;
    /// let err = st.try_tensor("x").unwrap_err();
    /// assert_eq!((err.kind(), err.kind().reference_name()), (ErrorKind::TensorNotFound, Some("TensorNotFound")));
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn try_tensor(&self, name: &str) -> Result<TensorView<'a>, Error> {
        self.header.try_tensor(name).map(|info| self.view(info))
    }

    /// The tensors' names, in data-offset order (see [`Header::names`]).
    ///
    /// ```
    /// use safetensors_nano::{SafeTensors, Table};
    /// let h = br#"{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#;
    /// let mut file = (h.len() as u64).to_le_bytes().to_vec();
    /// file.extend_from_slice(h);
    /// file.push(1);
    /// let st = SafeTensors::parse(&file, Table::<1>::new())?;
    /// let names: Vec<String> = st.names().map(|n| n.to_string()).collect();
    /// assert_eq!(names, ["w"]);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn names(&self) -> impl ExactSizeIterator<Item = Name<'a>> + '_ {
        self.header.names()
    }

    /// Tensors with their bytes, in data-offset order.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let st = SafeTensors::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap();
    /// assert_eq!(st.iter().count(), 0);
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = TensorView<'a>> + '_ {
        self.header.iter().map(|info| self.view(info))
    }

    /// Tensors with their bytes, in header order.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let st = SafeTensors::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap();
    /// assert_eq!(st.iter_header_order().count(), 0);
    /// ```
    pub fn iter_header_order(&self) -> impl ExactSizeIterator<Item = TensorView<'a>> + '_ {
        self.header.iter_header_order().map(|info| self.view(info))
    }

    /// The `__metadata__` map, if any.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let st = SafeTensors::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap();
    /// assert!(st.metadata().is_none());
    /// ```
    pub fn metadata(&self) -> Option<Metadata<'a, '_>> {
        self.header.metadata()
    }

    /// The header, to shrink its storage (`io::alloc`).
    #[cfg(feature = "alloc")]
    pub(crate) fn header_mut(&mut self) -> &mut Header<'a, S> {
        &mut self.header
    }

    /// Gives back the header (and with it the storage).
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let st = SafeTensors::parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}", Table::<1>::new()).unwrap();
    /// let header = st.into_header();
    /// # let _ = header;
    /// ```
    pub fn into_header(self) -> Header<'a, S> {
        self.header
    }
}

impl<S: AsRef<[Slot]>> core::fmt::Debug for SafeTensors<'_, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SafeTensors")
            .field("header", &self.header)
            .field("data_len", &self.data.len())
            .finish()
    }
}

impl<const N: usize> table::Table<N> {
    /// Parses a whole file into this table.
    ///
    /// # Errors
    /// As [`Parser::parse`].
    ///
    /// ```
    /// let mut table = safetensors_nano::Table::<4>::new();
    /// let st = table.parse(b"\x02\x00\x00\x00\x00\x00\x00\x00{}").unwrap();
    /// assert!(st.is_empty());
    /// ```
    pub fn parse<'a>(&mut self, file: &'a [u8]) -> Result<SafeTensors<'a, &mut [Slot]>, Error> {
        Parser::new().parse(file, self.as_mut())
    }
}
