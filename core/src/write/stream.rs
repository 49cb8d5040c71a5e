//! The second pass: a state machine that writes the header, then takes each
//! tensor's data in planned order, in chunks of any size; and the plan's
//! whole-file writers, which run it over every tensor's data.

use core::fmt;

use super::plan::{Placed, Plan};
use super::sink::{Sink, SliceSink};
use super::spec::{at_index, AsSpec, AsTensor};
use crate::error::{Error, ErrorKind};

/// Writes a planned file to a sink, taking tensor data in chunks.
///
/// [`begin`](Writer::begin) writes the length and the header. Then, for each
/// tensor in the plan's order: [`write_tensor_data`](Writer::write_tensor_data)
/// any number of times, then [`finish_tensor`](Writer::finish_tensor).
/// [`finish`](Writer::finish) checks that every tensor got all its bytes.
///
/// A call that is refused for a wrong order or length writes nothing and
/// leaves the writer as it was. After the sink fails, every call fails with
/// [`ErrorKind::Sink`].
///
/// ```
/// use safetensors_nano::{Dtype, ErrorKind, write::{Plan, SliceSink, TensorSpec, Writer}};
/// let mut specs = [
///     TensorSpec::new("counts", Dtype::U16, &[3], 6),
///     TensorSpec::new("samples", Dtype::F32, &[4], 16),
/// ];
/// let plan = Plan::new(&mut specs)?;
/// let mut buf = [0u8; 256];
/// let mut w = Writer::begin(&plan, SliceSink::new(&mut buf))?;
/// // F32 sorts first: "samples" is due. It arrives in chunks, e.g. from a sensor.
/// assert_eq!(w.current().unwrap().spec().name(), "samples");
/// for x in [0.5f32, 1.5, 2.5, 3.5] {
///     w.write_tensor_data(&x.to_le_bytes())?;
/// }
/// w.finish_tensor()?;
/// // Naming the wrong tensor is refused.
/// assert_eq!(w.begin_tensor("samples").unwrap_err().kind(), ErrorKind::DataOutOfOrder);
/// w.write_tensor("counts", bytemuck::cast_slice(&[1u16, 2, 3]))?;
/// let file = w.finish()?.into_written();
/// assert_eq!(file.len() as u64, plan.file_len());
/// # Ok::<(), safetensors_nano::Error>(())
/// ```
pub struct Writer<'p, T, S> {
    plan: Plan<'p, T>,
    sink: S,
    /// The tensor whose data is due, as an index into the plan.
    index: usize,
    /// Where that tensor's data starts (relative to the data start).
    begin: u64,
    /// Bytes of it written so far.
    filled: u64,
    /// Bytes written to the sink.
    position: u64,
    failed: bool,
}

/// The whole-file writers: a [`Writer`] over every tensor's data in turn.
impl<'p, T: AsSpec> Plan<'p, T> {
    /// Checks every tensor's data length, then writes the whole file.
    /// Returns the sink.
    ///
    /// # Errors
    /// [`DataLengthMismatch`](ErrorKind::DataLengthMismatch) (nothing
    /// written) when an item's `data()` is not its `spec().byte_len()`;
    /// whatever the sink reports, including from [`Sink::reserve`] before
    /// anything is written.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, SliceSink, Tensor}};
    /// let mut tensors = [Tensor::new("x", Dtype::U8, &[2], &[4, 5])];
    /// let mut buf = [0u8; 128];
    /// let out = Plan::new(&mut tensors)?.write_to(SliceSink::new(&mut buf))?.into_written();
    /// assert_eq!(&out[out.len() - 2..], &[4, 5]);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn write_to<S: Sink>(&self, sink: S) -> Result<S, Error>
    where
        T: AsTensor,
    {
        self.check_data()?;
        let mut writer = Writer::begin(self, sink)?;
        for tensor in self.tensors() {
            writer.write_tensor_data(tensor.data())?;
            writer.finish_tensor()?;
        }
        writer.finish()
    }

