//! N-dimensional slices of a tensor, without allocating.
//!
//! A slice is one [`SliceIndex`] per dimension (missing trailing ones mean
//! [`SliceIndex::Full`]). It is checked once, up front; then an iterator
//! hands out the selected elements in row-major order as contiguous runs:
//! byte chunks of the data ([`TensorView::slice`] → [`SliceChunks`]) or
//! byte ranges of the buffer for readers that have not loaded the data
//! ([`TensorInfo::slice_ranges`] → [`SliceRanges`]).
//!
//! Every run has the same length: the innermost dimensions that are
//! selected whole, merged with the next one out when that one is a
//! step-1 range. Nothing is stored per dimension: the position of run `i`
//! is recomputed from `i` and the shape, so any rank works; the iterator
//! keeps the start of the current row of runs, so a run costs O(1) and a
//! new row O(rank).
//!
//! The iterators borrow the indices (lifetime `'i`) instead of copying
//! them: when an iterator outlives the statement that makes it, keep the
//! indices in a `let` (`let idx = [SliceIndex::Full, 2.into()];`).

use core::iter::{repeat, FusedIterator};
use core::ops::{Range, RangeFrom, RangeFull, RangeTo};

use crate::error::{Error, ErrorKind};
use crate::view::shape::Shape;
use crate::view::tensor::{TensorInfo, TensorView};

/// What to take along one dimension.
///
/// Build ranges from Rust range syntax (`(2..5).into()`, `(1..).into()`,
/// `(..3).into()`), and add a step with [`step_by`](SliceIndex::step_by).
///
/// ```
/// use safetensors_nano::SliceIndex;
/// assert_eq!(SliceIndex::from(2..5), SliceIndex::Range { start: 2, end: Some(5), step: 1 });
/// assert_eq!(SliceIndex::from(..).step_by(2), SliceIndex::Range { start: 0, end: None, step: 2 });
/// assert_eq!(SliceIndex::from(7), SliceIndex::Index(7));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum SliceIndex {
    /// The whole dimension (`..`); kept in the result.
    #[default]
    Full,
    /// One position; the dimension is dropped from the result (like
    /// `x[3]` in NumPy).
    Index(u64),
    /// Positions `start`, `start + step`, … below `end`; kept in the result.
    Range {
        /// First position.
        start: u64,
        /// Bound (exclusive); `None` means the size of the dimension.
        end: Option<u64>,
        /// Distance between positions, at least 1.
        step: u64,
    },
}

impl SliceIndex {
    /// The positions `start..end`, step 1 (usable in a `const`).
    ///
    /// ```
    /// use safetensors_nano::SliceIndex;
    /// const ROWS: SliceIndex = SliceIndex::range(1, 3);
    /// assert_eq!(ROWS, SliceIndex::from(1..3));
    /// ```
    pub const fn range(start: u64, end: u64) -> SliceIndex {
        SliceIndex::Range {
            start,
            end: Some(end),
            step: 1,
        }
    }

    /// The same selection, every `step`-th position: a `Full` becomes
    /// `0..` with that step, a `Range` gets that step, an `Index` (one
    /// position) is unchanged. A step of 0 is rejected when slicing.
    ///
    /// ```
    /// use safetensors_nano::SliceIndex;
    /// assert_eq!(SliceIndex::from(1..).step_by(3), SliceIndex::Range { start: 1, end: None, step: 3 });
    /// assert_eq!(SliceIndex::Index(4).step_by(3), SliceIndex::Index(4));
    /// ```
    pub const fn step_by(self, step: u64) -> SliceIndex {
        match self {
            SliceIndex::Full => SliceIndex::Range {
                start: 0,
                end: None,
                step,
            },
            SliceIndex::Range { start, end, .. } => SliceIndex::Range { start, end, step },
            SliceIndex::Index(i) => SliceIndex::Index(i),
        }
    }
}

impl From<u64> for SliceIndex {
    fn from(index: u64) -> Self {
        SliceIndex::Index(index)
    }
}

