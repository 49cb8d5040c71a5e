//! One `Copy` error type for everything the crate does: a kind, and where.
//!
//! The kinds are one hand-written list (`kinds.rs`): per kind its doc, the
//! numbers it carries and its message template. `error_kinds!` below makes
//! the enum and a private table that `Display` renders from; the wasm crate
//! includes the same list to write the npm package's tables, so the two
//! render the same messages.

use core::fmt;

use crate::dtype::Dtype;
use crate::view::name::Name;

/// A JSON construct the header parser wanted at an error position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Expected {
    /// Any JSON value.
    Value,
    /// A `{`.
    Object,
    /// A `[`.
    Array,
    /// A string (`"`).
    String,
    /// A `:` after an object key.
    Colon,
    /// A `,` or `}` inside an object.
    CommaOrObjectEnd,
    /// A `,` or `]` inside an array.
    CommaOrArrayEnd,
    /// A digit.
    Digit,
    /// A non-negative integer (no sign, fraction or exponent).
    Integer,
    /// Nothing but JSON whitespace after the header object.
    End,
}

impl Expected {
    /// Every `Expected`, in declaration order: an error's wire number for
    /// one is its index here.
    ///
    /// ```
    /// use safetensors_nano::Expected;
    /// assert_eq!(Expected::ALL[Expected::Colon as usize], Expected::Colon);
    /// ```
    pub const ALL: [Expected; 10] = [
        Expected::Value,
        Expected::Object,
        Expected::Array,
        Expected::String,
        Expected::Colon,
        Expected::CommaOrObjectEnd,
        Expected::CommaOrArrayEnd,
        Expected::Digit,
        Expected::Integer,
        Expected::End,
    ];

    /// How an error message names it, e.g. `"a string"`.
    ///
    /// ```
    /// assert_eq!(safetensors_nano::Expected::CommaOrArrayEnd.describe(), "',' or ']'");
    /// ```
    pub const fn describe(self) -> &'static str {
        match self {
            Expected::Value => "a JSON value",
            Expected::Object => "an object",
            Expected::Array => "an array",
            Expected::String => "a string",
            Expected::Colon => "':'",
            Expected::CommaOrObjectEnd => "',' or '}'",
            Expected::CommaOrArrayEnd => "',' or ']'",
            Expected::Digit => "a digit",
            Expected::Integer => "a non-negative integer",
            Expected::End => "the end of the header",
        }
    }
}

/// One of the three required fields of a tensor entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Field {
    /// `"dtype"`.
    Dtype,
    /// `"shape"`.
    Shape,
    /// `"data_offsets"`.
    DataOffsets,
}

impl Field {
    /// Every field, in declaration order: an error's wire number for one
    /// is its index here.
    ///
    /// ```
    /// use safetensors_nano::Field;
    /// assert_eq!(Field::ALL[Field::Shape as usize], Field::Shape);
    /// ```
    pub const ALL: [Field; 3] = [Field::Dtype, Field::Shape, Field::DataOffsets];

    /// The field's key as written in a header.
    ///
    /// ```
    /// assert_eq!(safetensors_nano::Field::DataOffsets.key(), "data_offsets");
    /// ```
    pub const fn key(self) -> &'static str {
        match self {
            Field::Dtype => "dtype",
            Field::Shape => "shape",
            Field::DataOffsets => "data_offsets",
        }
    }
}

/// What one number an error kind carries is, which decides how its
/// message shows it (see [`KindInfo::template`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WireType {
    /// An integer, shown in decimal (or as the template's format code says).
    Number,
    /// An [`Expected`], as its index in [`Expected::ALL`]; shown as
    /// [`Expected::describe`] says.
    Expected,
    /// A [`Field`], as its index in [`Field::ALL`]; shown as its key.
    Field,
    /// A [`Dtype`], as its index in [`Dtype::ALL`]; shown as its name.
    Dtype,
}

/// One number an error kind carries: the variant field's name and type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WireField {
    /// The variant field's name.
    pub(crate) name: &'static str,
    /// What it is.
    pub(crate) ty: WireType,
}

