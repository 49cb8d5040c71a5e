// The error kinds, one hand-written list: included by the core (`error_kinds!`
// in error/mod.rs: the enum, its numbers and messages) and by the wasm crate
// (the table its generated JS is written from), each with its own
// `error_kinds!`.

error_kinds! {
    // ---- framing (docs/format.md R1–R4) ----
    /// The input is shorter than the 8-byte length prefix (docs/format.md R1 prefix-present).
    HeaderTooSmall {
        /// Bytes available.
        len: u64,
    } reference "HeaderTooSmall"
        => "file of {len} bytes is shorter than the 8-byte length prefix";
    /// The declared header length is over the limit (docs/format.md R2 header-limit).
    HeaderTooLarge {
        /// Declared header length N.
        header_len: u64,
        /// The limit in force.
        limit: u64,
    } reference "HeaderTooLarge"
        => "header of {header_len} bytes is over the limit of {limit} bytes";
    /// The declared header does not fit in the file (docs/format.md R3 header-fits).
    InvalidHeaderLength {
        /// Declared header length N.
        header_len: u64,
        /// File length.
        file_len: u64,
    } reference "InvalidHeaderLength"
        => "header of {header_len} bytes does not fit in a file of {file_len} bytes";
    /// The header is not valid UTF-8 (docs/format.md R4 utf8); the offset is the first bad byte.
    InvalidUtf8 reference "InvalidHeader"
        => "header is not valid UTF-8";

    // ---- JSON syntax (docs/format.md R5, R6) ----
    /// The header ended inside a JSON value.
    UnexpectedEnd {
        /// What was wanted there.
        expected: Expected,
    } reference "InvalidHeaderDeserialization"
        => "header ends where {expected} was expected";
    /// A byte that cannot start or continue what the grammar wants.
    UnexpectedByte {
        /// The byte found.
        found: u8,
        /// What was wanted there.
        expected: Expected,
    } reference "InvalidHeaderDeserialization"
        => "unexpected byte 0x{found:02x} where {expected} was expected";
    /// A backslash escape that JSON does not have, or a bad `\u` hex digit.
    InvalidEscape reference "InvalidHeaderDeserialization"
        => "invalid escape in string";
    /// A `\u` escape of a surrogate that is not part of a valid pair.
    LoneSurrogate reference "InvalidHeaderDeserialization"
        => "\\u escape of a lone surrogate";
    /// A raw control character (below 0x20) inside a string.
    ControlCharacterInString reference "InvalidHeaderDeserialization"
        => "raw control character in string";
    /// A number that JSON does not allow (leading zero, missing digits), or
    /// one too large to represent.
    InvalidNumber reference "InvalidHeaderDeserialization"
        => "invalid or out-of-range number";
    /// Arrays and objects nested deeper than the limit (the reference's 128).
    NestingTooDeep reference "InvalidHeaderDeserialization"
        => "arrays and objects nested too deep (limit 128)";

    // ---- header schema (docs/format.md R7, R8) ----
    /// `__metadata__` is not `null` or an object.
    MetadataNotObject reference "InvalidHeaderDeserialization"
        => "__metadata__ is not an object or null";
    /// A `__metadata__` value is not a string.
    MetadataValueNotString reference "InvalidHeaderDeserialization"
        => "__metadata__ value is not a string";
    /// `__metadata__` appears twice.
    DuplicateMetadata reference "InvalidHeaderDeserialization"
        => "__metadata__ appears twice";
    /// A metadata key appears twice (the reference keeps the last one).
    DuplicateMetadataKey
        => "metadata key appears twice";
    /// A tensor entry is not a JSON object (the reference also takes an array).
    TensorNotObject reference "InvalidHeaderDeserialization"
        => "tensor entry is not an object";
    /// The dtype is not a string (the reference also takes `{"F32":null}`).
    DtypeNotString reference "InvalidHeaderDeserialization"
        => "dtype is not a string";
    /// The dtype string is not one of the 22 names.
    UnknownDtype reference "InvalidHeaderDeserialization"
        => "unknown dtype";
    /// A required field is missing from a tensor entry.
    MissingField {
        /// Which field.
        field: Field,
    } reference "InvalidHeaderDeserialization"
        => "missing field \"{field}\"";
    /// A required field appears twice in a tensor entry.
    DuplicateField {
        /// Which field.
        field: Field,
    } reference "InvalidHeaderDeserialization"
        => "field \"{field}\" appears twice";
    /// `data_offsets` does not hold exactly two integers.
    DataOffsetsNotPair {
        /// How many integers it holds (counting stops at 3).
        found: u8,
    } reference "InvalidHeaderDeserialization"
        => "data_offsets holds {found:or_more} integers, not 2";
    /// An integer is larger than `u64::MAX`.
    IntegerTooLarge reference "InvalidHeaderDeserialization"
        => "integer larger than 2^64-1";
    /// Two tensors have the same name (after unescaping).
    DuplicateTensorName
        => "tensor name appears twice";
    /// The caller's table is too small for this header: give a larger
    /// [`Table`](crate::Table), a `Vec<Slot>` of `needed` slots, or let
    /// `parse_alloc` (feature `alloc`) size it.
    CapacityExceeded {
        /// Slots given.
        capacity: u64,
        /// Slots this header needs (tensors plus metadata entries).
        needed: u64,
    } => "table of {capacity} slots is too small: this header needs {needed}, one per tensor and per metadata pair (use a larger Table::<N> or Vec<Slot>, or parse_alloc)";

    // ---- layout validation (docs/format.md R9–R13) ----
    /// A tensor does not start where the previous one (in offset order)
    /// ends, or ends before it begins (docs/format.md R9 offsets-tile).
    InvalidOffset {
        /// Where it had to begin.
        expected_begin: u64,
        /// Declared begin.
        begin: u64,
        /// Declared end.
        end: u64,
    } reference "InvalidOffset"
        => "data_offsets [{begin}, {end}] do not continue at {expected_begin}";
    /// The element count or bit count overflows `u64` (docs/format.md R10 no-overflow).
    ValidationOverflow reference "ValidationOverflow"
        => "element or bit count overflows 64 bits";
    /// A sub-byte tensor's bit count is not a multiple of 8 (docs/format.md R11 whole-bytes).
    MisalignedSlice {
        /// Elements in the tensor.
        elements: u64,
    } reference "MisalignedSlice"
        => "{elements} sub-byte elements are not a whole number of bytes";
    /// `end − begin` is not the size that shape × dtype gives (docs/format.md R12 size-matches).
    TensorInvalidInfo {
        /// Bytes that shape × dtype need.
        expected: u64,
        /// `end − begin`.
        found: u64,
    } reference "TensorInvalidInfo"
        => "data_offsets span {found} bytes but shape and dtype need {expected}";
    /// The byte buffer is not exactly as long as the tensors need (docs/format.md R13 exact-length).
    MetadataIncompleteBuffer {
        /// Buffer length the header describes.
        expected: u64,
        /// Buffer length present.
        found: u64,
    } reference "MetadataIncompleteBuffer"
        => "byte buffer is {found} bytes but the header describes {expected}";

    // ---- access ----
    /// No tensor has the name asked for (the reference's `TensorNotFound`;
    /// [`SafeTensors::try_tensor`](crate::SafeTensors::try_tensor)).
    TensorNotFound reference "TensorNotFound"
        => "no tensor has this name";
    /// The tensor's dtype is not the one asked for: a typed view or copy
    /// of another element type, `bools` of a non-`BOOL` tensor, a decode
    /// to f32 of a dtype that is not a float, a conversion between dtypes
    /// that [`convert_into`](crate::write::convert_into) does not do.
    DtypeMismatch {
        /// The tensor's (or the source's) dtype.
        found: Dtype,
        /// The dtype asked for: the element type's, `BOOL`, `F32` for a
        /// decode to f32, or a conversion's target.
        asked: Dtype,
    } => "dtype {found} cannot be read as {asked}";
    /// The data is not aligned for a typed view; use a copying accessor
    /// ([`TensorView::copy_into`](crate::TensorView::copy_into)).
    Misaligned {
        /// Alignment the view needs.
        align: u8,
    } => "tensor data is not {align}-byte aligned for a typed view: copy it with copy_into instead";
    /// An output slice has the wrong number of elements.
    LengthMismatch {
        /// Elements needed.
        expected: u64,
        /// Elements given.
        found: u64,
    } => "output of {found} elements where {expected} are needed";
    /// An output byte buffer has the wrong length.
    ByteLengthMismatch {
        /// Bytes needed.
        expected: u64,
        /// Bytes given.
        found: u64,
    } => "output buffer of {found} bytes where exactly {expected} are needed";
    /// A length does not fit in this target's `usize`.
    TooLargeForTarget
        => "length does not fit in this target's usize";
    /// A read asked for bytes past the end of a tensor's data.
    ReadOutOfRange {
        /// Byte offset, within the tensor, where the read would end.
        end: u64,
        /// Bytes of data the tensor has.
        len: u64,
    } => "read up to byte {end} of a tensor of {len} bytes";

    // ---- storage (feature `embedded-storage`) ----
    /// The storage driver failed to read, or the bytes lie beyond its
    /// capacity or its addressing.
    Storage {
        /// Storage address where the failed read starts.
        address: u64,
        /// Bytes asked for.
        len: u64,
    } => "storage failed to read {len} bytes at address 0x{address:x}";

    // ---- slicing ----
    /// More slice indices than the tensor has dimensions.
    SliceTooManyIndices {
        /// Tensor rank.
        rank: u32,
        /// Indices given.
        given: u32,
    } => "{given} slice indices for a tensor of rank {rank}";
    /// A slice index or bound is past the end of its dimension.
    SliceOutOfRange {
        /// Dimension.
        dim: u32,
        /// Offending value.
        value: u64,
        /// Size of that dimension.
        size: u64,
    } => "slice bound {value} out of range for dimension {dim} of size {size}";
    /// A slice range has start > end, or a step of 0.
    SliceInvalidRange {
        /// Dimension.
        dim: u32,
    } => "slice range on dimension {dim} is reversed or has step 0";
    /// A slice of a sub-byte dtype does not start and end on byte boundaries.
    SliceSubByte
        => "slice of a sub-byte dtype does not fall on byte boundaries";

    // ---- writing ----
    /// The output buffer is too small.
    BufferTooSmall {
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    } => "output buffer of {available} bytes is too small: {needed} needed";
    /// A tensor may not be named `__metadata__`.
    ReservedName
        => "a tensor may not be named __metadata__";
    /// A tensor's data length does not equal shape × dtype.
    DataLengthMismatch {
        /// Bytes shape × dtype need.
        expected: u64,
        /// Bytes given.
        found: u64,
    } => "tensor data is {found} bytes but shape and dtype need {expected}";
    /// Tensor data arrived for another tensor than the planned next one, or
    /// after the file was complete.
    DataOutOfOrder
        => "tensor data arrived out of the planned order";
    /// The sink failed to take bytes.
    Sink
        => "the output sink failed";
}