impl From<Range<u64>> for SliceIndex {
    fn from(r: Range<u64>) -> Self {
        SliceIndex::range(r.start, r.end)
    }
}

impl From<RangeFrom<u64>> for SliceIndex {
    fn from(r: RangeFrom<u64>) -> Self {
        SliceIndex::Range {
            start: r.start,
            end: None,
            step: 1,
        }
    }
}

impl From<RangeTo<u64>> for SliceIndex {
    fn from(r: RangeTo<u64>) -> Self {
        SliceIndex::range(0, r.end)
    }
}

impl From<RangeFull> for SliceIndex {
    fn from(_: RangeFull) -> Self {
        SliceIndex::Full
    }
}

/// One dimension's selection resolved against its size. Bounds are clamped
/// so this never fails; [`check`] says whether the index was valid.
#[derive(Clone, Copy)]
struct Axis {
    start: u64,
    count: u64,
    /// 1 whenever `count <= 1`, so "step 1" means "contiguous".
    step: u64,
    kept: bool,
}

impl Axis {
    fn new(index: SliceIndex, size: u64) -> Axis {
        let (start, end, step, kept) = match index {
            SliceIndex::Full => (0, size, 1, true),
            SliceIndex::Index(i) => (i, i.saturating_add(1), 1, false),
            SliceIndex::Range { start, end, step } => (start, end.unwrap_or(size), step, true),
        };
        let end = end.min(size);
        let start = start.min(end);
        let step = step.max(1);
        // end >= start after clamping; positions start, start+step, … <= end-1.
        let count = match end.wrapping_sub(start).checked_sub(1) {
            None => 0,
            Some(last) => last.checked_div(step).unwrap_or(0).saturating_add(1),
        };
        Axis {
            start,
            count,
            step: if count > 1 { step } else { 1 },
            kept,
        }
    }

    fn is_whole(&self, size: u64) -> bool {
        self.start == 0 && self.count == size
    }
}

/// Whether `index` is valid for a dimension of `size` (checks in this order:
/// index/end past the size, step 0, start past the end).
fn check(index: SliceIndex, size: u64, dim: u32) -> Result<(), ErrorKind> {
    let out_of_range = |value| Err(ErrorKind::SliceOutOfRange { dim, value, size });
    match index {
        SliceIndex::Full => Ok(()),
        SliceIndex::Index(i) if i >= size => out_of_range(i),
        SliceIndex::Index(_) => Ok(()),
        SliceIndex::Range { end: Some(end), .. } if end > size => out_of_range(end),
        SliceIndex::Range {
            start, end: None, ..
        } if start > size => out_of_range(start),
        SliceIndex::Range { step: 0, .. } => Err(ErrorKind::SliceInvalidRange { dim }),
        SliceIndex::Range {
            start,
            end: Some(end),
            ..
        } if start > end => Err(ErrorKind::SliceInvalidRange { dim }),
        SliceIndex::Range { .. } => Ok(()),
    }
}

/// Each dimension's size with its resolved selection, outermost first.
fn axes<'a, 'i>(
    shape: Shape<'a>,
    indices: &'i [SliceIndex],
) -> impl Iterator<Item = (u64, Axis)> + Clone + use<'a, 'i> {
    let indices = indices.iter().copied().chain(repeat(SliceIndex::Full));
    shape
        .iter()
        .zip(indices)
        .map(|(size, index)| (size, Axis::new(index, size)))
}

fn saturating_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Elements of a sub-byte dtype that make a whole number of bytes:
/// offsets and lengths must be multiples of this.
fn granule(bits: u64) -> u64 {
    match bits % 8 {
        0 => 1,
        4 => 2,
        2 | 6 => 4,
        _ => 8,
    }
}