/// One row of the error-kind table: a kind's name, the numbers it
/// carries and its message template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KindInfo {
    /// The variant name ([`ErrorKind::name`]).
    pub(crate) name: &'static str,
    /// The numbers the kind carries, in wire order (the variant's field
    /// order): [`ErrorKind::fields`] gives their values.
    pub(crate) fields: &'static [WireField],
    /// The message, with `{name}` where the field `name` goes: a
    /// [`WireType::Number`] in decimal, `{name:x}` in lower-case hex,
    /// `{name:02x}` in hex of at least two digits, `{name:or_more}` in
    /// decimal followed by `" or more"` when it is 3 or more (a count that
    /// stops at 3); the other types as [`WireType`] says.
    pub(crate) template: &'static str,
}

impl KindInfo {
    /// The message of this kind for these numbers (in wire order).
    pub(crate) const fn message(&'static self, values: [u64; 3]) -> Message {
        Message { info: self, values }
    }
}

/// A kind's message for some numbers ([`KindInfo::message`]), rendered by
/// `Display` from the template.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Message {
    info: &'static KindInfo,
    values: [u64; 3],
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.info.template;
        while let Some((text, after)) = rest.split_once('{') {
            f.write_str(text)?;
            let (spec, after) = after.split_once('}').unwrap_or((after, ""));
            rest = after;
            let (name, code) = spec.split_once(':').unwrap_or((spec, ""));
            let mut fields = self.info.fields.iter().zip(self.values);
            // (A test checks that every template names its own fields.)
            let Some((field, v)) = fields.find(|(field, _)| field.name == name) else {
                continue;
            };
            let index = usize::try_from(v).unwrap_or(usize::MAX);
            let named = match field.ty {
                WireType::Number => None,
                WireType::Expected => Some(Expected::ALL.get(index).map(|e| e.describe())),
                WireType::Field => Some(Field::ALL.get(index).map(|e| e.key())),
                WireType::Dtype => Some(Dtype::ALL.get(index).map(|d| d.name())),
            };
            match (named, code) {
                (Some(text), _) => f.write_str(text.unwrap_or("?")),
                (None, "x") => write!(f, "{v:x}"),
                (None, "02x") => write!(f, "{v:02x}"),
                (None, "or_more") if v >= 3 => write!(f, "{v} or more"),
                (None, _) => write!(f, "{v}"),
            }?;
        }
        f.write_str(rest)
    }
}

/// What an error kind's field is on the wire: its [`WireType`] and its
/// value as a number.
trait Wire: Copy {
    const TYPE: WireType;
    fn wire(self) -> u64;
}

impl Wire for u8 {
    const TYPE: WireType = WireType::Number;
    #[inline(always)]
    fn wire(self) -> u64 {
        u64::from(self)
    }
}

impl Wire for u32 {
    const TYPE: WireType = WireType::Number;
    #[inline(always)]
    fn wire(self) -> u64 {
        u64::from(self)
    }
}

impl Wire for u64 {
    const TYPE: WireType = WireType::Number;
    #[inline(always)]
    fn wire(self) -> u64 {
        self
    }
}

impl Wire for Expected {
    const TYPE: WireType = WireType::Expected;
    #[inline(always)]
    fn wire(self) -> u64 {
        self as u64
    }
}

impl Wire for Field {
    const TYPE: WireType = WireType::Field;
    #[inline(always)]
    fn wire(self) -> u64 {
        self as u64
    }
}

impl Wire for Dtype {
    const TYPE: WireType = WireType::Dtype;
    #[inline(always)]
    fn wire(self) -> u64 {
        self as u64
    }
}

/// The three wire numbers of a kind's fields, zero-padded (more than three
/// does not compile: the wire has room for three).
macro_rules! three {
    () => {
        [0, 0, 0]
    };
    ($a:expr) => {
        [$a, 0, 0]
    };
    ($a:expr, $b:expr) => {
        [$a, $b, 0]
    };
    ($a:expr, $b:expr, $c:expr) => {
        [$a, $b, $c]
    };
}

/// `Some` of a reference implementation's error name, or `None`.
macro_rules! reference {
    () => {
        None
    };
    ($name:literal) => {
        Some($name)
    };
}

