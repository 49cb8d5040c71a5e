//! `embedded-io` integration: a [`Sink`] over any `embedded_io::Write`
//! (a UART, a flash driver, an SD card file).

use crate::error::{Error, ErrorKind};
use crate::write::sink::Sink;

/// A [`Sink`] over an [`embedded_io::Write`]. It keeps the writer's error of
/// a failed write (the writer itself reports [`ErrorKind::Sink`]); get it
/// with [`take_error`](EmbeddedIoSink::take_error). A write that accepts 0
/// bytes is a failure too (with no error kept), never a panic or a hang.
///
/// ```
/// use safetensors_nano::{Dtype, write::{EmbeddedIoSink, Plan, Tensor}};
/// let mut tensors = [Tensor::new("x", Dtype::U8, &[1], &[42])];
/// let plan = Plan::new(&mut tensors)?;
/// let mut buf = [0u8; 128];
/// // `&mut [u8]` is an embedded_io::Write.
/// plan.write_to(EmbeddedIoSink::new(&mut buf[..]))?;
/// assert_eq!(buf[plan.file_len() as usize - 1], 42);
/// # Ok::<(), safetensors_nano::Error>(())
/// ```
#[derive(Debug)]
#[cfg_attr(docsrs, doc(cfg(feature = "embedded-io")))]
pub struct EmbeddedIoSink<W: embedded_io::ErrorType> {
    inner: W,
    error: Option<W::Error>,
}

impl<W: embedded_io::Write> EmbeddedIoSink<W> {
    /// Wraps `inner`.
    ///
    /// ```
    /// use safetensors_nano::write::EmbeddedIoSink;
    /// let mut buf = [0u8; 8];
    /// let sink = EmbeddedIoSink::new(&mut buf[..]);
    /// assert_eq!(sink.get_ref().len(), 8);
    /// ```
    pub fn new(inner: W) -> Self {
        EmbeddedIoSink { inner, error: None }
    }

    /// The error of the last failed write or flush, if any.
    ///
    /// ```
    /// use safetensors_nano::write::{EmbeddedIoSink, Sink};
    /// let mut buf = [0u8; 2];
    /// let mut sink = EmbeddedIoSink::new(&mut buf[..]);
    /// assert!(sink.write_all(b"abc").is_err());
    /// assert_eq!(sink.take_error(), Some(embedded_io::SliceWriteError::Full));
    /// ```
    pub fn take_error(&mut self) -> Option<W::Error> {
        self.error.take()
    }

    /// The wrapped writer.
    ///
    /// ```
    /// use safetensors_nano::write::EmbeddedIoSink;
    /// let mut buf = [0u8; 8];
    /// assert_eq!(EmbeddedIoSink::new(&mut buf[..]).get_ref().len(), 8);
    /// ```
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// Unwraps the writer.
    ///
    /// ```
    /// use safetensors_nano::write::EmbeddedIoSink;
    /// let mut buf = [0u8; 8];
    /// let rest = EmbeddedIoSink::new(&mut buf[..]).into_inner();
    /// assert_eq!(rest.len(), 8);
    /// ```
    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: embedded_io::Write> Sink for EmbeddedIoSink<W> {
    fn write_all(&mut self, mut bytes: &[u8]) -> Result<(), Error> {
        while !bytes.is_empty() {
            match self.inner.write(bytes) {
                Ok(n) => match bytes.get(n..) {
                    Some(rest) if n > 0 => bytes = rest,
                    _ => return Err(ErrorKind::Sink.into()),
                },
                Err(e) => {
                    self.error = Some(e);
                    return Err(ErrorKind::Sink.into());
                }
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Error> {
        self.inner.flush().map_err(|e| {
            self.error = Some(e);
            Error::new(ErrorKind::Sink)
        })
    }
}
