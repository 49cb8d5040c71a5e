//! What the caller tells the writer about each tensor, the one name a
//! tensor may not have, and the errors that point at a tensor of the
//! caller's list.

use crate::dtype::Dtype;
use crate::error::{Error, ErrorKind, TensorRef};
use crate::view::tensor::{TensorInfo, TensorView};

/// The reserved header key for metadata.
pub(crate) const METADATA_KEY: &str = "__metadata__";

/// An error about the tensor at `index` of the caller's slice.
pub(crate) fn at_index(kind: ErrorKind, index: usize) -> Error {
    Error::new(kind).with_tensor(TensorRef::Index(u32::try_from(index).unwrap_or(u32::MAX)))
}

/// One tensor to write, without its data: name, dtype, shape, and the number
/// of bytes the caller will supply.
///
/// A `Plan` checks that `byte_len` equals what `shape` × `dtype` need; the
/// [`Writer`](super::Writer) then takes exactly that many bytes for it.
///
/// ```
/// use safetensors_nano::Dtype;
/// use safetensors_nano::write::TensorSpec;
/// let spec = TensorSpec::new("w", Dtype::F32, &[2, 3], 24);
/// assert_eq!((spec.name(), spec.dtype(), spec.shape(), spec.byte_len()), ("w", Dtype::F32, &[2u64, 3][..], 24));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorSpec<'a> {
    name: &'a str,
    dtype: Dtype,
    shape: &'a [u64],
    byte_len: u64,
}

impl<'a> TensorSpec<'a> {
    /// A spec with the byte length the caller will supply (checked when planned).
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::TensorSpec};
    /// let scalar = TensorSpec::new("step", Dtype::I64, &[], 8);
    /// assert_eq!(scalar.shape(), &[] as &[u64]);
    /// ```
    pub const fn new(name: &'a str, dtype: Dtype, shape: &'a [u64], byte_len: u64) -> Self {
        TensorSpec {
            name,
            dtype,
            shape,
            byte_len,
        }
    }

    /// A spec whose byte length is computed from `shape` × `dtype`.
    ///
    /// # Errors
    /// [`ValidationOverflow`](ErrorKind::ValidationOverflow) when the element
    /// or bit count overflows `u64`; [`MisalignedSlice`](ErrorKind::MisalignedSlice)
    /// when a sub-byte dtype's bits are not a whole number of bytes.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, ErrorKind, write::TensorSpec};
    /// assert_eq!(TensorSpec::from_shape("q", Dtype::F4, &[4, 3])?.byte_len(), 6);
    /// assert_eq!(
    ///     TensorSpec::from_shape("q", Dtype::F4, &[3]).unwrap_err().kind(),
    ///     ErrorKind::MisalignedSlice { elements: 3 }
    /// );
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn from_shape(name: &'a str, dtype: Dtype, shape: &'a [u64]) -> Result<Self, Error> {
        let byte_len = expected_byte_len(dtype, shape)?;
        Ok(TensorSpec::new(name, dtype, shape, byte_len))
    }

    /// The tensor's name.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::TensorSpec};
    /// assert_eq!(TensorSpec::new("a.b", Dtype::U8, &[1], 1).name(), "a.b");
    /// ```
    pub const fn name(&self) -> &'a str {
        self.name
    }

    /// The element type.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::TensorSpec};
    /// assert_eq!(TensorSpec::new("a", Dtype::BF16, &[1], 2).dtype(), Dtype::BF16);
    /// ```
    pub const fn dtype(&self) -> Dtype {
        self.dtype
    }

    /// The dimensions (`[]` for a scalar).
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::TensorSpec};
    /// assert_eq!(TensorSpec::new("a", Dtype::U8, &[0, 7], 0).shape(), &[0, 7]);
    /// ```
    pub const fn shape(&self) -> &'a [u64] {
        self.shape
    }

    /// The number of data bytes the caller will supply.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::TensorSpec};
    /// assert_eq!(TensorSpec::new("a", Dtype::F16, &[3], 6).byte_len(), 6);
    /// ```
    pub const fn byte_len(&self) -> u64 {
        self.byte_len
    }

    /// Checks `byte_len` against `shape` × `dtype` (the rules of the reader:
    /// a zero dimension makes an empty tensor whatever the others are).
    pub(crate) fn check(&self) -> Result<(), Error> {
        if self.name == METADATA_KEY {
            return Err(ErrorKind::ReservedName.into());
        }
        let expected = expected_byte_len(self.dtype, self.shape)?;
        if expected == self.byte_len {
            Ok(())
        } else {
            Err(ErrorKind::DataLengthMismatch {
                expected,
                found: self.byte_len,
            }
            .into())
        }
    }
}