/// Everything needed to place run `i`, computed once.
#[derive(Clone, Copy, Debug)]
struct Plan<'a, 'i> {
    shape: Shape<'a>,
    indices: &'i [SliceIndex],
    /// Bits per element.
    bits: u64,
    /// Byte offset added to every range.
    origin: u64,
    /// Dimensions `0..outer` are walked from run to run; the rest are merged into each run.
    outer: usize,
    /// Number of runs (0 for an empty slice).
    runs: u64,
    /// Elements per run.
    run_elements: u64,
    /// Element offset contributed by the merged dimensions (a partial step-1 one).
    base: u64,
    /// Elements of the whole tensor (only used when `runs > 0`).
    tensor_elements: u64,
    /// Elements of the result.
    elements: u64,
    /// Positions taken along the innermost walked dimension (1 if none).
    row_len: u64,
    /// Element distance between consecutive runs along it.
    row_step: u64,
}

/// Checks every index against its dimension; returns whether the slice is
/// empty and the last dimension it does not take whole.
fn scan(shape: Shape<'_>, indices: &[SliceIndex]) -> Result<(bool, Option<usize>), ErrorKind> {
    let mut empty = false;
    let mut last_partial = None;
    let all = indices.iter().copied().chain(repeat(SliceIndex::Full));
    for (dim, (size, index)) in shape.iter().zip(all).enumerate() {
        check(index, size, saturating_u32(dim))?;
        let axis = Axis::new(index, size);
        empty |= axis.count == 0;
        if !axis.is_whole(size) {
            last_partial = Some(dim);
        }
    }
    Ok((empty, last_partial))
}

impl<'a, 'i> Plan<'a, 'i> {
    fn new(info: &TensorInfo<'a>, indices: &'i [SliceIndex], origin: u64) -> Result<Self, Error> {
        let err = |kind| Error::new(kind).with_tensor(info.as_ref());
        let shape = info.shape();
        let rank = shape.rank();
        if indices.len() > rank {
            return Err(err(ErrorKind::SliceTooManyIndices {
                rank: saturating_u32(rank),
                given: saturating_u32(indices.len()),
            }));
        }
        let (empty, last_partial) = scan(shape, indices).map_err(err)?;
        let mut plan = Plan {
            shape,
            indices,
            bits: u64::from(info.dtype().bits()),
            origin,
            outer: 0,
            runs: 0,
            run_elements: 0,
            base: 0,
            tensor_elements: 0,
            elements: 0,
            row_len: 1,
            row_step: 0,
        };
        if empty {
            return Ok(plan);
        }
        // Not empty: every dimension is ≥ 1, so every product below is at
        // most the tensor's element count, which validation proved fits
        // (with its bit count) in a u64. The checks are belt and braces.
        let overflow = || err(ErrorKind::ValidationOverflow);
        let mul = |a: u64, b: u64| a.checked_mul(b).ok_or_else(overflow);
        let mut tail = 1u64; // product of the sizes after the last partial dimension
        let mut merged = None; // the selection on the last partial dimension
        plan.tensor_elements = 1;
        plan.elements = 1;
        for (dim, (size, axis)) in axes(shape, indices).enumerate() {
            plan.tensor_elements = mul(plan.tensor_elements, size)?;
            if axis.kept {
                plan.elements = mul(plan.elements, axis.count)?;
            }
            match last_partial {
                Some(p) if dim > p => tail = mul(tail, size)?,
                Some(p) if dim == p => merged = Some(axis),
                _ => {}
            }
        }
        mul(plan.tensor_elements, plan.bits)?;
        match (last_partial, merged) {
            (Some(p), Some(axis)) if axis.step == 1 => {
                plan.outer = p;
                plan.run_elements = mul(axis.count, tail)?;
                plan.base = mul(axis.start, tail)?;
            }
            (Some(p), _) => {
                plan.outer = p.saturating_add(1);
                plan.run_elements = tail;
            }
            (None, _) => plan.run_elements = plan.tensor_elements,
        }
        plan.runs = 1;
        let mut stride = plan.tensor_elements;
        for (size, axis) in axes(shape, indices).take(plan.outer) {
            plan.runs = mul(plan.runs, axis.count)?;
            stride = stride.checked_div(size).unwrap_or(0);
            plan.row_len = axis.count;
            // step × stride ≤ size × stride ≤ tensor_elements.
            plan.row_step = axis.step.wrapping_mul(stride);
        }
        if !plan.byte_aligned() {
            return Err(err(ErrorKind::SliceSubByte));
        }
        Ok(plan)
    }

