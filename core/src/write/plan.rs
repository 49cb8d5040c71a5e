//! The first pass: order, offsets and exact lengths, before any byte is written.

use core::cmp::Ordering;
use core::fmt;

use super::json::write_json;
use super::sink::{Counter, Sink};
use super::spec::{at_index, AsSpec, AsTensor, TensorSpec};
use crate::error::{Error, ErrorKind};
use crate::file::HEADER_LIMIT;
use crate::mode::json_sink;
use crate::read::sort::sort_by;

/// The layout of a file to write: tensor order, data offsets, header length.
///
/// Made from a caller's list of tensors (sorted in place into the order the
/// reference writer uses: dtype descending, then name bytewise) and, with
/// [`Plan::with_metadata`], metadata pairs (sorted in place by key). Nothing
/// is allocated; every check that can fail is done here, so a plan that
/// exists can be written.
///
/// ```
/// use safetensors_nano::{Dtype, write::{Plan, Tensor}};
/// let y = [1.0f32, -2.0];
/// let mut tensors = [
///     Tensor::new("x", Dtype::U8, &[3], &[1, 2, 3]),
///     Tensor::new("y", Dtype::F32, &[2], bytemuck::cast_slice(&y)),
/// ];
/// let mut metadata = [("format", "pt")];
/// let plan = Plan::with_metadata(&mut tensors, &mut metadata)?;
/// assert_eq!(plan.header_len(), 144);
/// assert_eq!(plan.file_len(), 163);
/// assert_eq!(tensors_names(&plan), ["y", "x"]); // F32 sorts before U8
/// assert_eq!(plan.offsets().collect::<Vec<_>>(), [(0, 8), (8, 11)]);
///
/// let mut buf = [0u8; 163];
/// let file = plan.write_to_slice(&mut buf)?;
/// assert_eq!(&file[8..24], br#"{"__metadata__":"#);
/// # fn tensors_names<'a>(plan: &Plan<'a, Tensor<'a>>) -> Vec<&'a str> {
/// #     plan.iter().map(|t| t.spec().name()).collect()
/// # }
/// # Ok::<(), safetensors_nano::Error>(())
/// ```
pub struct Plan<'p, T> {
    tensors: &'p [T],
    metadata: Option<&'p [(&'p str, &'p str)]>,
    json_len: u64,
    header_len: u64,
    data_len: u64,
    file_len: u64,
}

impl<T> Clone for Plan<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Plan<'_, T> {}

impl<T> fmt::Debug for Plan<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plan")
            .field("tensors", &self.tensors.len())
            .field("metadata", &self.metadata.map(<[_]>::len))
            .field("header_len", &self.header_len)
            .field("data_len", &self.data_len)
            .finish()
    }
}

/// The reference writer's order: dtype descending, then name ascending.
fn by_dtype_then_name<T: AsSpec>(a: &T, b: &T) -> Ordering {
    let (a, b) = (a.spec(), b.spec());
    b.dtype()
        .cmp(&a.dtype())
        .then_with(|| a.name().cmp(b.name()))
}