/// Bytes that `shape` × `dtype` need.
fn expected_byte_len(dtype: Dtype, shape: &[u64]) -> Result<u64, Error> {
    let elements = if shape.contains(&0) {
        0
    } else {
        shape
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(d))
            .ok_or(Error::new(ErrorKind::ValidationOverflow))?
    };
    let bits = elements
        .checked_mul(u64::from(dtype.bits()))
        .ok_or(Error::new(ErrorKind::ValidationOverflow))?;
    if bits % 8 == 0 {
        Ok(bits / 8)
    } else {
        Err(ErrorKind::MisalignedSlice { elements }.into())
    }
}

/// A tensor with its data in one slice, for the one-shot writers.
///
/// ```
/// use safetensors_nano::{Dtype, write::Tensor};
/// let data = [1u8, 2, 3];
/// let t = Tensor::new("x", Dtype::U8, &[3], &data);
/// assert_eq!(t.spec().byte_len(), 3);
/// assert_eq!(t.data(), &[1, 2, 3]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tensor<'a> {
    spec: TensorSpec<'a>,
    data: &'a [u8],
}

impl<'a> Tensor<'a> {
    /// A tensor whose data is `data` (little-endian element bytes; its length
    /// is checked against `shape` × `dtype` when planned).
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::Tensor};
    /// let y: [f32; 2] = [1.0, -2.0];
    /// let t = Tensor::new("y", Dtype::F32, &[2], bytemuck::cast_slice(&y));
    /// assert_eq!(t.data().len(), 8);
    /// ```
    pub const fn new(name: &'a str, dtype: Dtype, shape: &'a [u64], data: &'a [u8]) -> Self {
        Tensor {
            spec: TensorSpec::new(name, dtype, shape, data.len() as u64),
            data,
        }
    }

    /// The tensor's spec (its `byte_len` is the data length).
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::Tensor};
    /// assert_eq!(Tensor::new("b", Dtype::BOOL, &[2], &[0, 1]).spec().name(), "b");
    /// ```
    pub const fn spec(&self) -> TensorSpec<'a> {
        self.spec
    }

    /// The data bytes.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::Tensor};
    /// assert_eq!(Tensor::new("b", Dtype::BOOL, &[2], &[0, 1]).data(), &[0, 1]);
    /// ```
    pub const fn data(&self) -> &'a [u8] {
        self.data
    }
}