    /// For sub-byte dtypes: whether every run starts and ends on a byte.
    /// Run starts are `first + Σ digit_d × step_d × stride_d`, so it is
    /// enough that the first start, the run length and every walked step
    /// are multiples of the granule.
    fn byte_aligned(&self) -> bool {
        let g = granule(self.bits);
        if g == 1 {
            return true;
        }
        let whole = |elements: u64| elements.checked_rem(g) == Some(0);
        let mut ok = whole(self.run_elements) && whole(self.first_element(0));
        let mut stride = self.tensor_elements;
        for (size, axis) in axes(self.shape, self.indices).take(self.outer) {
            stride = stride.checked_div(size).unwrap_or(0);
            if axis.count > 1 {
                // step × stride < size × stride ≤ tensor_elements: no overflow.
                ok &= whole(axis.step.wrapping_mul(stride));
            }
        }
        ok
    }

    /// Element offset (in the tensor) where run `run` starts; `run < runs`.
    fn first_element(&self, run: u64) -> u64 {
        let mut offset = self.base;
        let mut stride = self.tensor_elements;
        let mut radix = self.runs;
        for (size, axis) in axes(self.shape, self.indices).take(self.outer) {
            stride = stride.checked_div(size).unwrap_or(0);
            radix = radix.checked_div(axis.count).unwrap_or(0);
            let digit = run
                .checked_div(radix)
                .and_then(|q| q.checked_rem(axis.count))
                .unwrap_or(0);
            // position < size and offset < tensor_elements: no overflow.
            let position = axis.start.wrapping_add(digit.wrapping_mul(axis.step));
            offset = offset.wrapping_add(position.wrapping_mul(stride));
        }
        offset
    }

    fn run_bytes(&self) -> u64 {
        // run_elements × bits fits (checked in new) and is a whole number of bytes.
        self.run_elements.wrapping_mul(self.bits) / 8
    }

    /// Byte range of a run that starts at element `first`, offset by `origin`.
    fn range_at(&self, first: u64) -> (u64, u64) {
        // first × bits < tensor_elements × bits, which fits.
        let begin = (first.wrapping_mul(self.bits) / 8).saturating_add(self.origin);
        (begin, begin.saturating_add(self.run_bytes()))
    }

    fn shape(&self) -> impl Iterator<Item = u64> + Clone + use<'a, 'i> {
        axes(self.shape, self.indices).filter_map(|(_, axis)| axis.kept.then_some(axis.count))
    }
}

/// Byte ranges of a slice, relative to the start of the file's byte buffer
/// (like [`TensorInfo::data_offsets`]), in row-major order; all of the same
/// length. From [`TensorInfo::slice_ranges`].
///
/// ```
/// use safetensors_nano::{Header, SliceIndex, Status, Table};
/// let h = br#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"m":{"dtype":"I16","shape":[3,2],"data_offsets":[4,16]}}"#;
/// let mut prefix = (h.len() as u64).to_le_bytes().to_vec();
/// prefix.extend_from_slice(h); // the header only: no data loaded
/// let Status::Complete(header) = Header::parse(&prefix, Table::<2>::new()).unwrap() else { unreachable!() };
/// let m = header.tensor("m").unwrap();
/// // column 1 of each row: one I16 at a time
/// let indices = [SliceIndex::Full, 1.into()];
/// let ranges = m.slice_ranges(&indices).unwrap();
/// assert_eq!(ranges.shape().collect::<Vec<_>>(), [3]);
/// assert_eq!(ranges.collect::<Vec<_>>(), [(6, 8), (10, 12), (14, 16)]);
/// ```
#[derive(Clone, Debug)]
pub struct SliceRanges<'a, 'i> {
    plan: Plan<'a, 'i>,
    front: u64,
    back: u64,
    /// The last row (runs `row × row_len ..`) placed, and where it starts:
    /// runs within a row are found in O(1), a new row costs O(rank).
    row: Option<(u64, u64)>,
}