/// Declares [`ErrorKind`] and [`ErrorKind::TABLE`] from one list: per kind
/// its doc, its fields (their docs, names and types, in wire order), the
/// reference implementation's name for it (if it has one) and its message
/// template.
macro_rules! error_kinds {
    ($(
        $(#[doc = $doc:literal])*
        $kind:ident $({
            $($(#[doc = $fdoc:literal])* $field:ident: $fty:ty),* $(,)?
        })?
        $(reference $reference:literal)?
        => $template:literal;
    )*) => {
        /// What went wrong. Variants carry the numbers involved (expected vs found).
        ///
        /// [`ErrorKind::reference_name`] maps each kind to the error the reference
        /// implementation gives for the same input, where it has one.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        #[non_exhaustive]
        pub enum ErrorKind {
            $(
                $(#[doc = $doc])*
                $kind $({ $($(#[doc = $fdoc])* $field: $fty,)* })?,
            )*
        }

        /// The kinds' numbers ([`ErrorKind::code`]): their declaration order.
        #[repr(u8)]
        enum Code {
            $($kind,)*
        }

        impl ErrorKind {
            /// The table of the kinds, indexed by [`code`](ErrorKind::code).
            pub(crate) const TABLE: &'static [KindInfo] = &[$(
                KindInfo {
                    name: stringify!($kind),
                    fields: &[$($(WireField { name: stringify!($field), ty: <$fty as Wire>::TYPE },)*)?],
                    template: $template,
                },
            )*];

            /// The kind's number: its place in the declaration, stable for
            /// bindings.
            ///
            /// ```
            /// use safetensors_nano::ErrorKind;
            /// assert_eq!(ErrorKind::HeaderTooSmall { len: 0 }.code(), 0);
            /// assert!(ErrorKind::Sink.code() < ErrorKind::COUNT);
            /// ```
            pub const fn code(&self) -> u8 {
                match self {
                    $(ErrorKind::$kind { .. } => Code::$kind as u8,)*
                }
            }

            /// The variant name, e.g. `"InvalidOffset"` — stable, for tools and bindings.
            ///
            /// ```
            /// use safetensors_nano::ErrorKind;
            /// assert_eq!(ErrorKind::NestingTooDeep.name(), "NestingTooDeep");
            /// ```
            pub const fn name(&self) -> &'static str {
                match self {
                    $(ErrorKind::$kind { .. } => stringify!($kind),)*
                }
            }

            /// The name of the `SafeTensorError` variant that the reference
            /// implementation returns for the same input, or `None` for kinds the
            /// reference has no counterpart for (it accepts those inputs, or the
            /// operation does not exist there).
            ///
            /// ```
            /// use safetensors_nano::ErrorKind;
            /// assert_eq!(ErrorKind::InvalidUtf8.reference_name(), Some("InvalidHeader"));
            /// assert_eq!(ErrorKind::DuplicateTensorName.reference_name(), None);
            /// ```
            pub const fn reference_name(&self) -> Option<&'static str> {
                match self {
                    $(ErrorKind::$kind { .. } => reference!($($reference)?),)*
                }
            }

            /// The numbers the kind carries, in the variant's field order,
            /// zero-padded to three: integers as
            /// they are, an [`Expected`], [`Field`] or [`Dtype`] as its
            /// index in its `ALL`.
            ///
            /// ```
            /// use safetensors_nano::{Dtype, ErrorKind};
            /// let kind = ErrorKind::DtypeMismatch { found: Dtype::I8, asked: Dtype::F32 };
            /// assert_eq!(kind.fields(), [Dtype::I8 as u64, Dtype::F32 as u64, 0]);
            /// ```
            #[inline]
            pub fn fields(&self) -> [u64; 3] {
                // (One arm for all the kinds without fields: an arm each
                // would be as many copies of the same code in the .wasm.)
                match *self {
                    $($(ErrorKind::$kind { $($field),* } => three!($(Wire::wire($field)),*),)?)*
                    _ => [0; 3],
                }
            }
        }
    };
}

include!("kinds.rs");

impl ErrorKind {
    /// How many kinds there are: every [`code`](ErrorKind::code) is below.
    ///
    /// ```
    /// use safetensors_nano::ErrorKind;
    /// assert_eq!(ErrorKind::COUNT, ErrorKind::Sink.code() + 1);
    /// ```
    #[allow(clippy::cast_possible_truncation)] // checked below
    pub const COUNT: u8 = ErrorKind::TABLE.len() as u8;

    /// This kind's row of [`ErrorKind::TABLE`].
    pub(crate) fn info(&self) -> &'static KindInfo {
        // (Never used: the table has a row per code.)
        const NONE: &KindInfo = &KindInfo {
            name: "",
            fields: &[],
            template: "",
        };
        ErrorKind::TABLE
            .get(usize::from(self.code()))
            .unwrap_or(NONE)
    }
}

const _: () = assert!(ErrorKind::TABLE.len() < 256, "kind codes are u8");

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.info().message(self.fields()), f)
    }
}