/// A tensor of a parsed file, as the writer takes it: the read-to-write
/// bridge. Copying or filtering tensors into a new file needs no
/// hand-copied names or shapes: the name and the data stay borrowed from
/// the file, the dims are copied from the header into `RANK` inline slots
/// (8 by default; the reference has no limit, real models use up to 5 or
/// so), so nothing is allocated. It is an [`AsSpec`] and an [`AsTensor`]:
/// put a slice of them in a [`Plan`](super::Plan).
///
/// Made from a [`TensorView`] (with its data, for the one-shot writers) or
/// a [`TensorInfo`] (header only, for the streaming
/// [`Writer`](super::Writer), which takes the data as it comes);
/// [`source`](Existing::source) keeps what the header said, e.g. where to
/// read the data from.
///
/// ```
/// use safetensors_nano::{SafeTensors, Table};
/// use safetensors_nano::write::{serialize_to_slice, Existing};
/// let h = br#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[1,1],"data_offsets":[2,3]}}"#;
/// let mut file = (h.len() as u64).to_le_bytes().to_vec();
/// file.extend_from_slice(h);
/// file.extend_from_slice(&[1, 2, 3]);
/// let st = SafeTensors::parse(&file, Table::<2>::new())?;
/// // Keep "b" only.
/// let mut kept: Vec<Existing<'_>> = st.iter().filter(|t| t.name() == "b").filter_map(|t| Existing::from_view(&t)).collect();
/// let mut buf = [0u8; 128];
/// let out = serialize_to_slice(&mut kept, None, &mut buf)?;
/// let b = SafeTensors::parse(out, Table::<1>::new())?.try_tensor("b")?;
/// assert_eq!(b.shape(), [1, 1]);
/// assert_eq!(b.data(), &[3]);
/// # Ok::<(), safetensors_nano::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Existing<'a, const RANK: usize = 8> {
    source: TensorInfo<'a>,
    name: &'a str,
    dtype: Dtype,
    dims: [u64; RANK],
    rank: usize,
    byte_len: u64,
    data: &'a [u8],
}

impl<'a, const RANK: usize> Existing<'a, RANK> {
    /// The tensor with its data, under its own name. `None` when its rank
    /// is over `RANK`, or its name has JSON escapes (then it is not a
    /// `&str` in the file: decode it and use
    /// [`with_name`](Existing::with_name)).
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table, write::Existing};
    /// # let h = br#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.extend_from_slice(&[1, 2]);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new())?;
    /// let a: Existing<'_> = Existing::from_view(&st.tensor("a").unwrap()).unwrap();
    /// assert_eq!((a.spec().name(), a.spec().shape(), a.data()), ("a", &[2u64][..], &[1, 2][..]));
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn from_view(view: &TensorView<'a>) -> Option<Self> {
        let info = view.info();
        let mut t = Existing::with_name(&info, info.name().as_str()?)?;
        t.data = view.data();
        Some(t)
    }

    /// The tensor without its data (the streaming
    /// [`Writer`](super::Writer) takes the data), under its own name.
    /// `None` as for [`from_view`](Existing::from_view).
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table, write::Existing};
    /// # let h = br#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let header = Header::parse(&p, Table::<1>::new())?.complete().unwrap();
    /// let a: Existing<'_, 4> = Existing::from_info(&header.tensor("a").unwrap()).unwrap();
    /// assert_eq!(a.spec().byte_len(), 2);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn from_info(info: &TensorInfo<'a>) -> Option<Self> {
        Existing::with_name(info, info.name().as_str()?)
    }

    /// The tensor without its data, under another name (a rename, or the
    /// decoded name of one with escapes). `None` when its rank is over
    /// `RANK`.
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table, write::Existing};
    /// # let h = br#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let header = Header::parse(&p, Table::<1>::new())?.complete().unwrap();
    /// let a: Existing<'_> = Existing::with_name(&header.tensor("a").unwrap(), "model.a").unwrap();
    /// assert_eq!(a.spec().name(), "model.a");
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn with_name(info: &TensorInfo<'a>, name: &'a str) -> Option<Self> {
        let mut dims = [0; RANK];
        let rank = info.shape().copy_into(&mut dims)?.len();
        Some(Existing {
            source: *info,
            name,
            dtype: info.dtype(),
            dims,
            rank,
            byte_len: info.byte_len(),
            data: &[],
        })
    }

    /// The same tensor written as `dtype` (convert its data with
    /// [`convert_into`](super::convert_into)): the byte length follows;
    /// the data, no longer the right bytes, is dropped.
    ///
    /// # Errors
    /// As [`TensorSpec::from_shape`].
    ///
    /// ```
    /// # use safetensors_nano::{Dtype, Header, Status, Table, write::Existing};
    /// # let h = br#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let header = Header::parse(&p, Table::<1>::new())?.complete().unwrap();
    /// let a: Existing<'_> = Existing::from_info(&header.tensor("a").unwrap()).unwrap();
    /// assert_eq!(a.with_dtype(Dtype::BF16)?.spec().byte_len(), 4);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn with_dtype(mut self, dtype: Dtype) -> Result<Self, Error> {
        let shape = self.dims.get(..self.rank).unwrap_or_default();
        self.byte_len = expected_byte_len(dtype, shape)?;
        self.dtype = dtype;
        self.data = &[];
        Ok(self)
    }

    /// What the file's header says of the tensor (its name, dtype and
    /// data offsets there).
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table, write::Existing};
    /// # let h = br#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let header = Header::parse(&p, Table::<1>::new())?.complete().unwrap();
    /// let a: Existing<'_> = Existing::with_name(&header.tensor("a").unwrap(), "b").unwrap();
    /// assert_eq!(a.source().name(), "a");
    /// assert_eq!(a.source().data_offsets(), (0, 2));
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn source(&self) -> TensorInfo<'a> {
        self.source
    }

    /// What the writer gets: the name, dtype, shape and byte length to
    /// write.
    ///
    /// ```
    /// # use safetensors_nano::{Dtype, Header, Status, Table, write::Existing};
    /// # let h = br#"{"a":{"dtype":"U8","shape":[2,1],"data_offsets":[0,2]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let header = Header::parse(&p, Table::<1>::new())?.complete().unwrap();
    /// let a: Existing<'_> = Existing::from_info(&header.tensor("a").unwrap()).unwrap();
    /// assert_eq!(a.spec().shape(), &[2, 1]);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn spec(&self) -> TensorSpec<'_> {
        let shape = self.dims.get(..self.rank).unwrap_or_default();
        TensorSpec::new(self.name, self.dtype, shape, self.byte_len)
    }

    /// The data: the tensor's bytes in the file when made
    /// [`from_view`](Existing::from_view), else empty.
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table, write::Existing};
    /// # let h = br#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let header = Header::parse(&p, Table::<1>::new())?.complete().unwrap();
    /// let a: Existing<'_> = Existing::from_info(&header.tensor("a").unwrap()).unwrap();
    /// assert!(a.data().is_empty());
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn data(&self) -> &'a [u8] {
        self.data
    }
}