impl<'a, 'i> SliceRanges<'a, 'i> {
    fn new(plan: Plan<'a, 'i>) -> Self {
        SliceRanges {
            plan,
            front: 0,
            back: plan.runs,
            row: None,
        }
    }

    /// Byte range of run `run` (< runs).
    fn range(&mut self, run: u64) -> (u64, u64) {
        let plan = &self.plan;
        let row = run.checked_div(plan.row_len).unwrap_or(0);
        let digit = run.checked_rem(plan.row_len).unwrap_or(0);
        let start = match self.row {
            Some((r, start)) if r == row => start,
            _ => {
                // row × row_len ≤ run < runs.
                let start = plan.first_element(row.wrapping_mul(plan.row_len));
                self.row = Some((row, start));
                start
            }
        };
        // The offset of a run inside the tensor: no overflow.
        plan.range_at(start.wrapping_add(digit.wrapping_mul(plan.row_step)))
    }

    /// The shape of the result: one entry per dimension not selected by an
    /// [`SliceIndex::Index`].
    ///
    /// ```
    /// # use safetensors_nano::{Header, SliceIndex, Status, Table};
    /// # let h = br#"{"m":{"dtype":"U8","shape":[4,5,6],"data_offsets":[0,120]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let Status::Complete(header) = Header::parse(&p, Table::<1>::new()).unwrap() else { unreachable!() };
    /// let m = header.tensor("m").unwrap(); // shape [4, 5, 6]
    /// let indices = [(1..3).into(), 2.into(), SliceIndex::Full.step_by(4)];
    /// let r = m.slice_ranges(&indices).unwrap();
    /// assert_eq!(r.shape().collect::<Vec<_>>(), [2, 2]);
    /// ```
    pub fn shape(&self) -> impl Iterator<Item = u64> + Clone + use<'a, 'i> {
        self.plan.shape()
    }

    /// Number of dimensions of the result.
    ///
    /// ```
    /// # use safetensors_nano::{Header, SliceIndex, Status, Table};
    /// # let h = br#"{"m":{"dtype":"U8","shape":[4,5],"data_offsets":[0,20]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let Status::Complete(header) = Header::parse(&p, Table::<1>::new()).unwrap() else { unreachable!() };
    /// let m = header.tensor("m").unwrap();
    /// assert_eq!(m.slice_ranges(&[0.into()]).unwrap().rank(), 1);
    /// ```
    pub fn rank(&self) -> usize {
        self.shape().count()
    }

    /// Number of elements in the result (0 if any result dimension is 0).
    ///
    /// ```
    /// # use safetensors_nano::{Header, SliceIndex, Status, Table};
    /// # let h = br#"{"m":{"dtype":"U8","shape":[4,5],"data_offsets":[0,20]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let Status::Complete(header) = Header::parse(&p, Table::<1>::new()).unwrap() else { unreachable!() };
    /// let m = header.tensor("m").unwrap();
    /// assert_eq!(m.slice_ranges(&[(1..3).into(), (2..).into()]).unwrap().element_count(), 6);
    /// ```
    pub fn element_count(&self) -> u64 {
        self.plan.elements
    }

    /// Bytes in the result: the sum of all range lengths.
    ///
    /// ```
    /// # use safetensors_nano::{Header, SliceIndex, Status, Table};
    /// # let h = br#"{"m":{"dtype":"F32","shape":[4,5],"data_offsets":[0,80]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let Status::Complete(header) = Header::parse(&p, Table::<1>::new()).unwrap() else { unreachable!() };
    /// let m = header.tensor("m").unwrap();
    /// assert_eq!(m.slice_ranges(&[3.into()]).unwrap().byte_len(), 20);
    /// ```
    pub fn byte_len(&self) -> u64 {
        // elements ≤ tensor elements, whose bit count fits (checked in Plan::new).
        self.plan.elements.wrapping_mul(self.plan.bits) / 8
    }