/// Which tensor an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TensorRef {
    /// A name in the header: the raw (still escaped) string content starts at
    /// this header byte offset and is `len` bytes long.
    Header {
        /// Header byte offset of the first byte after the opening quote.
        start: u32,
        /// Raw length in bytes.
        len: u32,
    },
    /// The tensor at this index in the caller's list (writer errors).
    Index(u32),
}

const NO_OFFSET: u32 = u32::MAX;

/// An error: a [`kind`](Error::kind), the header byte
/// [`offset`](Error::offset) where it was found, and the
/// [`tensor`](Error::tensor) it concerns.
///
/// Offsets count from the first byte of the JSON header (file byte 8).
/// `Error` is `Copy` and carries no lifetime; resolve the tensor name with
/// [`Error::tensor_name`] given the header bytes.
///
/// ```
/// use safetensors_nano::{ErrorKind, Table};
/// let mut file = Vec::new();
/// let header = br#"{"x":{"dtype":"F33","shape":[],"data_offsets":[0,4]}}"#;
/// file.extend_from_slice(&(header.len() as u64).to_le_bytes());
/// file.extend_from_slice(header);
/// file.extend_from_slice(&[0; 4]);
/// let err = Table::<4>::new().parse(&file).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::UnknownDtype);
/// assert_eq!(err.offset(), Some(14));
/// assert_eq!(err.tensor_name(&file[8..]).unwrap(), "x");
/// assert_eq!(err.to_string(), "unknown dtype at header byte 14 (tensor at header bytes 2..3)");
/// assert_eq!(err.display_in(&file[8..]).to_string(), r#"unknown dtype at header byte 14 (tensor "x")"#);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Error {
    kind: ErrorKind,
    /// Header byte offset, or [`NO_OFFSET`]: headers are at most
    /// 100,000,000 bytes, so `u32` holds every offset and keeps `Error` small.
    offset: u32,
    tensor: Option<TensorRef>,
}

impl Error {
    /// An error of this kind with no position.
    ///
    /// ```
    /// use safetensors_nano::{Error, ErrorKind};
    /// assert_eq!(Error::new(ErrorKind::Sink).kind(), ErrorKind::Sink);
    /// ```
    pub const fn new(kind: ErrorKind) -> Error {
        Error {
            kind,
            offset: NO_OFFSET,
            tensor: None,
        }
    }

    pub(crate) fn at(kind: ErrorKind, offset: usize) -> Error {
        Error {
            kind,
            offset: match u32::try_from(offset) {
                Ok(o) if o != NO_OFFSET => o,
                _ => NO_OFFSET,
            },
            tensor: None,
        }
    }

    pub(crate) const fn with_tensor(mut self, tensor: TensorRef) -> Error {
        self.tensor = Some(tensor);
        self
    }

    /// What went wrong.
    ///
    /// ```
    /// use safetensors_nano::{Error, ErrorKind};
    /// assert_eq!(Error::new(ErrorKind::InvalidUtf8).kind().reference_name(), Some("InvalidHeader"));
    /// ```
    pub const fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// Header byte offset (0 = first byte after the 8-byte length) where the
    /// problem was found, when it has one.
    ///
    /// ```
    /// use safetensors_nano::{Error, ErrorKind};
    /// assert_eq!(Error::new(ErrorKind::Sink).offset(), None);
    /// ```
    pub const fn offset(&self) -> Option<u64> {
        if self.offset == NO_OFFSET {
            None
        } else {
            Some(self.offset as u64)
        }
    }

    /// The tensor this error concerns, when there is one.
    ///
    /// ```
    /// use safetensors_nano::{Error, ErrorKind};
    /// assert_eq!(Error::new(ErrorKind::Sink).tensor(), None);
    /// ```
    pub const fn tensor(&self) -> Option<TensorRef> {
        self.tensor
    }