impl<const RANK: usize> AsSpec for Existing<'_, RANK> {
    fn spec(&self) -> TensorSpec<'_> {
        Existing::spec(self)
    }
}

impl<const RANK: usize> AsTensor for Existing<'_, RANK> {
    fn data(&self) -> &[u8] {
        self.data
    }
}

/// Anything a [`Plan`](super::Plan) can order: it yields a [`TensorSpec`].
///
/// Implement it on your own type to carry extra fields (a source index, a
/// file handle) through the in-place sort. `spec()` must return the same
/// value every time it is called on the same item; if it does not, writing
/// fails with an error (never a panic).
///
/// ```
/// use safetensors_nano::{Dtype, write::{AsSpec, Plan, TensorSpec}};
/// struct Entry { spec: TensorSpec<'static>, source: usize }
/// impl AsSpec for Entry {
///     fn spec(&self) -> TensorSpec<'_> { self.spec }
/// }
/// let mut entries = [
///     Entry { spec: TensorSpec::new("b", Dtype::U8, &[1], 1), source: 0 },
///     Entry { spec: TensorSpec::new("a", Dtype::U8, &[1], 1), source: 1 },
/// ];
/// let plan = Plan::new(&mut entries)?;
/// let order: Vec<usize> = plan.tensors().iter().map(|e| e.source).collect();
/// assert_eq!(order, [1, 0]);
/// # Ok::<(), safetensors_nano::Error>(())
/// ```
pub trait AsSpec {
    /// This item's tensor spec.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{AsSpec, Tensor}};
    /// let t = Tensor::new("x", Dtype::U8, &[1], &[7]);
    /// assert_eq!(AsSpec::spec(&t).byte_len(), 1);
    /// ```
    fn spec(&self) -> TensorSpec<'_>;
}

