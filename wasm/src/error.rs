//! The one error conversion: an error crosses to JS as numbers only, and
//! `wasm/js/api.js` (`wasmError`) writes its message. Formatting text here
//! would link `core::fmt` and every message into the `.wasm`.
//!
//! Numbers: `[-1, offset, tensor_start, tensor_len, tensor_index, (hi, lo)
//! × 3, kind…]`:
//! - `offset`: header byte where it was found, `-1` for none;
//! - `tensor_start`, `tensor_len`: the tensor's raw (still escaped) name as
//!   a span of the header bytes, `-1, 0` for none;
//! - `tensor_index`: the tensor's place in the caller's list (writer
//!   errors), `-1` for none;
//! - three `u64` fields of the kind (see [`fields`]), each as its high and
//!   low 32 bits so that JS can print values above 2^53 exactly;
//! - the kind's name (`ErrorKind::name`, or one of this layer's kinds), one
//!   number per ASCII byte.

use alloc::vec::Vec;

use safetensors_nano::{Error, ErrorKind, TensorRef};

/// A raw name's span in the header: start and length in bytes.
pub type Span = (u64, u64);

/// An error to describe: a kind name, up to three numbers, and where.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Failure {
    /// The kind's name.
    pub kind: &'static str,
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
    pub const fn new(kind: &'static str, fields: [u64; 3]) -> Failure {
        Failure {
            kind,
            fields,
            offset: None,
            tensor: None,
            index: None,
        }
    }

    /// The same error, about the tensor whose raw name is this span.
    pub const fn with_tensor(mut self, span: Span) -> Failure {
        self.tensor = Some(span);
        self
    }

    /// The numbers that cross to JS.
    pub fn encode(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(11usize.saturating_add(self.kind.len()));
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
        out.extend(self.kind.bytes().map(f64::from));
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
            kind: kind.name(),
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
mod tests {
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
        let name: String = n[11..].iter().map(|&c| char::from(c as u8)).collect();
        assert_eq!(name, "UnexpectedByte");
    }

    #[test]
    fn large_fields_are_split_exactly() {
        let f = Failure::new("X", [u64::MAX, 1 << 53, 3]).with_tensor((7, 2));
        let n = f.encode();
        assert_eq!(&n[2..4], [7.0, 2.0]);
        assert_eq!(
            &n[5..11],
            [4294967295.0, 4294967295.0, 2097152.0, 0.0, 0.0, 3.0]
        );
    }
}