    /// The name of the tensor this error concerns, given the header bytes
    /// (the `N` bytes after the length prefix) the error came from.
    /// `None` when the error names no tensor in a header.
    ///
    /// ```
    /// use safetensors_nano::{Error, ErrorKind};
    /// assert!(Error::new(ErrorKind::Sink).tensor_name(b"{}").is_none());
    /// ```
    pub fn tensor_name<'h>(&self, header: &'h [u8]) -> Option<Name<'h>> {
        match self.tensor? {
            TensorRef::Header { start, len } => {
                let start = usize::try_from(start).ok()?;
                let end = start.checked_add(usize::try_from(len).ok()?)?;
                header.get(start..end).map(Name::from_raw)
            }
            TensorRef::Index(_) => None,
        }
    }
}

impl Error {
    /// This error shown with its tensor's name, given the header bytes
    /// (the `N` bytes after the length prefix, e.g.
    /// [`Header::json`](crate::Header::json)) it came from: `… (tensor
    /// "x")` where `Display` says `… (tensor at header bytes 2..3)`.
    /// Allocates nothing; an error about no tensor in a header shows as
    /// `Display` does.
    ///
    /// ```
    /// use safetensors_nano::{ErrorKind, Table};
    /// let header = br#"{"x":{"dtype":"F33","shape":[],"data_offsets":[0,4]}}"#;
    /// let mut file = (header.len() as u64).to_le_bytes().to_vec();
    /// file.extend_from_slice(header);
    /// file.extend_from_slice(&[0; 4]);
    /// let err = Table::<4>::new().parse(&file).unwrap_err();
    /// assert_eq!(err.display_in(header).to_string(), r#"unknown dtype at header byte 14 (tensor "x")"#);
    /// ```
    pub fn display_in<'h>(&self, header: &'h [u8]) -> InHeader<'h> {
        InHeader {
            error: *self,
            header,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.kind, f)?;
        if let Some(offset) = self.offset() {
            write!(f, " at header byte {offset}")?;
        }
        match self.tensor {
            Some(TensorRef::Header { start, len }) => write!(
                f,
                " (tensor at header bytes {start}..{})",
                u64::from(start).saturating_add(u64::from(len))
            ),
            Some(TensorRef::Index(i)) => write!(f, " (tensor #{i})"),
            None => Ok(()),
        }
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Error {
        Error::new(kind)
    }
}

/// On every build, `no_std` included (`core::error::Error`), so `?` turns
/// an `Error` into a `Box<dyn std::error::Error>` with default features.
///
/// ```
/// fn open(file: &[u8]) -> Result<usize, Box<dyn std::error::Error>> {
///     let st = safetensors_nano::SafeTensors::parse(file, safetensors_nano::Table::<4>::new())?;
///     Ok(st.len())
/// }
/// assert_eq!(open(b"\x01").unwrap_err().to_string(), "file of 1 bytes is shorter than the 8-byte length prefix");
/// ```
impl core::error::Error for Error {}

/// An [`Error`] shown with the name of the tensor it concerns, from
/// [`Error::display_in`].
///
/// ```
/// use safetensors_nano::{Error, ErrorKind};
/// let shown = Error::new(ErrorKind::Sink).display_in(b"{}");
/// assert_eq!(shown.to_string(), "the output sink failed");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct InHeader<'h> {
    error: Error,
    header: &'h [u8],
}

impl fmt::Display for InHeader<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = &self.error;
        match e.tensor_name(self.header) {
            Some(name) => {
                fmt::Display::fmt(&e.kind, f)?;
                if let Some(offset) = e.offset() {
                    write!(f, " at header byte {offset}")?;
                }
                write!(f, " (tensor {name:?})")
            }
            None => fmt::Display::fmt(e, f),
        }
    }
}

/// Parses a dtype's name as the header spells it (case-sensitive, as
/// [`Dtype::from_name`]).
///
/// # Errors
/// An [`Error`](crate::Error) of kind
/// [`ErrorKind::UnknownDtype`](crate::ErrorKind::UnknownDtype) for any
/// other string.
///
/// ```
/// use safetensors_nano::{Dtype, ErrorKind};
/// assert_eq!("BF16".parse::<Dtype>()?, Dtype::BF16);
/// assert_eq!("bf16".parse::<Dtype>().unwrap_err().kind(), ErrorKind::UnknownDtype);
/// # Ok::<(), safetensors_nano::Error>(())
/// ```
// (Here, not in dtype.rs: the error table names dtypes, so `dtype` comes
// before `error` in the modules' dependency order.)
impl core::str::FromStr for Dtype {
    type Err = Error;