/// The index of a tensor whose name an earlier one (in name order) has, in
/// a slice sorted by [`by_dtype_then_name`]. Each dtype's run is sorted by
/// name, so a merge of the runs (at most 22) visits all names in order
/// without allocating or sorting again.
fn find_duplicate<T: AsSpec>(sorted: &[T]) -> Option<usize> {
    // Cursors [next, end) into each dtype's run.
    let mut runs = [(0usize, 0usize); 22];
    let mut count = 0usize;
    let mut start = 0usize;
    for (i, pair) in sorted.windows(2).enumerate() {
        if let [a, b] = pair {
            if a.spec().dtype() != b.spec().dtype() {
                let end = i.saturating_add(1);
                *runs.get_mut(count)? = (start, end);
                count = count.saturating_add(1);
                start = end;
            }
        }
    }
    if start < sorted.len() {
        *runs.get_mut(count)? = (start, sorted.len());
        count = count.saturating_add(1);
    }
    let runs = runs.get_mut(..count)?;
    if let [(start, end)] = runs {
        // One dtype: duplicates are neighbours.
        let run = sorted.get(*start..*end)?;
        return run
            .windows(2)
            .position(|w| matches!(w, [a, b] if a.spec().name() == b.spec().name()))
            .map(|i| start.saturating_add(i).saturating_add(1));
    }
    let mut last: Option<&str> = None;
    loop {
        let mut best: Option<(usize, &str)> = None;
        for (r, &(next, end)) in runs.iter().enumerate() {
            if next < end {
                let name = sorted.get(next)?.spec().name();
                if best.is_none_or(|(_, b)| name < b) {
                    best = Some((r, name));
                }
            }
        }
        let (r, name) = best?;
        let cursor = runs.get_mut(r)?;
        if last == Some(name) {
            return Some(cursor.0);
        }
        last = Some(name);
        cursor.0 = cursor.0.saturating_add(1);
    }
}

impl<'p, T: AsSpec> Plan<'p, T> {
    /// Plans a file without a `__metadata__` entry.
    ///
    /// `tensors` is sorted in place into the written order.
    ///
    /// # Errors
    /// Nothing is planned, and the error's [`tensor`](Error::tensor) is
    /// `TensorRef::Index` of the offending tensor, for:
    /// [`ReservedName`](ErrorKind::ReservedName) (a tensor named
    /// `__metadata__`), [`ValidationOverflow`](ErrorKind::ValidationOverflow)
    /// (a size overflows `u64`), [`MisalignedSlice`](ErrorKind::MisalignedSlice)
    /// (sub-byte bits not a whole byte),
    /// [`DataLengthMismatch`](ErrorKind::DataLengthMismatch) (byte length is
    /// not shape × dtype) — the index is then a position in the slice as the
    /// caller passed it, which is left unsorted — and
    /// [`DuplicateTensorName`](ErrorKind::DuplicateTensorName), whose index is
    /// a position in the slice as it is left (in written order).
    /// [`HeaderTooLarge`](ErrorKind::HeaderTooLarge) when the header would be
    /// over 100,000,000 bytes.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, ErrorKind, TensorRef, write::{Plan, TensorSpec}};
    /// let mut specs = [
    ///     TensorSpec::new("ok", Dtype::U8, &[2], 2),
    ///     TensorSpec::new("bad", Dtype::F32, &[2], 7),
    /// ];
    /// let err = Plan::new(&mut specs).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::DataLengthMismatch { expected: 8, found: 7 });
    /// assert_eq!(err.tensor(), Some(TensorRef::Index(1)));
    /// ```
    pub fn new(tensors: &'p mut [T]) -> Result<Self, Error> {
        Plan::build(tensors, None)
    }

    /// Plans a file with a `__metadata__` entry holding `metadata` (written
    /// even when empty; keys sorted bytewise in place).
    ///
    /// # Errors
    /// As [`Plan::new`], and [`DuplicateMetadataKey`](ErrorKind::DuplicateMetadataKey)
    /// when a key appears twice.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let mut specs: [TensorSpec; 0] = [];
    /// let mut metadata = [("b", "2"), ("a", "1")];
    /// let plan = Plan::with_metadata(&mut specs, &mut metadata)?;
    /// assert_eq!(plan.metadata(), Some(&[("a", "1"), ("b", "2")][..]));
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn with_metadata<'k: 'p, 'v: 'p>(
        tensors: &'p mut [T],
        metadata: &'p mut [(&'k str, &'v str)],
    ) -> Result<Self, Error> {
        sort_by(metadata, |a, b| a.0 < b.0);
        if metadata
            .windows(2)
            .any(|w| matches!(w, [a, b] if a.0 == b.0))
        {
            return Err(ErrorKind::DuplicateMetadataKey.into());
        }
        let metadata: &'p [(&'k str, &'v str)] = metadata;
        Plan::build(tensors, Some(metadata))
    }