    /// Number of ranges in all (not only those left to iterate).
    ///
    /// ```
    /// # use safetensors_nano::{Header, SliceIndex, Status, Table};
    /// # let h = br#"{"m":{"dtype":"U8","shape":[4,5],"data_offsets":[0,20]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let Status::Complete(header) = Header::parse(&p, Table::<1>::new()).unwrap() else { unreachable!() };
    /// let m = header.tensor("m").unwrap();
    /// assert_eq!(m.slice_ranges(&[(1..3).into()]).unwrap().run_count(), 1); // rows 1 and 2 are contiguous
    /// assert_eq!(m.slice_ranges(&[(1..3).into(), (0..2).into()]).unwrap().run_count(), 2);
    /// ```
    pub fn run_count(&self) -> u64 {
        self.plan.runs
    }

    /// Length in bytes of every range (0 when there are none).
    ///
    /// ```
    /// # use safetensors_nano::{Header, SliceIndex, Status, Table};
    /// # let h = br#"{"m":{"dtype":"U8","shape":[4,5],"data_offsets":[0,20]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let Status::Complete(header) = Header::parse(&p, Table::<1>::new()).unwrap() else { unreachable!() };
    /// let m = header.tensor("m").unwrap();
    /// assert_eq!(m.slice_ranges(&[SliceIndex::Full, (0..2).into()]).unwrap().run_len(), 2);
    /// ```
    pub fn run_len(&self) -> u64 {
        self.plan.run_bytes()
    }
}

impl Iterator for SliceRanges<'_, '_> {
    type Item = (u64, u64);

    fn next(&mut self) -> Option<(u64, u64)> {
        if self.front >= self.back {
            return None;
        }
        let run = self.front;
        self.front = run.saturating_add(1);
        Some(self.range(run))
    }

    fn nth(&mut self, n: usize) -> Option<(u64, u64)> {
        self.front = self.front.saturating_add(n as u64).min(self.back);
        self.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match usize::try_from(self.back.saturating_sub(self.front)) {
            Ok(n) => (n, Some(n)),
            Err(_) => (usize::MAX, None),
        }
    }
}

impl DoubleEndedIterator for SliceRanges<'_, '_> {
    fn next_back(&mut self) -> Option<(u64, u64)> {
        if self.front >= self.back {
            return None;
        }
        self.back = self.back.saturating_sub(1);
        Some(self.range(self.back))
    }
}

impl FusedIterator for SliceRanges<'_, '_> {}

/// The bytes of a slice as contiguous chunks borrowed from the data, in
/// row-major order; all of the same length. From [`TensorView::slice`].
///
/// ```
/// use safetensors_nano::{SafeTensors, SliceIndex, Table};
/// let h = br#"{"m":{"dtype":"U8","shape":[3,4],"data_offsets":[0,12]}}"#;
/// let mut file = (h.len() as u64).to_le_bytes().to_vec();
/// file.extend_from_slice(h);
/// file.extend(0..12u8); // m = [[0,1,2,3],[4,5,6,7],[8,9,10,11]]
/// let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
/// let m = st.tensor("m").unwrap();
/// let rows: Vec<&[u8]> = m.slice(&[(1..).into()]).unwrap().collect();
/// assert_eq!(rows, [&[4, 5, 6, 7, 8, 9, 10, 11][..]]);
/// let cols: Vec<&[u8]> = m.slice(&[SliceIndex::Full, (1..3).into()]).unwrap().collect();
/// assert_eq!(cols, [&[1, 2][..], &[5, 6], &[9, 10]]);
/// ```
#[derive(Clone)]
pub struct SliceChunks<'a, 'i> {
    ranges: SliceRanges<'a, 'i>,
    data: &'a [u8],
}

