//! The one error conversion: an error crosses to JS as numbers only, and
//! `wasm/js/api.js` (`wasmError`) writes its message. Formatting text here
//! would link `core::fmt` and every message into the `.wasm`.
//!
//! Numbers: `[-1, offset, tensor_start, tensor_len, tensor_index, (hi, lo)
//! × 3, kind]`:
//! - `offset`: header byte where it was found, `-1` for none;
//! - `tensor_start`, `tensor_len`: the tensor's raw (still escaped) name as
//!   a span of the header bytes, `-1, 0` for none;
//! - `tensor_index`: the tensor's place in the caller's list (writer
//!   errors), `-1` for none;
//! - three `u64` fields of the kind (see [`fields`]), each as its high and
//!   low 32 bits so that JS can print values above 2^53 exactly;
//! - the kind, as its [`Kind`] number: the kind names stay out of the
//!   `.wasm` (1.3 KB of them); `api.js` has them in the same order
//!   (`KINDS`, which a test here reads).

use alloc::vec::Vec;

use safetensors_nano::{Error, ErrorKind, TensorRef};

/// A raw name's span in the header: start and length in bytes.
pub type Span = (u64, u64);

/// Declares [`Kind`] and, for the tests, `KIND_NAMES`: the core's kinds
/// (each named as its `ErrorKind` variant, which is what `ErrorKind::name`
/// returns), then this layer's. The one list on the Rust side.
macro_rules! kinds {
    (core: $($core:ident)* ; layer: $($layer:ident)*) => {
        /// Every kind of error that crosses to JS; its number is its place
        /// in `KINDS` in `wasm/js/api.js`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        // (The reader's and the writer's module each make only some of
        // this layer's kinds; the numbering is shared.)
        #[cfg_attr(not(all(feature = "reader", feature = "writer")), allow(dead_code))]
        pub enum Kind {
            $(
                #[allow(missing_docs)]
                $core,
            )*
            $(
                #[allow(missing_docs)]
                $layer,
            )*
            /// A kind of the core's that this list does not name yet (a
            /// test fails before that can ship).
            Unlisted,
        }

        impl From<ErrorKind> for Kind {
            fn from(kind: ErrorKind) -> Kind {
                match kind {
                    $(ErrorKind::$core { .. } => Kind::$core,)*
                    _ => Kind::Unlisted,
                }
            }
        }

        /// The names of the kinds, by number (what `KINDS` in `api.js` holds).
        #[cfg(test)]
        pub const KIND_NAMES: &[&str] = &[
            $(stringify!($core),)* $(stringify!($layer),)* "Unlisted",
        ];
    };
}

kinds! {
    core:
        HeaderTooSmall HeaderTooLarge InvalidHeaderLength InvalidUtf8
        UnexpectedEnd UnexpectedByte InvalidEscape LoneSurrogate
        ControlCharacterInString InvalidNumber NestingTooDeep
        MetadataNotObject MetadataValueNotString DuplicateMetadata
        DuplicateMetadataKey TensorNotObject DtypeNotString UnknownDtype
        MissingField DuplicateField DataOffsetsNotPair IntegerTooLarge
        DuplicateTensorName CapacityExceeded
        InvalidOffset ValidationOverflow MisalignedSlice TensorInvalidInfo
        MetadataIncompleteBuffer
        DtypeMismatch Misaligned LengthMismatch TooLargeForTarget ReadOutOfRange
        Storage
        SliceTooManyIndices SliceOutOfRange SliceInvalidRange SliceSubByte
        BufferTooSmall ReservedName DataLengthMismatch DataOutOfOrder Sink
    ;
    layer:
        OffsetTooLarge DimensionTooLarge InvalidArgument
}

/// An error to describe: a kind, up to three numbers, and where.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Failure {
    /// The kind.
    pub kind: Kind,
    /// The kind's numbers, in the order `api.js` formats them.
    pub fields: [u64; 3],
    /// Header byte offset.
    pub offset: Option<u64>,
    /// The tensor's raw name in the header.
    pub tensor: Option<Span>,
    /// The tensor's index in the caller's list.
    pub index: Option<u32>,
}

impl Failure {
    /// An error of this layer, about no place in particular.
    pub const fn new(kind: Kind, fields: [u64; 3]) -> Failure {
        Failure {
            kind,
            fields,
            offset: None,
            tensor: None,
            index: None,
        }
    }

    /// The same error, about the tensor whose raw name is this span.
    #[cfg(any(feature = "reader", test))]
    pub const fn with_tensor(mut self, span: Span) -> Failure {
        self.tensor = Some(span);
        self
    }

    /// The numbers that cross to JS.
    pub fn encode(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(12);
        let (start, len) = self
            .tensor
            .map_or((-1.0, 0.0), |(s, l)| (s as f64, l as f64));
        out.extend_from_slice(&[
            -1.0,
            self.offset.map_or(-1.0, |o| o as f64),
            start,
            len,
            self.index.map_or(-1.0, f64::from),
        ]);
        for v in self.fields {
            out.push((v >> 32) as f64);
            out.push((v & 0xFFFF_FFFF) as f64);
        }
        out.push(f64::from(self.kind as u8));
        out
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        let kind = e.kind();
        let (tensor, index) = match e.tensor() {
            Some(TensorRef::Header { start, len }) => {
                (Some((u64::from(start), u64::from(len))), None)
            }
            Some(TensorRef::Index(i)) => (None, Some(i)),
            None => (None, None),
        };
        Failure {
            kind: kind.into(),
            fields: fields(kind),
            offset: e.offset(),
            tensor,
            index,
        }
    }
}