    fn build(
        tensors: &'p mut [T],
        metadata: Option<&'p [(&'p str, &'p str)]>,
    ) -> Result<Self, Error> {
        let mut data_len = 0u64;
        for (index, tensor) in tensors.iter().enumerate() {
            let spec = tensor.spec();
            spec.check().map_err(|e| at_index(e.kind(), index))?;
            data_len = data_len
                .checked_add(spec.byte_len())
                .ok_or_else(|| at_index(ErrorKind::ValidationOverflow, index))?;
        }
        sort_by(tensors, |a, b| by_dtype_then_name(a, b).is_lt());
        if let Some(index) = find_duplicate(tensors) {
            return Err(at_index(ErrorKind::DuplicateTensorName, index));
        }
        let tensors: &'p [T] = tensors;

        let mut counter = Counter::default();
        write_json(json_sink(&mut counter), tensors, metadata)?;
        let json_len = counter.len;
        let header_len = json_len
            .checked_next_multiple_of(8)
            .ok_or(Error::new(ErrorKind::ValidationOverflow))?;
        if header_len > HEADER_LIMIT {
            return Err(ErrorKind::HeaderTooLarge {
                header_len,
                limit: HEADER_LIMIT,
            }
            .into());
        }
        let file_len = header_len
            .checked_add(8)
            .and_then(|n| n.checked_add(data_len))
            .ok_or(Error::new(ErrorKind::ValidationOverflow))?;
        Ok(Plan {
            tensors,
            metadata,
            json_len,
            header_len,
            data_len,
            file_len,
        })
    }

    /// The header length `N` (the JSON padded with spaces to a multiple of 8).
    ///
    /// ```
    /// use safetensors_nano::write::{Plan, TensorSpec};
    /// let plan = Plan::new(&mut [] as &mut [TensorSpec])?;
    /// assert_eq!(plan.header_len(), 8); // "{}" and 6 spaces
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub const fn header_len(&self) -> u64 {
        self.header_len
    }