impl<'a, 'i> SliceChunks<'a, 'i> {
    /// The shape of the result: one entry per dimension not selected by an
    /// [`SliceIndex::Index`].
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, SliceIndex, Table};
    /// # let h = br#"{"m":{"dtype":"U8","shape":[3,4],"data_offsets":[0,12]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.extend(0..12u8);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// let m = st.tensor("m").unwrap(); // shape [3, 4]
    /// let indices = [SliceIndex::Full.step_by(2), 3.into()];
    /// let s = m.slice(&indices).unwrap();
    /// assert_eq!(s.shape().collect::<Vec<_>>(), [2]);
    /// assert_eq!(s.flatten().copied().collect::<Vec<u8>>(), [3, 11]);
    /// ```
    pub fn shape(&self) -> impl Iterator<Item = u64> + Clone + use<'a, 'i> {
        self.ranges.shape()
    }

    /// Number of dimensions of the result.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, SliceIndex, Table};
    /// # let h = br#"{"m":{"dtype":"U8","shape":[3,4],"data_offsets":[0,12]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.extend(0..12u8);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// let m = st.tensor("m").unwrap();
    /// assert_eq!(m.slice(&[1.into(), 2.into()]).unwrap().rank(), 0);
    /// ```
    pub fn rank(&self) -> usize {
        self.ranges.rank()
    }

    /// Number of elements in the result.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, SliceIndex, Table};
    /// # let h = br#"{"m":{"dtype":"U8","shape":[3,4],"data_offsets":[0,12]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.extend(0..12u8);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// let m = st.tensor("m").unwrap();
    /// assert_eq!(m.slice(&[(0..2).into(), (1..).into()]).unwrap().element_count(), 6);
    /// ```
    pub fn element_count(&self) -> u64 {
        self.ranges.element_count()
    }

    /// Bytes in the result: the sum of all chunk lengths.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, SliceIndex, Table};
    /// # let h = br#"{"m":{"dtype":"U8","shape":[3,4],"data_offsets":[0,12]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.extend(0..12u8);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// let m = st.tensor("m").unwrap();
    /// let indices = [(0..2).into(), (1..).into()];
    /// let s = m.slice(&indices).unwrap();
    /// assert_eq!(s.byte_len(), 6);
    /// assert_eq!(s.map(<[u8]>::len).sum::<usize>(), 6);
    /// ```
    pub fn byte_len(&self) -> u64 {
        self.ranges.byte_len()
    }

    /// Length in bytes of every chunk (0 when there are none).
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, SliceIndex, Table};
    /// # let h = br#"{"m":{"dtype":"U8","shape":[3,4],"data_offsets":[0,12]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.extend(0..12u8);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// let m = st.tensor("m").unwrap();
    /// assert_eq!(m.slice(&[SliceIndex::Full, (1..4).into()]).unwrap().chunk_len(), 3);
    /// ```
    pub fn chunk_len(&self) -> u64 {
        self.ranges.run_len()
    }
}

impl<'a> SliceChunks<'a, '_> {
    fn chunk(&self, (begin, end): (u64, u64)) -> &'a [u8] {
        // Ranges lie inside the tensor's data by construction.
        usize::try_from(begin)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(b, e)| self.data.get(b..e))
            .unwrap_or_default()
    }
}

impl<'a> Iterator for SliceChunks<'a, '_> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        self.ranges.next().map(|r| self.chunk(r))
    }

    fn nth(&mut self, n: usize) -> Option<&'a [u8]> {
        self.ranges.nth(n).map(|r| self.chunk(r))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.ranges.size_hint()
    }
}

impl DoubleEndedIterator for SliceChunks<'_, '_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.ranges.next_back().map(|r| self.chunk(r))
    }
}

/// Chunks are non-empty, disjoint parts of a slice in memory, so their
/// number fits in `usize`.
impl ExactSizeIterator for SliceChunks<'_, '_> {}

impl FusedIterator for SliceChunks<'_, '_> {}

impl core::fmt::Debug for SliceChunks<'_, '_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SliceChunks")
            .field("shape", &DebugIter(self.shape()))
            .field("chunk_len", &self.chunk_len())
            .field(
                "remaining",
                &self.ranges.back.saturating_sub(self.ranges.front),
            )
            .finish()
    }
}

