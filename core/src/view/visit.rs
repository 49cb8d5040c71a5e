//! Seeing each entry as the parser reads it ([`Visitor`]).

use crate::dtype::Dtype;
use crate::view::name::Name;
use crate::view::shape::Shape;

/// Told of each tensor entry and metadata pair as the parser reads them,
/// in header order, by [`Parser::parse_header_with`](crate::Parser::parse_header_with).
///
/// A visitor lets a caller build its own description of a header in the
/// same pass as the parse, where reading a [`Header`](crate::Header)
/// afterwards would find each name's end and each shape's digits again.
/// The entries are seen before the whole header is validated: only a
/// successful parse makes what the visitor saw a valid header (a failed one
/// may have shown some entries). Nothing is shown twice within one parse.
///
/// `()` is the visitor that does nothing.
///
/// ```
/// use safetensors_nano::{Dtype, Name, Parser, Shape, Status, Table, Visitor};
///
/// #[derive(Default)]
/// struct Largest { bytes: u64, rank: usize }
/// impl<'h> Visitor<'h> for Largest {
///     fn tensor(&mut self, _: Name<'h>, _: Dtype, shape: Shape<'h>, (begin, end): (u64, u64)) {
///         // Not validated yet: `end < begin` is possible here.
///         let bytes = end.saturating_sub(begin);
///         if bytes > self.bytes {
///             (self.bytes, self.rank) = (bytes, shape.rank());
///         }
///     }
/// }
///
/// let h = br#"{"a":{"dtype":"U8","shape":[2,3],"data_offsets":[0,6]},"b":{"dtype":"U8","shape":[1],"data_offsets":[6,7]}}"#;
/// let mut prefix = (h.len() as u64).to_le_bytes().to_vec();
/// prefix.extend_from_slice(h);
/// let mut largest = Largest::default();
/// let status = Parser::new().parse_header_with(&prefix, Table::<2>::new(), &mut largest).unwrap();
/// assert!(matches!(status, Status::Complete(_)));
/// assert_eq!((largest.bytes, largest.rank), (6, 2));
/// ```
pub trait Visitor<'h> {
    /// A tensor entry: its name (still escaped, as in the header), dtype,
    /// shape and `data_offsets`.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, Name, Parser, Shape, Table, Visitor};
    /// struct Count(usize);
    /// impl<'h> Visitor<'h> for Count {
    ///     fn tensor(&mut self, _: Name<'h>, _: Dtype, _: Shape<'h>, _: (u64, u64)) {
    ///         self.0 += 1;
    ///     }
    /// }
    /// let h = br#"{"a":{"dtype":"U8","shape":[],"data_offsets":[0,1]}}"#;
    /// let mut prefix = (h.len() as u64).to_le_bytes().to_vec();
    /// prefix.extend_from_slice(h);
    /// let mut count = Count(0);
    /// Parser::new().parse_header_with(&prefix, Table::<1>::new(), &mut count).unwrap();
    /// assert_eq!(count.0, 1);
    /// ```
    fn tensor(&mut self, name: Name<'h>, dtype: Dtype, shape: Shape<'h>, data_offsets: (u64, u64));

    /// A `__metadata__` pair, both strings still escaped. Does nothing
    /// unless implemented.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, Name, Parser, Shape, Table, Visitor};
    /// struct Keys(Vec<String>);
    /// impl<'h> Visitor<'h> for Keys {
    ///     fn tensor(&mut self, _: Name<'h>, _: Dtype, _: Shape<'h>, _: (u64, u64)) {}
    ///     fn metadata(&mut self, key: Name<'h>, _value: Name<'h>) {
    ///         self.0.push(key.to_string());
    ///     }
    /// }
    /// let h = br#"{"__metadata__":{"b":"1","a":"2"}}"#;
    /// let mut prefix = (h.len() as u64).to_le_bytes().to_vec();
    /// prefix.extend_from_slice(h);
    /// let mut keys = Keys(Vec::new());
    /// Parser::new().parse_header_with(&prefix, Table::<2>::new(), &mut keys).unwrap();
    /// assert_eq!(keys.0, ["b", "a"]);
    /// ```
    fn metadata(&mut self, key: Name<'h>, value: Name<'h>) {
        let _ = (key, value);
    }
}

/// The visitor that does nothing: what every other parse uses.
///
/// ```
/// use safetensors_nano::{Parser, Status, Table};
/// let prefix = b"\x02\x00\x00\x00\x00\x00\x00\x00{}";
/// let status = Parser::new().parse_header_with(prefix, Table::<1>::new(), &mut ()).unwrap();
/// assert!(matches!(status, Status::Complete(_)));
/// ```
impl<'h> Visitor<'h> for () {
    #[inline(always)]
    fn tensor(&mut self, _: Name<'h>, _: Dtype, _: Shape<'h>, _: (u64, u64)) {}

    #[inline(always)]
    fn metadata(&mut self, _: Name<'h>, _: Name<'h>) {}
}