    /// Where the tensor data starts in the file: `8 + N`, a multiple of 8.
    ///
    /// ```
    /// use safetensors_nano::write::{Plan, TensorSpec};
    /// let plan = Plan::new(&mut [] as &mut [TensorSpec])?;
    /// assert_eq!(plan.data_start(), 16);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub const fn data_start(&self) -> u64 {
        self.file_len.saturating_sub(self.data_len)
    }

    /// Total bytes of tensor data.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let mut specs = [TensorSpec::new("a", Dtype::F64, &[3], 24)];
    /// assert_eq!(Plan::new(&mut specs)?.data_len(), 24);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub const fn data_len(&self) -> u64 {
        self.data_len
    }

    /// Length of the whole file: `8 + N + data_len`.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let mut specs = [TensorSpec::new("a", Dtype::F64, &[3], 24)];
    /// let plan = Plan::new(&mut specs)?;
    /// assert_eq!(plan.file_len(), 8 + plan.header_len() + 24);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub const fn file_len(&self) -> u64 {
        self.file_len
    }

    /// Number of tensors.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let mut specs = [TensorSpec::new("a", Dtype::U8, &[], 1)];
    /// assert_eq!(Plan::new(&mut specs)?.len(), 1);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub const fn len(&self) -> usize {
        self.tensors.len()
    }

    /// Whether there are no tensors.
    ///
    /// ```
    /// use safetensors_nano::write::{Plan, TensorSpec};
    /// assert!(Plan::new(&mut [] as &mut [TensorSpec])?.is_empty());
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub const fn is_empty(&self) -> bool {
        self.tensors.is_empty()
    }

    /// The caller's tensors, in written order.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let mut specs = [TensorSpec::new("b", Dtype::U8, &[], 1), TensorSpec::new("a", Dtype::U8, &[], 1)];
    /// let plan = Plan::new(&mut specs)?;
    /// assert_eq!(plan.tensors()[0].name(), "a");
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub const fn tensors(&self) -> &'p [T] {
        self.tensors
    }

    /// The metadata pairs in written order, or `None` when the file has no
    /// `__metadata__` entry.
    ///
    /// ```
    /// use safetensors_nano::write::{Plan, TensorSpec};
    /// assert_eq!(Plan::new(&mut [] as &mut [TensorSpec])?.metadata(), None);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub const fn metadata(&self) -> Option<&'p [(&'p str, &'p str)]> {
        self.metadata
    }

    /// The tensors in written order, each with its data offsets.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let mut specs = [TensorSpec::new("a", Dtype::U16, &[2], 4), TensorSpec::new("b", Dtype::U8, &[1], 1)];
    /// let plan = Plan::new(&mut specs)?;
    /// let placed: Vec<_> = plan.iter().map(|t| (t.spec().name(), t.data_offsets())).collect();
    /// assert_eq!(placed, [("a", (0, 4)), ("b", (4, 5))]);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn iter(&self) -> Iter<'p, T> {
        Iter {
            tensors: self.tensors.iter(),
            offset: 0,
        }
    }

    /// The `data_offsets` of each tensor, in written order (relative to
    /// [`data_start`](Plan::data_start)).
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let mut specs = [TensorSpec::new("a", Dtype::I32, &[0], 0), TensorSpec::new("b", Dtype::I8, &[2], 2)];
    /// assert_eq!(Plan::new(&mut specs)?.offsets().collect::<Vec<_>>(), [(0, 0), (0, 2)]);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn offsets(&self) -> impl Iterator<Item = (u64, u64)> + 'p {
        self.iter().map(|t| t.data_offsets())
    }

    /// Writes the 8-byte length and the padded header (`8 + N` bytes).
    /// Use it to write the data yourself, or use a [`Writer`](super::Writer), which checks it.
    ///
    /// # Errors
    /// Whatever the sink reports; [`ErrorKind::Sink`] also if an
    /// [`AsSpec`] item changed its spec since planning.
    ///
    /// ```
    /// use safetensors_nano::write::{Plan, SliceSink, TensorSpec};
    /// let plan = Plan::new(&mut [] as &mut [TensorSpec])?;
    /// let mut buf = [0u8; 32];
    /// let mut sink = SliceSink::new(&mut buf);
    /// plan.write_header(&mut sink)?;
    /// assert_eq!(sink.into_written(), b"\x08\0\0\0\0\0\0\0{}      ");
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn write_header<S: Sink + ?Sized>(&self, sink: &mut S) -> Result<(), Error> {
        sink.write_all(&self.header_len.to_le_bytes())?;
        let mut checked = Checked {
            sink,
            left: self.json_len,
        };
        write_json(json_sink(&mut checked), self.tensors, self.metadata)?;
        if checked.left != 0 {
            return Err(ErrorKind::Sink.into());
        }
        let padding = self.header_len.saturating_sub(self.json_len);
        let spaces = [b' '; 7];
        let padding = usize::try_from(padding).unwrap_or(usize::MAX);
        checked
            .sink
            .write_all(spaces.get(..padding).ok_or(Error::new(ErrorKind::Sink))?)
    }

    pub(crate) fn check_data(&self) -> Result<(), Error>
    where
        T: AsTensor,
    {
        for (index, tensor) in self.tensors.iter().enumerate() {
            let expected = tensor.spec().byte_len();
            let found = tensor.data().len() as u64;
            if expected != found {
                return Err(at_index(
                    ErrorKind::DataLengthMismatch { expected, found },
                    index,
                ));
            }
        }
        Ok(())
    }
}

/// A sink adaptor that refuses to write more than the counted JSON length.
struct Checked<'s, S: ?Sized> {
    sink: &'s mut S,
    left: u64,
}