    /// Writes the whole file into `buf` and returns the written prefix.
    ///
    /// # Errors
    /// [`BufferTooSmall`](ErrorKind::BufferTooSmall) with the bytes needed
    /// when `buf` is shorter than [`file_len`](Plan::file_len); otherwise as
    /// [`write_to`](Plan::write_to). Nothing is written on error.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, ErrorKind, write::{Plan, Tensor}};
    /// let mut tensors = [Tensor::new("x", Dtype::U8, &[2], &[4, 5])];
    /// let plan = Plan::new(&mut tensors)?;
    /// let mut small = [0u8; 16];
    /// assert_eq!(
    ///     plan.write_to_slice(&mut small).unwrap_err().kind(),
    ///     ErrorKind::BufferTooSmall { needed: plan.file_len(), available: 16 }
    /// );
    /// let mut buf = [0u8; 1024];
    /// assert_eq!(plan.write_to_slice(&mut buf)?.len() as u64, plan.file_len());
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn write_to_slice<'b>(&self, buf: &'b mut [u8]) -> Result<&'b mut [u8], Error>
    where
        T: AsTensor,
    {
        Ok(self.write_to(SliceSink::new(buf))?.into_written())
    }

    /// Writes the whole file into a new `Vec` of exactly
    /// [`file_len`](Plan::file_len) bytes.
    ///
    /// # Errors
    /// As [`write_to`](Plan::write_to);
    /// [`TooLargeForTarget`](ErrorKind::TooLargeForTarget) when the file
    /// does not fit in memory on this target.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, Tensor}};
    /// let mut tensors = [Tensor::new("x", Dtype::I8, &[1], &[0xff])];
    /// let plan = Plan::new(&mut tensors)?;
    /// assert_eq!(plan.to_vec()?.len() as u64, plan.file_len());
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    #[cfg(feature = "alloc")]
    #[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
    pub fn to_vec(&self) -> Result<alloc::vec::Vec<u8>, Error>
    where
        T: AsTensor,
    {
        self.write_to(alloc::vec::Vec::new())
    }
}

impl<T, S> fmt::Debug for Writer<'_, T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Writer")
            .field("tensor", &self.index)
            .field("filled", &self.filled)
            .field("position", &self.position)
            .field("failed", &self.failed)
            .finish()
    }
}