/// An [`AsSpec`] item that also holds all of its data, for the one-shot
/// writers ([`Plan::write_to`](super::Plan::write_to) and friends).
///
/// `data().len()` must equal `spec().byte_len()`; the one-shot writers check
/// it for every tensor before writing anything.
///
/// ```
/// use safetensors_nano::{Dtype, write::{AsTensor, Tensor}};
/// let t = Tensor::new("x", Dtype::U8, &[1], &[7]);
/// assert_eq!(AsTensor::data(&t), &[7]);
/// ```
pub trait AsTensor: AsSpec {
    /// This item's data bytes.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{AsTensor, Tensor}};
    /// let t = Tensor::new("x", Dtype::U8, &[2], &[7, 8]);
    /// assert_eq!(AsTensor::data(&&t), &[7, 8]);
    /// ```
    fn data(&self) -> &[u8];
}

impl AsSpec for TensorSpec<'_> {
    fn spec(&self) -> TensorSpec<'_> {
        *self
    }
}

impl AsSpec for Tensor<'_> {
    fn spec(&self) -> TensorSpec<'_> {
        self.spec
    }
}

impl AsTensor for Tensor<'_> {
    fn data(&self) -> &[u8] {
        self.data
    }
}

impl<T: AsSpec + ?Sized> AsSpec for &T {
    fn spec(&self) -> TensorSpec<'_> {
        (**self).spec()
    }
}

impl<T: AsTensor + ?Sized> AsTensor for &T {
    fn data(&self) -> &[u8] {
        (**self).data()
    }
}

impl<T: AsSpec + ?Sized> AsSpec for &mut T {
    fn spec(&self) -> TensorSpec<'_> {
        (**self).spec()
    }
}

impl<T: AsTensor + ?Sized> AsTensor for &mut T {
    fn data(&self) -> &[u8] {
        (**self).data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_dimension_wins_over_overflow() {
        let spec = TensorSpec::new("z", Dtype::F64, &[1 << 32, 1 << 32, 0], 0);
        assert_eq!(spec.check(), Ok(()));
        let spec = TensorSpec::new("z", Dtype::F64, &[1 << 32, 1 << 32], 0);
        assert_eq!(
            spec.check().map_err(|e| e.kind()),
            Err(ErrorKind::ValidationOverflow)
        );
        // element count fits, bit count does not
        let spec = TensorSpec::new("z", Dtype::F64, &[1 << 62], 0);
        assert_eq!(
            spec.check().map_err(|e| e.kind()),
            Err(ErrorKind::ValidationOverflow)
        );
    }

    #[test]
    fn sub_byte_lengths() {
        assert_eq!(
            TensorSpec::new("a", Dtype::F6_E2M3, &[4], 3).check(),
            Ok(())
        );
        assert_eq!(
            TensorSpec::new("a", Dtype::F6_E2M3, &[2], 2)
                .check()
                .map_err(|e| e.kind()),
            Err(ErrorKind::MisalignedSlice { elements: 2 })
        );
        assert_eq!(
            TensorSpec::new("a", Dtype::F4, &[], 1)
                .check()
                .map_err(|e| e.kind()),
            Err(ErrorKind::MisalignedSlice { elements: 1 })
        );
        assert_eq!(
            TensorSpec::new("a", Dtype::F4, &[2], 2)
                .check()
                .map_err(|e| e.kind()),
            Err(ErrorKind::DataLengthMismatch {
                expected: 1,
                found: 2
            })
        );
    }
}
