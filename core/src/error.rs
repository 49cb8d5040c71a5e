//! One `Copy` error type for everything the crate does: a kind, and where.

use core::fmt;

use crate::dtype::Dtype;
use crate::name::Name;

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
    const fn describe(self) -> &'static str {
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

/// What went wrong. Variants carry the numbers involved (expected vs found).
///
/// [`ErrorKind::reference_name`] maps each kind to the error the reference
/// implementation gives for the same input, where it has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ErrorKind {
    // ---- framing (R1–R4) ----
    /// The input is shorter than the 8-byte length prefix (R1).
    HeaderTooSmall {
        /// Bytes available.
        len: u64,
    },
    /// The declared header length is over the limit (R2).
    HeaderTooLarge {
        /// Declared header length N.
        header_len: u64,
        /// The limit in force.
        limit: u64,
    },
    /// The declared header does not fit in the file (R3).
    InvalidHeaderLength {
        /// Declared header length N.
        header_len: u64,
        /// File length.
        file_len: u64,
    },
    /// The header is not valid UTF-8 (R4); the offset is the first bad byte.
    InvalidUtf8,

    // ---- JSON syntax (R5, R6) ----
    /// The header ended inside a JSON value.
    UnexpectedEnd {
        /// What was wanted there.
        expected: Expected,
    },
    /// A byte that cannot start or continue what the grammar wants.
    UnexpectedByte {
        /// The byte found.
        found: u8,
        /// What was wanted there.
        expected: Expected,
    },
    /// A backslash escape that JSON does not have, or a bad `\u` hex digit.
    InvalidEscape,
    /// A `\u` escape of a surrogate that is not part of a valid pair.
    LoneSurrogate,
    /// A raw control character (below 0x20) inside a string.
    ControlCharacterInString,
    /// A number that JSON does not allow (leading zero, missing digits), or
    /// one too large to represent.
    InvalidNumber,
    /// Arrays and objects nested deeper than the limit (the reference's 128).
    NestingTooDeep,

    // ---- header schema (R7, R8) ----
    /// `__metadata__` is not `null` or an object.
    MetadataNotObject,
    /// A `__metadata__` value is not a string.
    MetadataValueNotString,
    /// `__metadata__` appears twice.
    DuplicateMetadata,
    /// A metadata key appears twice (the reference keeps the last one).
    DuplicateMetadataKey,
    /// A tensor entry is not a JSON object (the reference also takes an array).
    TensorNotObject,
    /// The dtype is not a string (the reference also takes `{"F32":null}`).
    DtypeNotString,
    /// The dtype string is not one of the 22 names.
    UnknownDtype,
    /// A required field is missing from a tensor entry.
    MissingField {
        /// Which field.
        field: Field,
    },
    /// A required field appears twice in a tensor entry.
    DuplicateField {
        /// Which field.
        field: Field,
    },
    /// `data_offsets` does not hold exactly two integers.
    DataOffsetsNotPair {
        /// How many integers it holds (counting stops at 3).
        found: u8,
    },
    /// An integer is larger than `u64::MAX`.
    IntegerTooLarge,
    /// Two tensors have the same name (after unescaping).
    DuplicateTensorName,
    /// The caller's table is too small for this header.
    CapacityExceeded {
        /// Slots given.
        capacity: u64,
        /// Slots this header needs (tensors plus metadata entries).
        needed: u64,
    },

    // ---- layout validation (R9–R13) ----
    /// A tensor does not start where the previous one (in offset order)
    /// ends, or ends before it begins (R9).
    InvalidOffset {
        /// Where it had to begin.
        expected_begin: u64,
        /// Declared begin.
        begin: u64,
        /// Declared end.
        end: u64,
    },
    /// The element count or bit count overflows `u64` (R10).
    ValidationOverflow,
    /// A sub-byte tensor's bit count is not a multiple of 8 (R11).
    MisalignedSlice {
        /// Elements in the tensor.
        elements: u64,
    },
    /// `end − begin` is not the size that shape × dtype gives (R12).
    TensorInvalidInfo {
        /// Bytes that shape × dtype need.
        expected: u64,
        /// `end − begin`.
        found: u64,
    },
    /// The byte buffer is not exactly as long as the tensors need (R13).
    MetadataIncompleteBuffer {
        /// Buffer length the header describes.
        expected: u64,
        /// Buffer length present.
        found: u64,
    },

    // ---- access ----
    /// The tensor's dtype is not the one asked for.
    DtypeMismatch {
        /// The tensor's dtype.
        found: Dtype,
    },
    /// The data is not aligned for a typed view; use a copying accessor.
    Misaligned {
        /// Alignment the view needs.
        align: u8,
    },
    /// An output buffer has the wrong length.
    LengthMismatch {
        /// Length needed.
        expected: u64,
        /// Length given.
        found: u64,
    },
    /// A length does not fit in this target's `usize`.
    TooLargeForTarget,
    /// A read asked for bytes past the end of a tensor's data.
    ReadOutOfRange {
        /// Byte offset, within the tensor, where the read would end.
        end: u64,
        /// Bytes of data the tensor has.
        len: u64,
    },

    // ---- storage (feature `embedded-storage`) ----
    /// The storage driver failed to read, or the bytes lie beyond its
    /// capacity or its addressing.
    Storage {
        /// Storage address where the failed read starts.
        address: u64,
        /// Bytes asked for.
        len: u64,
    },

    // ---- slicing ----
    /// More slice indices than the tensor has dimensions.
    SliceTooManyIndices {
        /// Tensor rank.
        rank: u32,
        /// Indices given.
        given: u32,
    },
    /// A slice index or bound is past the end of its dimension.
    SliceOutOfRange {
        /// Dimension.
        dim: u32,
        /// Offending value.
        value: u64,
        /// Size of that dimension.
        size: u64,
    },
    /// A slice range has start > end, or a step of 0.
    SliceInvalidRange {
        /// Dimension.
        dim: u32,
    },
    /// A slice of a sub-byte dtype does not start and end on byte boundaries.
    SliceSubByte,

    // ---- writing ----
    /// The output buffer is too small.
    BufferTooSmall {
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// A tensor may not be named `__metadata__`.
    ReservedName,
    /// A tensor's data length does not equal shape × dtype.
    DataLengthMismatch {
        /// Bytes shape × dtype need.
        expected: u64,
        /// Bytes given.
        found: u64,
    },
    /// Tensor data arrived for another tensor than the planned next one, or
    /// after the file was complete.
    DataOutOfOrder,
    /// The sink failed to take bytes.
    Sink,
}

