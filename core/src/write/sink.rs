//! Where written bytes go: a small trait and its implementations for a
//! caller's slice, a byte counter and (with `alloc`) a `Vec<u8>`.

use crate::error::{Error, ErrorKind};

/// A destination for the bytes of a file.
///
/// One encoder, several sinks: [`SliceSink`] (a caller's buffer), `Vec<u8>`
/// (feature `alloc`), [`IoSink`](super::IoSink) (feature `std`, any
/// `std::io::Write`) and [`EmbeddedIoSink`](super::EmbeddedIoSink) (feature
/// `embedded-io`). Implement it to send bytes elsewhere (a flash page writer,
/// a CRC middleware).
///
/// ```
/// use safetensors_nano::{Dtype, Error, write::{Plan, Sink, Tensor}};
/// /// Counts bytes and sums them, keeps nothing.
/// #[derive(Default)]
/// struct Checksum { len: u64, sum: u64 }
/// impl Sink for Checksum {
///     fn write_all(&mut self, bytes: &[u8]) -> Result<(), Error> {
///         self.len += bytes.len() as u64;
///         self.sum += bytes.iter().map(|&b| u64::from(b)).sum::<u64>();
///         Ok(())
///     }
/// }
/// let mut tensors = [Tensor::new("x", Dtype::U8, &[2], &[1, 2])];
/// let plan = Plan::new(&mut tensors)?;
/// let out = plan.write_to(Checksum::default())?;
/// assert_eq!(out.len, plan.file_len());
/// # Ok::<(), Error>(())
/// ```
pub trait Sink {
    /// Takes all of `bytes`, or fails.
    ///
    /// # Errors
    /// Any error the destination reports; [`ErrorKind::Sink`] is the kind
    /// for a destination that failed, [`ErrorKind::BufferTooSmall`] for one
    /// that is full.
    ///
    /// ```
    /// use safetensors_nano::write::{Sink, SliceSink};
    /// let mut buf = [0u8; 4];
    /// let mut sink = SliceSink::new(&mut buf);
    /// sink.write_all(b"abc")?;
    /// assert!(sink.write_all(b"de").is_err());
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), Error>;

    /// Told once, before the first byte, how many bytes will follow. A sink
    /// with a fixed capacity fails here if they do not fit, so that nothing
    /// is written; a growable one may reserve room. The default does nothing.
    ///
    /// # Errors
    /// [`ErrorKind::BufferTooSmall`] (or another kind) when `total` bytes
    /// cannot be taken.
    ///
    /// ```
    /// use safetensors_nano::{ErrorKind, write::{Sink, SliceSink}};
    /// let mut buf = [0u8; 4];
    /// let err = SliceSink::new(&mut buf).reserve(5).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::BufferTooSmall { needed: 5, available: 4 });
    /// ```
    fn reserve(&mut self, total: u64) -> Result<(), Error> {
        let _ = total;
        Ok(())
    }

    /// Pushes buffered bytes to their destination; called once when a
    /// [`Writer`](super::Writer) finishes. The default does nothing.
    ///
    /// # Errors
    /// Any error the destination reports.
    ///
    /// ```
    /// use safetensors_nano::write::{Sink, SliceSink};
    /// let mut buf = [0u8; 1];
    /// assert!(SliceSink::new(&mut buf).flush().is_ok());
    /// ```
    fn flush(&mut self) -> Result<(), Error> {
        Ok(())
    }
}

impl<S: Sink + ?Sized> Sink for &mut S {
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), Error> {
        (**self).write_all(bytes)
    }

    fn reserve(&mut self, total: u64) -> Result<(), Error> {
        (**self).reserve(total)
    }

    fn flush(&mut self) -> Result<(), Error> {
        (**self).flush()
    }
}

/// A cursor over a caller's buffer.
///
/// ```
/// use safetensors_nano::write::{Sink, SliceSink};
/// let mut buf = [0u8; 8];
/// let mut sink = SliceSink::new(&mut buf);
/// sink.write_all(b"hi")?;
/// assert_eq!(sink.written(), 2);
/// assert_eq!(sink.into_written(), b"hi");
/// # Ok::<(), safetensors_nano::Error>(())
/// ```
#[derive(Debug)]
pub struct SliceSink<'b> {
    buf: &'b mut [u8],
    pos: usize,
}

impl<'b> SliceSink<'b> {
    /// A cursor at the start of `buf`.
    ///
    /// ```
    /// use safetensors_nano::write::SliceSink;
    /// let mut buf = [0u8; 8];
    /// assert_eq!(SliceSink::new(&mut buf).written(), 0);
    /// ```
    pub fn new(buf: &'b mut [u8]) -> Self {
        SliceSink { buf, pos: 0 }
    }

    /// Bytes written so far.
    ///
    /// ```
    /// use safetensors_nano::write::{Sink, SliceSink};
    /// let mut buf = [0u8; 8];
    /// let mut sink = SliceSink::new(&mut buf);
    /// sink.write_all(&[1, 2, 3])?;
    /// assert_eq!(sink.written(), 3);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn written(&self) -> usize {
        self.pos
    }

    /// The written prefix of the buffer.
    ///
    /// ```
    /// use safetensors_nano::write::{Sink, SliceSink};
    /// let mut buf = [0u8; 8];
    /// let mut sink = SliceSink::new(&mut buf);
    /// sink.write_all(&[9])?;
    /// assert_eq!(sink.into_written(), &[9]);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn into_written(self) -> &'b mut [u8] {
        let len = self.buf.len();
        let (written, _) = self.buf.split_at_mut(self.pos.min(len));
        written
    }

    fn too_small(&self, needed: u64) -> Error {
        Error::new(ErrorKind::BufferTooSmall {
            needed,
            available: self.buf.len() as u64,
        })
    }
}

impl Sink for SliceSink<'_> {
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let end = self.pos.checked_add(bytes.len());
        match end.and_then(|end| Some((end, self.buf.get_mut(self.pos..end)?))) {
            Some((end, dst)) => {
                dst.copy_from_slice(bytes);
                self.pos = end;
                Ok(())
            }
            None => Err(self.too_small((self.pos as u64).saturating_add(bytes.len() as u64))),
        }
    }

    fn reserve(&mut self, total: u64) -> Result<(), Error> {
        let needed = (self.pos as u64).saturating_add(total);
        if needed > self.buf.len() as u64 {
            Err(self.too_small(needed))
        } else {
            Ok(())
        }
    }
}

/// Counts bytes instead of writing them: the first pass of the two-pass
/// header writer, so that the counted and the written header always agree.
#[derive(Debug, Default)]
pub(crate) struct Counter {
    pub(crate) len: u64,
}

impl Sink for Counter {
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.len = self
            .len
            .checked_add(bytes.len() as u64)
            .ok_or(Error::new(ErrorKind::ValidationOverflow))?;
        Ok(())
    }
}

#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
impl Sink for alloc::vec::Vec<u8> {
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.try_reserve(bytes.len())
            .map_err(|_| Error::new(ErrorKind::Sink))?;
        self.extend_from_slice(bytes);
        Ok(())
    }

    fn reserve(&mut self, total: u64) -> Result<(), Error> {
        let total = usize::try_from(total).map_err(|_| Error::new(ErrorKind::TooLargeForTarget))?;
        self.try_reserve_exact(total)
            .map_err(|_| Error::new(ErrorKind::Sink))
    }
}