    fn from_str(s: &str) -> Result<Dtype, Self::Err> {
        Dtype::from_name(s.as_bytes()).ok_or(Error::new(ErrorKind::UnknownDtype))
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorKind::*;
    use super::*;
    use std::string::ToString;

    /// A sample of every kind (and of each format code) with its message.
    const SAMPLES: &[(ErrorKind, &str)] = &[
        (
            HeaderTooSmall { len: 3 },
            "file of 3 bytes is shorter than the 8-byte length prefix",
        ),
        (
            HeaderTooLarge {
                header_len: 100_000_001,
                limit: 100_000_000,
            },
            "header of 100000001 bytes is over the limit of 100000000 bytes",
        ),
        (
            InvalidHeaderLength {
                header_len: 1 << 40,
                file_len: 20,
            },
            "header of 1099511627776 bytes does not fit in a file of 20 bytes",
        ),
        (InvalidUtf8, "header is not valid UTF-8"),
        (
            UnexpectedEnd {
                expected: Expected::Value,
            },
            "header ends where a JSON value was expected",
        ),
        (
            UnexpectedEnd {
                expected: Expected::End,
            },
            "header ends where the end of the header was expected",
        ),
        (
            UnexpectedByte {
                found: b'x',
                expected: Expected::Colon,
            },
            "unexpected byte 0x78 where ':' was expected",
        ),
        (
            UnexpectedByte {
                found: 7,
                expected: Expected::CommaOrObjectEnd,
            },
            "unexpected byte 0x07 where ',' or '}' was expected",
        ),
        (
            UnexpectedByte {
                found: 0xff,
                expected: Expected::CommaOrArrayEnd,
            },
            "unexpected byte 0xff where ',' or ']' was expected",
        ),
        (InvalidEscape, "invalid escape in string"),
        (LoneSurrogate, "\\u escape of a lone surrogate"),
        (ControlCharacterInString, "raw control character in string"),
        (InvalidNumber, "invalid or out-of-range number"),
        (
            NestingTooDeep,
            "arrays and objects nested too deep (limit 128)",
        ),
        (MetadataNotObject, "__metadata__ is not an object or null"),
        (MetadataValueNotString, "__metadata__ value is not a string"),
        (DuplicateMetadata, "__metadata__ appears twice"),
        (DuplicateMetadataKey, "metadata key appears twice"),
        (TensorNotObject, "tensor entry is not an object"),
        (DtypeNotString, "dtype is not a string"),
        (UnknownDtype, "unknown dtype"),
        (
            MissingField {
                field: Field::DataOffsets,
            },
            "missing field \"data_offsets\"",
        ),
        (
            DuplicateField {
                field: Field::Dtype,
            },
            "field \"dtype\" appears twice",
        ),
        (
            DataOffsetsNotPair { found: 1 },
            "data_offsets holds 1 integers, not 2",
        ),
        (
            DataOffsetsNotPair { found: 3 },
            "data_offsets holds 3 or more integers, not 2",
        ),
        (IntegerTooLarge, "integer larger than 2^64-1"),
        (DuplicateTensorName, "tensor name appears twice"),
        (
            CapacityExceeded {
                capacity: 4,
                needed: 9,
            },
            "table of 4 slots is too small: this header needs 9, one per tensor and per \
             metadata pair (use a larger Table::<N> or Vec<Slot>, or parse_alloc)",
        ),
        (
            InvalidOffset {
                expected_begin: 8,
                begin: 4,
                end: 12,
            },
            "data_offsets [4, 12] do not continue at 8",
        ),
        (ValidationOverflow, "element or bit count overflows 64 bits"),
        (
            MisalignedSlice { elements: 3 },
            "3 sub-byte elements are not a whole number of bytes",
        ),
        (
            TensorInvalidInfo {
                expected: 16,
                found: u64::MAX,
            },
            "data_offsets span 18446744073709551615 bytes but shape and dtype need 16",
        ),
        (
            MetadataIncompleteBuffer {
                expected: 10,
                found: 11,
            },
            "byte buffer is 11 bytes but the header describes 10",
        ),
        (TensorNotFound, "no tensor has this name"),
        (
            DtypeMismatch {
                found: Dtype::F8_E4M3FNUZ,
                asked: Dtype::U8,
            },
            "dtype F8_E4M3FNUZ cannot be read as U8",
        ),
        (
            Misaligned { align: 8 },
            "tensor data is not 8-byte aligned for a typed view: copy it with copy_into instead",
        ),
        (
            LengthMismatch {
                expected: 3,
                found: 2,
            },
            "output of 2 elements where 3 are needed",
        ),
        (
            ByteLengthMismatch {
                expected: 3,
                found: 2,
            },
            "output buffer of 2 bytes where exactly 3 are needed",
        ),
        (
            TooLargeForTarget,
            "length does not fit in this target's usize",
        ),
        (
            ReadOutOfRange { end: 9, len: 8 },
            "read up to byte 9 of a tensor of 8 bytes",
        ),
        (
            Storage {
                address: 0x0800_1234,
                len: 64,
            },
            "storage failed to read 64 bytes at address 0x8001234",
        ),
        (
            SliceTooManyIndices { rank: 2, given: 3 },
            "3 slice indices for a tensor of rank 2",
        ),
        (
            SliceOutOfRange {
                dim: 1,
                value: 5,
                size: 4,
            },
            "slice bound 5 out of range for dimension 1 of size 4",
        ),
        (
            SliceInvalidRange { dim: 0 },
            "slice range on dimension 0 is reversed or has step 0",
        ),
        (
            SliceSubByte,
            "slice of a sub-byte dtype does not fall on byte boundaries",
        ),
        (
            BufferTooSmall {
                needed: 100,
                available: 99,
            },
            "output buffer of 99 bytes is too small: 100 needed",
        ),
        (ReservedName, "a tensor may not be named __metadata__"),
        (
            DataLengthMismatch {
                expected: 12,
                found: 8,
            },
            "tensor data is 8 bytes but shape and dtype need 12",
        ),
        (
            DataOutOfOrder,
            "tensor data arrived out of the planned order",
        ),
        (Sink, "the output sink failed"),
    ];

    #[test]
    fn display_renders_each_kind_from_its_template() {
        for (kind, text) in SAMPLES {
            assert_eq!(kind.to_string(), *text, "{kind:?}");
        }
        let mut sampled: std::vec::Vec<&str> = SAMPLES.iter().map(|(k, _)| k.name()).collect();
        sampled.dedup();
        let names: std::vec::Vec<&str> = ErrorKind::TABLE.iter().map(|i| i.name).collect();
        assert_eq!(sampled, names, "a sample of every kind, in table order");
    }

    #[test]
    fn codes_names_and_fields_follow_the_table() {
        for (kind, _) in SAMPLES {
            let info = &ErrorKind::TABLE[usize::from(kind.code())];
            assert_eq!(info.name, kind.name());
            assert_eq!(info, kind.info());
            assert!(kind.code() < ErrorKind::COUNT);
            // The Debug form lists the fields in declaration (wire) order.
            let debug = std::format!("{kind:?}");
            let mut at = 0;
            for (field, value) in info.fields.iter().zip(kind.fields()) {
                let key = std::format!("{}: ", field.name);
                at += debug[at..].find(&key).expect("field in order") + key.len();
                if field.ty == WireType::Number {
                    assert!(debug[at..].starts_with(&value.to_string()), "{debug}");
                }
            }
            assert!(kind.fields()[info.fields.len()..].iter().all(|&v| v == 0));
        }
    }

    /// Every `{…}` of a template names one of its kind's fields with a
    /// format code its type takes, and every field is shown.
    #[test]
    fn templates_name_their_own_fields() {
        for info in ErrorKind::TABLE {
            let mut shown = std::vec![false; info.fields.len()];
            let mut rest = info.template;
            while let Some((_, after)) = rest.split_once('{') {
                let (spec, after) = after.split_once('}').expect("closed");
                rest = after;
                let (name, code) = spec.split_once(':').unwrap_or((spec, ""));
                let i = info.fields.iter().position(|f| f.name == name);
                let i = i.unwrap_or_else(|| panic!("{}: no field {name}", info.name));
                shown[i] = true;
                let codes: &[&str] = match info.fields[i].ty {
                    WireType::Number => &["", "x", "02x", "or_more"],
                    _ => &[""],
                };
                assert!(codes.contains(&code), "{}: {spec}", info.name);
            }
            assert!(!rest.contains('}'), "{}", info.name);
            assert!(shown.iter().all(|&s| s), "{}: a field not shown", info.name);
        }
    }
}