impl ErrorKind {
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
        use ErrorKind::*;
        Some(match self {
            HeaderTooSmall { .. } => "HeaderTooSmall",
            HeaderTooLarge { .. } => "HeaderTooLarge",
            InvalidHeaderLength { .. } => "InvalidHeaderLength",
            InvalidUtf8 => "InvalidHeader",
            UnexpectedEnd { .. }
            | UnexpectedByte { .. }
            | InvalidEscape
            | LoneSurrogate
            | ControlCharacterInString
            | InvalidNumber
            | NestingTooDeep
            | MetadataNotObject
            | MetadataValueNotString
            | DuplicateMetadata
            | DtypeNotString
            | UnknownDtype
            | TensorNotObject
            | MissingField { .. }
            | DuplicateField { .. }
            | DataOffsetsNotPair { .. }
            | IntegerTooLarge => "InvalidHeaderDeserialization",
            InvalidOffset { .. } => "InvalidOffset",
            ValidationOverflow => "ValidationOverflow",
            MisalignedSlice { .. } => "MisalignedSlice",
            TensorInvalidInfo { .. } => "TensorInvalidInfo",
            MetadataIncompleteBuffer { .. } => "MetadataIncompleteBuffer",
            _ => return None,
        })
    }

    /// The variant name, e.g. `"InvalidOffset"` — stable, for tools and bindings.
    ///
    /// ```
    /// use safetensors_nano::ErrorKind;
    /// assert_eq!(ErrorKind::NestingTooDeep.name(), "NestingTooDeep");
    /// ```
    pub const fn name(&self) -> &'static str {
        use ErrorKind::*;
        match self {
            HeaderTooSmall { .. } => "HeaderTooSmall",
            HeaderTooLarge { .. } => "HeaderTooLarge",
            InvalidHeaderLength { .. } => "InvalidHeaderLength",
            InvalidUtf8 => "InvalidUtf8",
            UnexpectedEnd { .. } => "UnexpectedEnd",
            UnexpectedByte { .. } => "UnexpectedByte",
            InvalidEscape => "InvalidEscape",
            LoneSurrogate => "LoneSurrogate",
            ControlCharacterInString => "ControlCharacterInString",
            InvalidNumber => "InvalidNumber",
            NestingTooDeep => "NestingTooDeep",
            MetadataNotObject => "MetadataNotObject",
            MetadataValueNotString => "MetadataValueNotString",
            DuplicateMetadata => "DuplicateMetadata",
            DuplicateMetadataKey => "DuplicateMetadataKey",
            TensorNotObject => "TensorNotObject",
            DtypeNotString => "DtypeNotString",
            UnknownDtype => "UnknownDtype",
            MissingField { .. } => "MissingField",
            DuplicateField { .. } => "DuplicateField",
            DataOffsetsNotPair { .. } => "DataOffsetsNotPair",
            IntegerTooLarge => "IntegerTooLarge",
            DuplicateTensorName => "DuplicateTensorName",
            CapacityExceeded { .. } => "CapacityExceeded",
            InvalidOffset { .. } => "InvalidOffset",
            ValidationOverflow => "ValidationOverflow",
            MisalignedSlice { .. } => "MisalignedSlice",
            TensorInvalidInfo { .. } => "TensorInvalidInfo",
            MetadataIncompleteBuffer { .. } => "MetadataIncompleteBuffer",
            DtypeMismatch { .. } => "DtypeMismatch",
            Misaligned { .. } => "Misaligned",
            LengthMismatch { .. } => "LengthMismatch",
            TooLargeForTarget => "TooLargeForTarget",
            ReadOutOfRange { .. } => "ReadOutOfRange",
            Storage { .. } => "Storage",
            SliceTooManyIndices { .. } => "SliceTooManyIndices",
            SliceOutOfRange { .. } => "SliceOutOfRange",
            SliceInvalidRange { .. } => "SliceInvalidRange",
            SliceSubByte => "SliceSubByte",
            BufferTooSmall { .. } => "BufferTooSmall",
            ReservedName => "ReservedName",
            DataLengthMismatch { .. } => "DataLengthMismatch",
            DataOutOfOrder => "DataOutOfOrder",
            Sink => "Sink",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ErrorKind::*;
        match *self {
            HeaderTooSmall { len } => write!(
                f,
                "file of {len} bytes is shorter than the 8-byte length prefix"
            ),
            HeaderTooLarge { header_len, limit } => write!(
                f,
                "header length {header_len} is over the limit of {limit} bytes"
            ),
            InvalidHeaderLength {
                header_len,
                file_len,
            } => write!(
                f,
                "header length {header_len} does not fit in a file of {file_len} bytes"
            ),
            InvalidUtf8 => f.write_str("header is not valid UTF-8"),
            UnexpectedEnd { expected } => {
                write!(f, "header ends where {} was expected", expected.describe())
            }
            UnexpectedByte { found, expected } => write!(
                f,
                "unexpected byte 0x{found:02x} where {} was expected",
                expected.describe()
            ),
            InvalidEscape => f.write_str("invalid escape in string"),
            LoneSurrogate => f.write_str("\\u escape of a lone surrogate"),
            ControlCharacterInString => f.write_str("raw control character in string"),
            InvalidNumber => f.write_str("invalid or out-of-range number"),
            NestingTooDeep => f.write_str("arrays and objects nested too deep (limit 128)"),
            MetadataNotObject => f.write_str("__metadata__ is not an object or null"),
            MetadataValueNotString => f.write_str("__metadata__ value is not a string"),
            DuplicateMetadata => f.write_str("__metadata__ appears twice"),
            DuplicateMetadataKey => f.write_str("metadata key appears twice"),
            TensorNotObject => f.write_str("tensor entry is not an object"),
            DtypeNotString => f.write_str("dtype is not a string"),
            UnknownDtype => f.write_str("unknown dtype"),
            MissingField { field } => write!(f, "missing field \"{}\"", field.key()),
            DuplicateField { field } => write!(f, "field \"{}\" appears twice", field.key()),
            DataOffsetsNotPair { found } => write!(
                f,
                "data_offsets holds {found}{} integers, not 2",
                if found >= 3 { " or more" } else { "" }
            ),
            IntegerTooLarge => f.write_str("integer larger than 2^64-1"),
            DuplicateTensorName => f.write_str("tensor name appears twice"),
            CapacityExceeded { capacity, needed } => write!(
                f,
                "table of {capacity} slots is too small: this header needs {needed}"
            ),
            InvalidOffset {
                expected_begin,
                begin,
                end,
            } => write!(
                f,
                "data_offsets [{begin}, {end}] do not continue at {expected_begin}"
            ),
            ValidationOverflow => f.write_str("element or bit count overflows 64 bits"),
            MisalignedSlice { elements } => write!(
                f,
                "{elements} sub-byte elements are not a whole number of bytes"
            ),
            TensorInvalidInfo { expected, found } => write!(
                f,
                "data_offsets span {found} bytes but shape and dtype need {expected}"
            ),
            MetadataIncompleteBuffer { expected, found } => write!(
                f,
                "byte buffer is {found} bytes but the header describes {expected}"
            ),
            DtypeMismatch { found } => write!(f, "tensor has dtype {found}, not the one asked for"),
            Misaligned { align } => write!(
                f,
                "tensor data is not {align}-byte aligned for a typed view"
            ),
            LengthMismatch { expected, found } => {
                write!(f, "buffer of {found} elements where {expected} are needed")
            }
            TooLargeForTarget => f.write_str("length does not fit in this target's usize"),
            ReadOutOfRange { end, len } => {
                write!(f, "read up to byte {end} of a tensor of {len} bytes")
            }
            Storage { address, len } => write!(
                f,
                "storage failed to read {len} bytes at address 0x{address:x}"
            ),
            SliceTooManyIndices { rank, given } => {
                write!(f, "{given} slice indices for a tensor of rank {rank}")
            }
            SliceOutOfRange { dim, value, size } => write!(
                f,
                "slice bound {value} out of range for dimension {dim} of size {size}"
            ),
            SliceInvalidRange { dim } => write!(
                f,
                "slice range on dimension {dim} is reversed or has step 0"
            ),
            SliceSubByte => {
                f.write_str("slice of a sub-byte dtype does not fall on byte boundaries")
            }
            BufferTooSmall { needed, available } => write!(
                f,
                "output buffer of {available} bytes is too small: {needed} needed"
            ),
            ReservedName => f.write_str("a tensor may not be named __metadata__"),
            DataLengthMismatch { expected, found } => write!(
                f,
                "tensor data is {found} bytes but shape and dtype need {expected}"
            ),
            DataOutOfOrder => f.write_str("tensor data arrived out of the planned order"),
            Sink => f.write_str("the output sink failed"),
        }
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

#[cfg(feature = "std")]
impl std::error::Error for Error {}