impl<'p, T: AsSpec, S: Sink> Writer<'p, T, S> {
    /// Tells the sink the file length ([`Sink::reserve`]), then writes the
    /// 8-byte length and the padded header.
    ///
    /// # Errors
    /// Whatever the sink reports (for a [`SliceSink`](super::SliceSink)
    /// that is too small: [`BufferTooSmall`](ErrorKind::BufferTooSmall) with
    /// the file length, before anything is written).
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, SliceSink, TensorSpec, Writer}};
    /// let mut specs = [TensorSpec::new("x", Dtype::U8, &[2], 2)];
    /// let plan = Plan::new(&mut specs)?;
    /// let mut buf = [0u8; 128];
    /// let w = Writer::begin(&plan, SliceSink::new(&mut buf))?;
    /// assert_eq!(w.position(), plan.data_start());
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn begin(plan: &Plan<'p, T>, mut sink: S) -> Result<Self, Error> {
        sink.reserve(plan.file_len())?;
        plan.write_header(&mut sink)?;
        Ok(Writer::after_header(plan, sink))
    }

    /// A writer over a sink that already holds the plan's length and header.
    pub(crate) fn after_header(plan: &Plan<'p, T>, sink: S) -> Self {
        Writer {
            plan: *plan,
            sink,
            index: 0,
            begin: 0,
            filled: 0,
            position: plan.data_start(),
            failed: false,
        }
    }

    /// The tensor whose data is due now, or `None` when all are finished.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, SliceSink, TensorSpec, Writer}};
    /// let mut specs = [TensorSpec::new("x", Dtype::U8, &[0], 0)];
    /// let plan = Plan::new(&mut specs)?;
    /// let mut buf = [0u8; 256];
    /// let mut w = Writer::begin(&plan, SliceSink::new(&mut buf))?;
    /// assert_eq!(w.current().unwrap().spec().name(), "x");
    /// w.finish_tensor()?;
    /// assert!(w.current().is_none());
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn current(&self) -> Option<Placed<'p, T>> {
        let tensor = self.plan.tensors().get(self.index)?;
        Some(Placed::new(tensor, self.begin))
    }

    /// Bytes still due for the current tensor (0 when none is due).
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, SliceSink, TensorSpec, Writer}};
    /// let mut specs = [TensorSpec::new("x", Dtype::U8, &[4], 4)];
    /// let plan = Plan::new(&mut specs)?;
    /// let mut buf = [0u8; 256];
    /// let mut w = Writer::begin(&plan, SliceSink::new(&mut buf))?;
    /// w.write_tensor_data(&[1])?;
    /// assert_eq!(w.remaining(), 3);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn remaining(&self) -> u64 {
        self.current()
            .map_or(0, |t| t.byte_len().saturating_sub(self.filled))
    }

    /// Bytes written to the sink so far, counting the length and header.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, SliceSink, TensorSpec, Writer}};
    /// let mut specs = [TensorSpec::new("x", Dtype::U8, &[4], 4)];
    /// let plan = Plan::new(&mut specs)?;
    /// let mut buf = [0u8; 256];
    /// let mut w = Writer::begin(&plan, SliceSink::new(&mut buf))?;
    /// w.write_tensor_data(&[1, 2])?;
    /// assert_eq!(w.position(), plan.data_start() + 2);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub const fn position(&self) -> u64 {
        self.position
    }

    /// The plan being written.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, SliceSink, TensorSpec, Writer}};
    /// let mut specs = [TensorSpec::new("x", Dtype::U8, &[4], 4)];
    /// let plan = Plan::new(&mut specs)?;
    /// let mut buf = [0u8; 256];
    /// let w = Writer::begin(&plan, SliceSink::new(&mut buf))?;
    /// assert_eq!(w.plan().file_len(), plan.file_len());
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub const fn plan(&self) -> &Plan<'p, T> {
        &self.plan
    }

    /// The sink, to look at (writing to it directly would corrupt the file).
    ///
    /// ```
    /// use safetensors_nano::{Dtype, write::{Plan, SliceSink, TensorSpec, Writer}};
    /// let mut specs = [TensorSpec::new("x", Dtype::U8, &[4], 4)];
    /// let plan = Plan::new(&mut specs)?;
    /// let mut buf = [0u8; 256];
    /// let w = Writer::begin(&plan, SliceSink::new(&mut buf))?;
    /// assert_eq!(w.sink().written() as u64, plan.data_start());
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub const fn sink(&self) -> &S {
        &self.sink
    }

    #[cfg(feature = "std")]
    pub(crate) fn sink_mut(&mut self) -> &mut S {
        &mut self.sink
    }

    fn healthy(&self) -> Result<(), Error> {
        if self.failed {
            Err(ErrorKind::Sink.into())
        } else {
            Ok(())
        }
    }

    fn error(&self, kind: ErrorKind) -> Error {
        at_index(kind, self.index)
    }

    /// Checks that `name` is the tensor due now and that none of its data
    /// has been written yet, and returns it. Optional: it only checks.
    ///
    /// # Errors
    /// [`DataOutOfOrder`](ErrorKind::DataOutOfOrder) otherwise (also when all
    /// tensors are finished).
    ///
    /// ```
    /// use safetensors_nano::{Dtype, ErrorKind, write::{Plan, SliceSink, TensorSpec, Writer}};
    /// let mut specs = [TensorSpec::new("a", Dtype::U8, &[1], 1), TensorSpec::new("b", Dtype::U8, &[1], 1)];
    /// let plan = Plan::new(&mut specs)?;
    /// let mut buf = [0u8; 256];
    /// let mut w = Writer::begin(&plan, SliceSink::new(&mut buf))?;
    /// assert_eq!(w.begin_tensor("b").unwrap_err().kind(), ErrorKind::DataOutOfOrder);
    /// assert_eq!(w.begin_tensor("a")?.byte_len(), 1);
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn begin_tensor(&mut self, name: &str) -> Result<Placed<'p, T>, Error> {
        self.healthy()?;
        match self.current() {
            Some(t) if self.filled == 0 && t.spec().name() == name => Ok(t),
            _ => Err(self.error(ErrorKind::DataOutOfOrder)),
        }
    }

    /// Writes the next chunk of the current tensor's data.
    ///
    /// # Errors
    /// Nothing is written, for:
    /// [`DataLengthMismatch`](ErrorKind::DataLengthMismatch) when the chunk
    /// would take the tensor past its byte length (`found` = the length it
    /// would reach); [`DataOutOfOrder`](ErrorKind::DataOutOfOrder) when all
    /// tensors are finished. Whatever the sink reports.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, ErrorKind, write::{Plan, SliceSink, TensorSpec, Writer}};
    /// let mut specs = [TensorSpec::new("a", Dtype::U8, &[2], 2)];
    /// let plan = Plan::new(&mut specs)?;
    /// let mut buf = [0u8; 256];
    /// let mut w = Writer::begin(&plan, SliceSink::new(&mut buf))?;
    /// w.write_tensor_data(&[1])?;
    /// let err = w.write_tensor_data(&[2, 3]).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::DataLengthMismatch { expected: 2, found: 3 });
    /// w.write_tensor_data(&[2])?;
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn write_tensor_data(&mut self, chunk: &[u8]) -> Result<(), Error> {
        self.healthy()?;
        let Some(current) = self.current() else {
            return Err(self.error(ErrorKind::DataOutOfOrder));
        };
        let expected = current.byte_len();
        let found = self.filled.saturating_add(chunk.len() as u64);
        if found > expected {
            return Err(self.error(ErrorKind::DataLengthMismatch { expected, found }));
        }
        self.put(chunk)?;
        self.filled = found;
        Ok(())
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if let Err(e) = self.sink.write_all(bytes) {
            self.failed = true;
            return Err(e);
        }
        self.position = self.position.saturating_add(bytes.len() as u64);
        Ok(())
    }

    /// Ends the current tensor; the next one in the plan is due after it.
    ///
    /// # Errors
    /// [`DataLengthMismatch`](ErrorKind::DataLengthMismatch) when the tensor
    /// has not had all its bytes (`found` = bytes written);
    /// [`DataOutOfOrder`](ErrorKind::DataOutOfOrder) when all tensors are
    /// finished.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, ErrorKind, write::{Plan, SliceSink, TensorSpec, Writer}};
    /// let mut specs = [TensorSpec::new("a", Dtype::U8, &[2], 2)];
    /// let plan = Plan::new(&mut specs)?;
    /// let mut buf = [0u8; 256];
    /// let mut w = Writer::begin(&plan, SliceSink::new(&mut buf))?;
    /// w.write_tensor_data(&[1])?;
    /// assert_eq!(w.finish_tensor().unwrap_err().kind(), ErrorKind::DataLengthMismatch { expected: 2, found: 1 });
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn finish_tensor(&mut self) -> Result<(), Error> {
        self.healthy()?;
        let Some(current) = self.current() else {
            return Err(self.error(ErrorKind::DataOutOfOrder));
        };
        let expected = current.byte_len();
        if self.filled != expected {
            return Err(self.error(ErrorKind::DataLengthMismatch {
                expected,
                found: self.filled,
            }));
        }
        self.index = self.index.saturating_add(1);
        self.begin = current.data_offsets().1;
        self.filled = 0;
        Ok(())
    }

    /// Writes one whole tensor: [`begin_tensor`](Writer::begin_tensor), its
    /// data, [`finish_tensor`](Writer::finish_tensor). Lengths are checked
    /// before anything is written.
    ///
    /// # Errors
    /// [`DataOutOfOrder`](ErrorKind::DataOutOfOrder) when `name` is not due
    /// now; [`DataLengthMismatch`](ErrorKind::DataLengthMismatch) when
    /// `data` is not its byte length; whatever the sink reports.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, ErrorKind, write::{Plan, SliceSink, TensorSpec, Writer}};
    /// let mut specs = [TensorSpec::new("a", Dtype::U16, &[1], 2)];
    /// let plan = Plan::new(&mut specs)?;
    /// let mut buf = [0u8; 256];
    /// let mut w = Writer::begin(&plan, SliceSink::new(&mut buf))?;
    /// let err = w.write_tensor("a", &[1]).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::DataLengthMismatch { expected: 2, found: 1 });
    /// w.write_tensor("a", &[1, 0])?;
    /// w.finish()?;
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn write_tensor(&mut self, name: &str, data: &[u8]) -> Result<(), Error> {
        let expected = self.begin_tensor(name)?.byte_len();
        let found = data.len() as u64;
        if found != expected {
            return Err(self.error(ErrorKind::DataLengthMismatch { expected, found }));
        }
        self.write_tensor_data(data)?;
        self.finish_tensor()
    }

    /// Checks that every tensor is finished, flushes the sink and returns it.
    ///
    /// # Errors
    /// [`DataLengthMismatch`](ErrorKind::DataLengthMismatch) for the first
    /// tensor not finished (`found` = bytes it got); whatever the sink
    /// reports.
    ///
    /// ```
    /// use safetensors_nano::{Dtype, ErrorKind, TensorRef, write::{Plan, SliceSink, TensorSpec, Writer}};
    /// let mut specs = [TensorSpec::new("a", Dtype::U8, &[1], 1)];
    /// let plan = Plan::new(&mut specs)?;
    /// let mut buf = [0u8; 256];
    /// let w = Writer::begin(&plan, SliceSink::new(&mut buf))?;
    /// let err = w.finish().unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::DataLengthMismatch { expected: 1, found: 0 });
    /// assert_eq!(err.tensor(), Some(TensorRef::Index(0)));
    /// # Ok::<(), safetensors_nano::Error>(())
    /// ```
    pub fn finish(self) -> Result<S, Error> {
        let mut sink = self.finish_unflushed()?;
        sink.flush()?;
        Ok(sink)
    }

    /// [`finish`](Writer::finish) without the flush.
    pub(crate) fn finish_unflushed(self) -> Result<S, Error> {
        self.healthy()?;
        if let Some(current) = self.current() {
            return Err(self.error(ErrorKind::DataLengthMismatch {
                expected: current.byte_len(),
                found: self.filled,
            }));
        }
        Ok(self.sink)
    }
}
