//! One tensor: what the header says of it ([`TensorInfo`]) and, for a whole
//! file, its bytes ([`TensorView`]) with typed views and copies.

use bytemuck::Pod;

use crate::dtype::Dtype;
use crate::error::{Error, ErrorKind, TensorRef};
use crate::read::string::{raw_string_at, tensor_ref};
use crate::table::Entry;
use crate::view::name::Name;
use crate::view::shape::Shape;

mod sealed {
    pub trait Sealed {}
}

/// A Rust element type that a tensor's bytes can be viewed as.
///
/// Implemented for `u8 i8 u16 i16 u32 i32 u64 i64 f32 f64`, `half::f16`,
/// `half::bf16`, and `[f32; 2]` (a `C64` element: real, imaginary).
///
/// ```
/// use safetensors_nano::{Dtype, Element};
/// assert_eq!(<half::bf16 as Element>::DTYPE, Dtype::BF16);
/// ```
pub trait Element: Pod + sealed::Sealed {
    /// The dtype whose elements this type holds.
    const DTYPE: Dtype;
}

macro_rules! element {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: Dtype = Dtype::$d;
        }
    )*};
}

element! {
    u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32,
    u64 => U64, i64 => I64, f32 => F32, f64 => F64,
    half::f16 => F16, half::bf16 => BF16, [f32; 2] => C64,
}

/// What the header says of one tensor.
///
/// ```
/// use safetensors_nano::{Dtype, Header, Status, Table};
/// let h = br#"{"w":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]}}"#;
/// let mut prefix = (h.len() as u64).to_le_bytes().to_vec();
/// prefix.extend_from_slice(h);
/// let Status::Complete(header) = Header::parse(&prefix, Table::<1>::new()).unwrap() else { unreachable!() };
/// let w = header.tensor("w").unwrap();
/// assert_eq!((w.dtype(), w.element_count(), w.data_offsets()), (Dtype::F16, 4, (0, 8)));
/// ```
#[derive(Clone, Copy)]
pub struct TensorInfo<'a> {
    json: &'a [u8],
    entry: Entry,
    index: u32,
}

impl<'a> TensorInfo<'a> {
    pub(crate) fn new(json: &'a [u8], entry: Entry, index: u32) -> Self {
        TensorInfo { json, entry, index }
    }

    /// The name, decoded lazily.
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table};
    /// # let h = br#"{"w":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let Status::Complete(header) = Header::parse(&p, Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert_eq!(header.tensor("w").unwrap().name(), "w");
    /// ```
    pub fn name(&self) -> Name<'a> {
        Name::from_raw(raw_string_at(self.json, self.entry.name_start()))
    }

    /// The element type.
    ///
    /// ```
    /// # use safetensors_nano::{Dtype, Header, Status, Table};
    /// # let h = br#"{"w":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let Status::Complete(header) = Header::parse(&p, Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert_eq!(header.tensor("w").unwrap().dtype(), Dtype::F16);
    /// ```
    pub fn dtype(&self) -> Dtype {
        self.entry.dtype()
    }

    /// The shape.
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table};
    /// # let h = br#"{"w":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let Status::Complete(header) = Header::parse(&p, Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert_eq!(header.tensor("w").unwrap().shape(), [2, 2]);
    /// ```
    pub fn shape(&self) -> Shape<'a> {
        Shape::new(self.json, self.entry.shape_start())
    }

    /// `data_offsets`: begin and end, relative to the byte buffer.
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table};
    /// # let h = br#"{"w":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let Status::Complete(header) = Header::parse(&p, Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert_eq!(header.tensor("w").unwrap().data_offsets(), (0, 8));
    /// ```
    pub fn data_offsets(&self) -> (u64, u64) {
        (self.entry.begin(), self.entry.end())
    }

    /// Bytes of data.
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table};
    /// # let h = br#"{"w":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let Status::Complete(header) = Header::parse(&p, Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert_eq!(header.tensor("w").unwrap().byte_len(), 8);
    /// ```
    pub fn byte_len(&self) -> u64 {
        self.entry.end().saturating_sub(self.entry.begin())
    }

    /// Number of elements.
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table};
    /// # let h = br#"{"w":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let Status::Complete(header) = Header::parse(&p, Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert_eq!(header.tensor("w").unwrap().element_count(), 4);
    /// ```
    pub fn element_count(&self) -> u64 {
        self.shape().element_count()
    }

    /// Position of this tensor in the header's listing (0-based).
    ///
    /// ```
    /// # use safetensors_nano::{Header, Status, Table};
    /// # let h = br#"{"w":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]}}"#;
    /// # let mut p = (h.len() as u64).to_le_bytes().to_vec(); p.extend_from_slice(h);
    /// # let Status::Complete(header) = Header::parse(&p, Table::<1>::new()).unwrap() else { unreachable!() };
    /// assert_eq!(header.tensor("w").unwrap().header_index(), 0);
    /// ```
    pub fn header_index(&self) -> usize {
        self.index as usize
    }

    /// This tensor, for attaching to an [`Error`].
    pub(crate) fn as_ref(&self) -> TensorRef {
        tensor_ref(self.json, self.entry.name_start())
    }
}