struct DebugIter<I>(I);

impl<I: Iterator<Item = u64> + Clone> core::fmt::Debug for DebugIter<I> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.0.clone()).finish()
    }
}

impl<'a> TensorInfo<'a> {
    /// Where the bytes of a slice lie in the file's byte buffer, for readers
    /// that fetch them lazily (add [`Header::data_start`](crate::Header::data_start)
    /// for file offsets). `indices` holds one [`SliceIndex`] per leading
    /// dimension; the rest are taken whole.
    ///
    /// # Errors
    /// With this tensor attached:
    /// [`ErrorKind::SliceTooManyIndices`] for more indices than dimensions;
    /// [`ErrorKind::SliceOutOfRange`] for an index ≥ the size, or a bound
    /// past it; [`ErrorKind::SliceInvalidRange`] for a step of 0 or
    /// `start > end`; [`ErrorKind::SliceSubByte`] when a sub-byte dtype
    /// (`F4`, `F6_*`) would need a range that starts or ends inside a byte.
    ///
    /// ```
    /// use safetensors_nano::{ErrorKind, Header, SliceIndex, Status, Table};
    /// let h = br#"{"q":{"dtype":"F4","shape":[2,4],"data_offsets":[0,4]}}"#;
    /// let mut prefix = (h.len() as u64).to_le_bytes().to_vec();
    /// prefix.extend_from_slice(h);
    /// let Status::Complete(header) = Header::parse(&prefix, Table::<1>::new()).unwrap() else { unreachable!() };
    /// let q = header.tensor("q").unwrap();
    /// assert_eq!(q.slice_ranges(&[1.into()]).unwrap().collect::<Vec<_>>(), [(2, 4)]);
    /// let half_byte = q.slice_ranges(&[SliceIndex::Full, (0..1).into()]).unwrap_err();
    /// assert_eq!(half_byte.kind(), ErrorKind::SliceSubByte);
    /// let err = q.slice_ranges(&[2.into()]).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::SliceOutOfRange { dim: 0, value: 2, size: 2 });
    /// assert_eq!(err.tensor_name(header.json()).unwrap(), "q");
    /// ```
    pub fn slice_ranges<'i>(
        &self,
        indices: &'i [SliceIndex],
    ) -> Result<SliceRanges<'a, 'i>, Error> {
        Plan::new(self, indices, self.data_offsets().0).map(SliceRanges::new)
    }
}

impl<'a> TensorView<'a> {
    /// The bytes of a slice, as contiguous chunks borrowed from the data.
    /// `indices` holds one [`SliceIndex`] per leading dimension; the rest
    /// are taken whole. Nothing is allocated; the chunks borrow the data
    /// and `indices`.
    ///
    /// # Errors
    /// As [`TensorInfo::slice_ranges`].
    ///
    /// ```
    /// use safetensors_nano::{SafeTensors, SliceIndex, Table};
    /// let h = br#"{"x":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}}"#;
    /// let mut file = (h.len() as u64).to_le_bytes().to_vec();
    /// file.extend_from_slice(h);
    /// for v in 0..6 { file.extend_from_slice(&(v as f32).to_le_bytes()); }
    /// let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// let x = st.tensor("x").unwrap();
    /// // x[:, ::2] = [[0, 2], [3, 5]]: one element per chunk
    /// let values: Vec<f32> = x
    ///     .slice(&[SliceIndex::Full, SliceIndex::Full.step_by(2)])
    ///     .unwrap()
    ///     .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
    ///     .collect();
    /// assert_eq!(values, [0.0, 2.0, 3.0, 5.0]);
    /// ```
    pub fn slice<'i>(&self, indices: &'i [SliceIndex]) -> Result<SliceChunks<'a, 'i>, Error> {
        let plan = Plan::new(&self.info(), indices, 0)?;
        Ok(SliceChunks {
            ranges: SliceRanges::new(plan),
            data: self.data(),
        })
    }
}
