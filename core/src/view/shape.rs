//! Tensor shapes, read lazily from the header text: the dimensions of a
//! validated shape array, and the element count with our zero rule.

/// A tensor's shape: dimensions as `u64`, any rank, parsed from the header
/// on demand (nothing is stored per dimension).
///
/// ```
/// use safetensors_nano::{SafeTensors, Table};
/// let h = br#"{"t":{"dtype":"U8","shape":[2, 0, 5],"data_offsets":[0,0]}}"#;
/// let mut file = (h.len() as u64).to_le_bytes().to_vec();
/// file.extend_from_slice(h);
/// let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
/// let shape = st.tensor("t").unwrap().shape();
/// assert_eq!(shape.rank(), 3);
/// assert_eq!(shape.iter().collect::<Vec<_>>(), [2, 0, 5]);
/// assert_eq!(shape.element_count(), 0);
/// ```
#[derive(Clone, Copy)]
pub struct Shape<'a> {
    json: &'a [u8],
    start: usize,
}

impl<'a> Shape<'a> {
    pub(crate) fn new(json: &'a [u8], start: usize) -> Self {
        Shape { json, start }
    }

    /// The dimensions, outermost first.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let h = br#"{"t":{"dtype":"U8","shape":[3,1],"data_offsets":[0,3]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.extend_from_slice(&[0; 3]);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// assert_eq!(st.tensor("t").unwrap().shape().iter().max(), Some(3));
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = u64> + Clone + 'a {
        Dims::at(self.json, self.start)
    }

    /// Number of dimensions (0 for a scalar).
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let h = br#"{"t":{"dtype":"U8","shape":[],"data_offsets":[0,1]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.push(0);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// assert_eq!(st.tensor("t").unwrap().shape().rank(), 0);
    /// ```
    pub fn rank(&self) -> usize {
        self.iter().count()
    }

    /// Dimension `axis`, if the shape has it.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let h = br#"{"t":{"dtype":"U8","shape":[3,1],"data_offsets":[0,3]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.extend_from_slice(&[0; 3]);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// assert_eq!(st.tensor("t").unwrap().shape().dim(1), Some(1));
    /// ```
    pub fn dim(&self, axis: usize) -> Option<u64> {
        self.iter().nth(axis)
    }

    /// Number of elements: the product of the dimensions, 0 if any is 0
    /// (validated files never overflow; `u64::MAX` is returned if one would).
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let h = br#"{"t":{"dtype":"U8","shape":[3,1],"data_offsets":[0,3]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.extend_from_slice(&[0; 3]);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// assert_eq!(st.tensor("t").unwrap().shape().element_count(), 3);
    /// ```
    pub fn element_count(&self) -> u64 {
        element_count(Dims::at(self.json, self.start)).unwrap_or(u64::MAX)
    }

    /// Where the shape's `[` is in the header JSON (a byte offset), for
    /// callers that keep the header text and read the shape later.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// let h = br#"{"t":{"dtype":"U8","shape":[3,1],"data_offsets":[0,3]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.extend_from_slice(&[0; 3]);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// let at = st.tensor("t").unwrap().shape().offset();
    /// assert_eq!(&h[at..at + 5], b"[3,1]");
    /// ```
    pub fn offset(&self) -> usize {
        self.start
    }

    /// Copies the dimensions into `out` and returns the filled prefix, or
    /// `None` when `out` is shorter than the rank.
    ///
    /// ```
    /// # use safetensors_nano::{SafeTensors, Table};
    /// # let h = br#"{"t":{"dtype":"U8","shape":[3,1],"data_offsets":[0,3]}}"#;
    /// # let mut file = (h.len() as u64).to_le_bytes().to_vec(); file.extend_from_slice(h); file.extend_from_slice(&[0; 3]);
    /// # let st = SafeTensors::parse(&file, Table::<1>::new()).unwrap();
    /// let mut dims = [0u64; 8];
    /// assert_eq!(st.tensor("t").unwrap().shape().copy_into(&mut dims), Some(&[3, 1][..]));
    /// ```
    pub fn copy_into<'o>(&self, out: &'o mut [u64]) -> Option<&'o [u64]> {
        let mut n = 0usize;
        for d in self.iter() {
            *out.get_mut(n)? = d;
            n = n.saturating_add(1);
        }
        out.get(..n).map(|s| s as &[u64])
    }
}

impl PartialEq<[u64]> for Shape<'_> {
    fn eq(&self, other: &[u64]) -> bool {
        self.iter().eq(other.iter().copied())
    }
}

impl<const R: usize> PartialEq<[u64; R]> for Shape<'_> {
    fn eq(&self, other: &[u64; R]) -> bool {
        self.iter().eq(other.iter().copied())
    }
}

impl core::fmt::Debug for Shape<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Iterates the dimensions of a validated shape array starting at `start`.
#[derive(Clone, Debug)]
pub(crate) struct Dims<'h> {
    rest: &'h [u8],
}

impl<'h> Dims<'h> {
    pub(crate) fn at(json: &'h [u8], start: usize) -> Self {
        let rest = json.get(start..).unwrap_or_default();
        let rest = rest.strip_prefix(b"[").unwrap_or(rest);
        Dims { rest }
    }
}

impl Iterator for Dims<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        loop {
            let (&b, rest) = self.rest.split_first()?;
            match b {
                b']' => {
                    self.rest = &[];
                    return None;
                }
                b'0'..=b'9' => break,
                _ => self.rest = rest,
            }
        }
        let mut value = 0u64;
        while let Some((&b, rest)) = self.rest.split_first() {
            if !b.is_ascii_digit() {
                break;
            }
            value = value
                .wrapping_mul(10)
                .wrapping_add(u64::from(b.wrapping_sub(b'0')));
            self.rest = rest;
        }
        Some(value)
    }
}

/// Element count of a validated shape (0 if any dimension is 0; `None` on overflow).
pub(crate) fn element_count(dims: Dims<'_>) -> Option<u64> {
    let mut count = ElementCount::new();
    for d in dims {
        count.push(d);
    }
    count.get()
}

/// `a × b` unless it overflows. Factors under 2^32 cannot, and skip the
/// check (a 128-bit multiply on 32-bit targets).
#[inline]
pub(crate) fn checked_mul(a: u64, b: u64) -> Option<u64> {
    if (a | b) >> 32 == 0 {
        Some(a.wrapping_mul(b))
    } else {
        a.checked_mul(b)
    }
}

/// Element count with our zero rule (docs/format.md D3 zero-dim): any zero
/// dimension makes it 0.
pub(crate) struct ElementCount {
    has_zero: bool,
    product: Option<u64>,
}

impl ElementCount {
    pub(crate) const fn new() -> Self {
        ElementCount {
            has_zero: false,
            product: Some(1),
        }
    }

    pub(crate) fn push(&mut self, dim: u64) {
        if dim == 0 {
            self.has_zero = true;
        }
        self.product = self.product.and_then(|p| checked_mul(p, dim));
    }

    pub(crate) fn get(&self) -> Option<u64> {
        if self.has_zero {
            Some(0)
        } else {
            self.product
        }
    }
}