impl core::fmt::Debug for TensorInfo<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TensorInfo")
            .field("name", &self.name())
            .field("dtype", &self.dtype())
            .field("shape", &self.shape())
            .field("data_offsets", &self.data_offsets())
            .finish()
    }
}

/// A tensor with its bytes, borrowed from the file.
///
/// ```
/// use safetensors_nano::{SafeTensors, Table};
/// let h = br#"{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}      "#;
/// let mut file = (h.len() as u64).to_le_bytes().to_vec();
/// file.extend_from_slice(h);
/// for v in [1.5f32, -2.0] { file.extend_from_slice(&v.to_le_bytes()); }
/// let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
/// let x = st.tensor("x").unwrap();
/// assert_eq!(x.data().len(), 8);
/// let mut copy = [0f32; 2];
/// x.copy_into(&mut copy).unwrap();
/// assert_eq!(copy, [1.5, -2.0]);
/// ```
#[derive(Clone, Copy)]
pub struct TensorView<'a> {
    info: TensorInfo<'a>,
    data: &'a [u8],
}

impl<'a> TensorView<'a> {
    pub(crate) fn new(info: TensorInfo<'a>, data: &'a [u8]) -> Self {
        TensorView { info, data }
    }

    /// What the header says of this tensor.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let h = br#"{"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.push(5);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// assert_eq!(st.tensor("x").unwrap().info().byte_len(), 1);
    /// ```
    pub fn info(&self) -> TensorInfo<'a> {
        self.info
    }

    /// The name.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let h = br#"{"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.push(5);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// assert_eq!(st.tensor("x").unwrap().name(), "x");
    /// ```
    pub fn name(&self) -> Name<'a> {
        self.info.name()
    }

    /// The element type.
    ///
    /// ```
    /// # use safetensors_nano::{Dtype, SafeTensors, Table};
    /// # let h = br#"{"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.push(5);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// assert_eq!(st.tensor("x").unwrap().dtype(), Dtype::U8);
    /// ```
    pub fn dtype(&self) -> Dtype {
        self.info.dtype()
    }

    /// The shape.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let h = br#"{"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.push(5);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// assert_eq!(st.tensor("x").unwrap().shape(), [1]);
    /// ```
    pub fn shape(&self) -> Shape<'a> {
        self.info.shape()
    }

    /// `data_offsets` relative to the byte buffer.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let h = br#"{"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.push(5);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// assert_eq!(st.tensor("x").unwrap().data_offsets(), (0, 1));
    /// ```
    pub fn data_offsets(&self) -> (u64, u64) {
        self.info.data_offsets()
    }

    /// Number of elements.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let h = br#"{"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.push(5);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// assert_eq!(st.tensor("x").unwrap().element_count(), 1);
    /// ```
    pub fn element_count(&self) -> u64 {
        self.info.element_count()
    }

    /// The tensor's bytes (little-endian elements), borrowed from the file.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let h = br#"{"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.push(5);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// assert_eq!(st.tensor("x").unwrap().data(), &[5]);
    /// ```
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    fn check_dtype<T: Element>(&self) -> Result<(), Error> {
        if T::DTYPE == self.dtype() {
            Ok(())
        } else {
            Err(self.error(ErrorKind::DtypeMismatch {
                found: self.dtype(),
                asked: T::DTYPE,
            }))
        }
    }

    fn error(&self, kind: ErrorKind) -> Error {
        Error::new(kind).with_tensor(self.info.as_ref())
    }

    /// The data as `&[T]`, without copying, when `T` matches the dtype and
    /// the bytes are aligned for `T` (always true for files written with
    /// padding to 8, as the reference and our writer do, when the file
    /// itself sits at an 8-aligned address).
    ///
    /// # Errors
    /// [`ErrorKind::DtypeMismatch`] for another dtype;
    /// [`ErrorKind::Misaligned`] when the bytes are not aligned (use
    /// [`copy_into`](TensorView::copy_into)); on a big-endian target,
    /// [`ErrorKind::Misaligned`] too, as the bytes are little-endian.
    ///
    /// ```
    /// use safetensors_nano::{ErrorKind, SafeTensors, Table};
    /// let h = br#"{"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}      "#;
    /// let mut file = (h.len() as u64).to_le_bytes().to_vec();
    /// file.extend_from_slice(h);
    /// file.extend_from_slice(&[1, 0, 0xff, 0xff]);
    /// let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// let x = st.tensor("x").unwrap();
    /// match x.try_view::<i16>() {
    ///     Ok(v) => assert_eq!(v, &[1, -1]),
    ///     Err(e) => assert!(matches!(e.kind(), ErrorKind::Misaligned { .. })), // Vec gave an odd address
    /// }
    /// assert!(matches!(x.try_view::<f32>().unwrap_err().kind(), ErrorKind::DtypeMismatch { .. }));
    /// ```
    pub fn try_view<T: Element>(&self) -> Result<&'a [T], Error> {
        self.check_dtype::<T>()?;
        let misaligned = || {
            self.error(ErrorKind::Misaligned {
                align: u8::try_from(core::mem::align_of::<T>()).unwrap_or(u8::MAX),
            })
        };
        if cfg!(target_endian = "big") && core::mem::size_of::<T>() > 1 {
            return Err(misaligned());
        }
        bytemuck::try_cast_slice(self.data).map_err(|_| misaligned())
    }

    /// Copies the elements into `out`, whatever the alignment.
    ///
    /// # Errors
    /// [`ErrorKind::DtypeMismatch`] for another dtype;
    /// [`ErrorKind::LengthMismatch`] when `out.len()` is not the element count.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let h = br#"{"x":{"dtype":"U16","shape":[1],"data_offsets":[0,2]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.extend_from_slice(&[1, 2]);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// let mut out = [0u16; 1];
    /// st.tensor("x").unwrap().copy_into(&mut out).unwrap();
    /// assert_eq!(out, [0x0201]);
    /// ```
    pub fn copy_into<T: Element>(&self, out: &mut [T]) -> Result<(), Error> {
        self.check_dtype::<T>()?;
        let dst: &mut [u8] = bytemuck::cast_slice_mut(out);
        if dst.len() != self.data.len() {
            return Err(self.error(ErrorKind::LengthMismatch {
                expected: self.element_count(),
                found: dst
                    .len()
                    .checked_div(core::mem::size_of::<T>())
                    .unwrap_or(0) as u64,
            }));
        }
        dst.copy_from_slice(self.data);
        if cfg!(target_endian = "big") {
            for chunk in dst.chunks_exact_mut(core::mem::size_of::<T>()) {
                chunk.reverse();
            }
        }
        Ok(())
    }

    /// Decodes every element of a float tensor (F64, F32, F16, BF16, the
    /// five F8, both F6 and F4) into `out`, exactly as
    /// [`decode::decode_f32_into`](crate::decode::decode_f32_into) does.
    ///
    /// # Errors
    /// [`ErrorKind::DtypeMismatch`] for integer, `BOOL` and `C64` tensors;
    /// [`ErrorKind::LengthMismatch`] when `out.len()` is not the element count.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let h = br#"{"q":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.extend_from_slice(&[0x38, 0x7e]);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// let mut out = [0f32; 2];
    /// st.tensor("q").unwrap().decode_f32_into(&mut out).unwrap();
    /// assert_eq!(out, [1.0, 448.0]);
    /// ```
    pub fn decode_f32_into(&self, out: &mut [f32]) -> Result<(), Error> {
        crate::decode::decode_f32_into(self.dtype(), self.data, out)
            .map_err(|e| e.with_tensor(self.info.as_ref()))
    }

    /// The values of a `BOOL` tensor (0 is false, anything else true).
    ///
    /// # Errors
    /// [`ErrorKind::DtypeMismatch`] for another dtype.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let h = br#"{"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.extend_from_slice(&[0, 1, 7]);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// let m: Vec<bool> = st.tensor("m").unwrap().bools().unwrap().collect();
    /// assert_eq!(m, [false, true, true]);
    /// ```
    pub fn bools(&self) -> Result<impl ExactSizeIterator<Item = bool> + 'a, Error> {
        if self.dtype() != Dtype::BOOL {
            return Err(self.error(ErrorKind::DtypeMismatch {
                found: self.dtype(),
                asked: Dtype::BOOL,
            }));
        }
        Ok(self.data.iter().map(|&b| b != 0))
    }
}

impl core::fmt::Debug for TensorView<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TensorView")
            .field("info", &self.info)
            .field("len", &self.data.len())
            .finish()
    }
}