impl<S: Sink + ?Sized> Sink for Checked<'_, S> {
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.left = self
            .left
            .checked_sub(bytes.len() as u64)
            .ok_or(Error::new(ErrorKind::Sink))?;
        self.sink.write_all(bytes)
    }
}

/// One planned tensor: the caller's item and its data offsets.
///
/// ```
/// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
/// let mut specs = [TensorSpec::new("a", Dtype::U8, &[3], 3)];
/// let plan = Plan::new(&mut specs)?;
/// let first = plan.iter().next().unwrap();
/// assert_eq!((first.spec().name(), first.data_offsets(), first.byte_len()), ("a", (0, 3), 3));
/// # Ok::<(), safetensors_nano::Error>(())
/// ```
pub struct Placed<'p, T> {
    tensor: &'p T,
    begin: u64,
    end: u64,
}

impl<T> Clone for Placed<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Placed<'_, T> {}

impl<T: AsSpec> fmt::Debug for Placed<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Placed")
            .field("spec", &self.tensor.spec())
            .field("data_offsets", &(self.begin, self.end))
            .finish()
    }
}

impl<'p, T: AsSpec> Placed<'p, T> {
    pub(crate) fn new(tensor: &'p T, begin: u64) -> Self {
        let end = begin.saturating_add(tensor.spec().byte_len());
        Placed { tensor, begin, end }
    }

    /// The caller's item.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let mut specs = [TensorSpec::new("a", Dtype::U8, &[3], 3)];
    /// let plan = Plan::new(&mut specs)?;
    /// assert_eq!(plan.iter().next().unwrap().tensor().name(), "a");
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub const fn tensor(&self) -> &'p T {
        self.tensor
    }

    /// The item's spec.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let mut specs = [TensorSpec::new("a", Dtype::U8, &[3], 3)];
    /// let plan = Plan::new(&mut specs)?;
    /// assert_eq!(plan.iter().next().unwrap().spec().dtype(), Dtype::U8);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn spec(&self) -> TensorSpec<'p> {
        self.tensor.spec()
    }

    /// `(begin, end)` relative to the start of the data.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let mut specs = [TensorSpec::new("a", Dtype::U8, &[3], 3)];
    /// let plan = Plan::new(&mut specs)?;
    /// assert_eq!(plan.iter().next().unwrap().data_offsets(), (0, 3));
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub const fn data_offsets(&self) -> (u64, u64) {
        (self.begin, self.end)
    }

    /// Bytes of data.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
    /// let mut specs = [TensorSpec::new("a", Dtype::U16, &[3], 6)];
    /// let plan = Plan::new(&mut specs)?;
    /// assert_eq!(plan.iter().next().unwrap().byte_len(), 6);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub const fn byte_len(&self) -> u64 {
        self.end.saturating_sub(self.begin)
    }
}

/// Iterator over a [`Plan`]'s tensors, from [`Plan::iter`].
///
/// ```
/// use safetensors_nano::{Dtype, write::{Plan, TensorSpec}};
/// let mut specs = [TensorSpec::new("a", Dtype::U8, &[3], 3)];
/// assert_eq!(Plan::new(&mut specs)?.iter().count(), 1);
/// # Ok::<(), safetensors_nano::Error>(())
/// ```
pub struct Iter<'p, T> {
    tensors: core::slice::Iter<'p, T>,
    offset: u64,
}

impl<T> fmt::Debug for Iter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Iter")
            .field("left", &self.tensors.len())
            .field("offset", &self.offset)
            .finish()
    }
}

impl<'p, T: AsSpec> Iterator for Iter<'p, T> {
    type Item = Placed<'p, T>;

    fn next(&mut self) -> Option<Placed<'p, T>> {
        let placed = Placed::new(self.tensors.next()?, self.offset);
        self.offset = placed.end;
        Some(placed)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.tensors.size_hint()
    }
}

impl<T: AsSpec> ExactSizeIterator for Iter<'_, T> {}