/// The numbers a kind carries, in its declaration order; `Expected`,
/// `Field` and `Dtype` values as their index in the core's declaration
/// (the same order as the tables in `api.js`).
pub fn fields(kind: ErrorKind) -> [u64; 3] {
    use ErrorKind::*;
    match kind {
        HeaderTooSmall { len } => [len, 0, 0],
        HeaderTooLarge { header_len, limit } => [header_len, limit, 0],
        InvalidHeaderLength {
            header_len,
            file_len,
        } => [header_len, file_len, 0],
        UnexpectedEnd { expected } => [expected as u64, 0, 0],
        UnexpectedByte { found, expected } => [u64::from(found), expected as u64, 0],
        MissingField { field } | DuplicateField { field } => [field as u64, 0, 0],
        DataOffsetsNotPair { found } => [u64::from(found), 0, 0],
        CapacityExceeded { capacity, needed } => [capacity, needed, 0],
        InvalidOffset {
            expected_begin,
            begin,
            end,
        } => [expected_begin, begin, end],
        MisalignedSlice { elements } => [elements, 0, 0],
        TensorInvalidInfo { expected, found }
        | MetadataIncompleteBuffer { expected, found }
        | LengthMismatch { expected, found }
        | DataLengthMismatch { expected, found } => [expected, found, 0],
        DtypeMismatch { found } => [found as u64, 0, 0],
        Misaligned { align } => [u64::from(align), 0, 0],
        ReadOutOfRange { end, len } => [end, len, 0],
        Storage { address, len } => [address, len, 0],
        SliceTooManyIndices { rank, given } => [u64::from(rank), u64::from(given), 0],
        SliceOutOfRange { dim, value, size } => [u64::from(dim), value, size],
        SliceInvalidRange { dim } => [u64::from(dim), 0, 0],
        BufferTooSmall { needed, available } => [needed, available, 0],
        _ => [0; 3],
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use safetensors_nano::Expected;

    #[test]
    fn encodes_kind_fields_and_place() {
        let f = Failure::from(Error::new(ErrorKind::UnexpectedByte {
            found: b'x',
            expected: Expected::Colon,
        }));
        let n = f.encode();
        assert_eq!(&n[..5], [-1.0, -1.0, -1.0, 0.0, -1.0]);
        assert_eq!(&n[5..11], [0.0, 120.0, 0.0, 4.0, 0.0, 0.0]);
        assert_eq!(kind_name(&n), "UnexpectedByte");
        assert_eq!(n.len(), 12);
    }

    #[test]
    fn large_fields_are_split_exactly() {
        let f = Failure::new(Kind::InvalidArgument, [u64::MAX, 1 << 53, 3]).with_tensor((7, 2));
        let n = f.encode();
        assert_eq!(&n[2..4], [7.0, 2.0]);
        assert_eq!(
            &n[5..11],
            [4294967295.0, 4294967295.0, 2097152.0, 0.0, 0.0, 3.0]
        );
    }

    /// The kind name an error's numbers carry, as `api.js` reads it.
    pub fn kind_name(n: &[f64]) -> &'static str {
        assert_eq!(n[0], -1.0, "not an error: {n:?}");
        assert_eq!(n.len(), 12, "{n:?}");
        KIND_NAMES[n[11] as usize]
    }

    /// The statements of `src` between `start` and the next line `end`.
    fn block<'s>(src: &'s str, start: &str, end: &str) -> &'s str {
        let from = src.find(start).unwrap_or_else(|| panic!("no `{start}`"));
        let rest = &src[from..];
        &rest[..rest
            .find(end)
            .unwrap_or_else(|| panic!("no end of `{start}`"))]
    }

    /// The strings in single or double quotes of a piece of JS or Rust.
    fn quoted(text: &str, quote: char) -> Vec<&str> {
        text.split(quote).skip(1).step_by(2).collect()
    }

    /// `KINDS` in `api.js` is this crate's list, in the same order: the
    /// numbers mean the same kinds on both sides.
    #[test]
    fn api_js_names_the_kinds_in_the_same_order() {
        let js = include_str!("../js/api.js");
        let list = block(js, "const KINDS = ", "]);");
        let list = list.split_once('[').map_or("", |(_, l)| l);
        // Strip `//` comments before collecting the quoted names.
        let code: String = list
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(quoted(&code, '\''), KIND_NAMES);
    }

    /// Every kind the core names (`ErrorKind::name`, read from its source)
    /// is listed, so `Kind::Unlisted` never reaches JS; and a kind's number
    /// names it: for a sample of each shape of variant, through the core.
    #[test]
    fn every_core_kind_is_listed_under_its_name() {
        let core = include_str!("../../core/src/error.rs");
        let names = block(core, "pub const fn name(&self)", "\n    }\n");
        let names = quoted(names, '"');
        assert!(
            names.len() >= 40,
            "could not read ErrorKind::name: {names:?}"
        );
        let listed = &KIND_NAMES[..names.len()];
        assert_eq!(names, listed, "the core's kinds, in its order");
        for kind in [
            ErrorKind::InvalidUtf8,
            ErrorKind::Sink,
            ErrorKind::UnknownDtype,
            ErrorKind::HeaderTooSmall { len: 3 },
            ErrorKind::InvalidOffset {
                expected_begin: 1,
                begin: 2,
                end: 3,
            },
            ErrorKind::DataLengthMismatch {
                expected: 1,
                found: 2,
            },
            ErrorKind::MissingField {
                field: safetensors_nano::Field::Shape,
            },
        ] {
            let n = Failure::from(Error::new(kind)).encode();
            assert_eq!(kind_name(&n), kind.name());
        }
        assert_eq!(KIND_NAMES[Kind::Unlisted as usize], "Unlisted");
        assert_eq!(KIND_NAMES[Kind::OffsetTooLarge as usize], "OffsetTooLarge");
    }
}
