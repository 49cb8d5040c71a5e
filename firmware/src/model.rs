//! The digit classifier: a 64-32-16-10 perceptron (see scripts/train_digits.py).
//!
//! One inference routine, two weight sources: [`Mapped`] takes typed views of
//! a file in memory-mapped flash, [`Streamed`] reads one weight row at a time
//! through a [`FlashReader`] into a small RAM buffer. Both feed [`evaluate`]
//! the same f32 numbers in the same order, so their results agree bit for bit.
//!
//! Arithmetic (the host test repeats it with numpy): `x = pixel / 16`; a layer
//! computes `acc = 0; acc += w[j][i] * x[i]` for `i` ascending, in f32, then
//! `acc * scale[j]` (fc3 only), then `+ bias[j]`; fc1 and fc2 apply ReLU.

use embedded_storage::nor_flash::ReadNorFlash;
use half::{bf16, f16};
use safetensors_nano::flash::FlashReader;
use safetensors_nano::{Dtype, Error, Header, SafeTensors, Slot, TensorInfo};

pub const INPUTS: usize = 64;
pub const CLASSES: usize = 10;

/// One dense layer as stored in the file.
struct Layer {
    weight: &'static str,
    bias: &'static str,
    scale: Option<&'static str>,
    dtype: Dtype,
    inputs: usize,
    outputs: usize,
    relu: bool,
}

const LAYERS: [Layer; 3] = [
    Layer {
        weight: "fc1.weight",
        bias: "fc1.bias",
        scale: None,
        dtype: Dtype::F16,
        inputs: 64,
        outputs: 32,
        relu: true,
    },
    Layer {
        weight: "fc2.weight",
        bias: "fc2.bias",
        scale: None,
        dtype: Dtype::BF16,
        inputs: 32,
        outputs: 16,
        relu: true,
    },
    Layer {
        weight: "fc3.weight",
        bias: "fc3.bias",
        scale: Some("fc3.scale"),
        dtype: Dtype::I8,
        inputs: 16,
        outputs: CLASSES,
        relu: false,
    },
];
/// Widest layer output (bias and activation buffers).
const MAX_WIDTH: usize = 32;

/// Why a run stopped.
#[derive(Debug, Clone, Copy)]
pub enum Failure {
    /// The file is not valid safetensors, or the storage failed: the crate's typed error.
    Format(Error),
    /// The file is valid but is not the model (or sample set) this firmware runs.
    Model(&'static str),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Format(e)
    }
}

/// Which f32 vector of a layer.
#[derive(Clone, Copy)]
pub enum Vector {
    Bias,
    Scale,
}

/// A source of weights for [`evaluate`].
pub trait Weights {
    /// Row `row` of layer `layer`'s weight matrix, as f32, into `out` (fan-in long).
    fn row(&mut self, layer: usize, row: usize, out: &mut [f32]) -> Result<(), Failure>;
    /// A layer's bias or scale vector into `out` (fan-out long).
    fn vector(&mut self, layer: usize, which: Vector, out: &mut [f32]) -> Result<(), Failure>;
}

/// A source of labelled samples for [`evaluate`].
pub trait Samples {
    /// Number of samples.
    fn len(&self) -> usize;
    /// Sample `i`: its pixels into `pixels`, and its label.
    fn sample(&mut self, i: usize, pixels: &mut [u8; INPUTS]) -> Result<u8, Failure>;
}

/// What a run over all samples produced (the predictions themselves go to
/// [`evaluate`]'s callback as they are made: no array of them is kept).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    pub total: usize,
    pub correct: usize,
    /// FNV-1a over the little-endian bytes of every logit, sample by sample.
    pub logits_hash: u32,
    /// FNV-1a over the predicted classes, one byte each.
    pub predictions_hash: u32,
}

const FNV_OFFSET: u32 = 0x811c_9dc5;

fn fnv1a(hash: u32, byte: u8) -> u32 {
    (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
}

/// Classifies every sample, calling `on_prediction(class)` for each in
/// order; counts correct predictions.
pub fn evaluate(
    weights: &mut impl Weights,
    samples: &mut impl Samples,
    mut on_prediction: impl FnMut(u8),
) -> Result<Outcome, Failure> {
    let total = samples.len();
    let mut outcome = Outcome {
        total,
        correct: 0,
        logits_hash: FNV_OFFSET,
        predictions_hash: FNV_OFFSET,
    };
    let mut pixels = [0u8; INPUTS];
    for i in 0..total {
        let label = samples.sample(i, &mut pixels)?;
        let logits = infer(weights, &pixels)?;
        for byte in logits.iter().flat_map(|l| l.to_le_bytes()) {
            outcome.logits_hash = fnv1a(outcome.logits_hash, byte);
        }
        let class = argmax(&logits);
        outcome.predictions_hash = fnv1a(outcome.predictions_hash, class);
        on_prediction(class);
        if class == label {
            outcome.correct += 1;
        }
    }
    Ok(outcome)
}

/// The logits for one 8×8 image of pixel values 0..=16.
pub fn infer(weights: &mut impl Weights, pixels: &[u8; INPUTS]) -> Result<[f32; CLASSES], Failure> {
    let mut x = [0.0f32; INPUTS];
    for (x, &p) in x.iter_mut().zip(pixels) {
        *x = f32::from(p) / 16.0;
    }
    let mut y = [0.0f32; MAX_WIDTH];
    let mut width = INPUTS;
    for (l, layer) in LAYERS.iter().enumerate() {
        dense(weights, l, &x[..width], &mut y[..layer.outputs])?;
        width = layer.outputs;
        x[..width].copy_from_slice(&y[..width]);
    }
    let mut logits = [0.0f32; CLASSES];
    logits.copy_from_slice(&x[..CLASSES]);
    Ok(logits)
}

fn dense(weights: &mut impl Weights, l: usize, x: &[f32], y: &mut [f32]) -> Result<(), Failure> {
    let layer = &LAYERS[l];
    let mut bias = [0.0f32; MAX_WIDTH];
    let bias = &mut bias[..layer.outputs];
    weights.vector(l, Vector::Bias, bias)?;
    let mut scale = [1.0f32; MAX_WIDTH];
    let scale = &mut scale[..layer.outputs];
    if layer.scale.is_some() {
        weights.vector(l, Vector::Scale, scale)?;
    }
    let mut row = [0.0f32; INPUTS];
    let row = &mut row[..layer.inputs];
    for (j, out) in y.iter_mut().enumerate() {
        weights.row(l, j, row)?;
        let mut acc = 0.0f32;
        for (w, x) in row.iter().zip(x) {
            acc += w * x;
        }
        if layer.scale.is_some() {
            acc *= scale[j];
        }
        acc += bias[j];
        // ReLU keeps only values above zero (NaN becomes 0, as on the host).
        *out = if !layer.relu || acc > 0.0 { acc } else { 0.0 };
    }
    Ok(())
}

/// Index of the first largest logit.
fn argmax(logits: &[f32; CLASSES]) -> u8 {
    let mut best = 0;
    for (i, &v) in logits.iter().enumerate() {
        if v > logits[best] {
            best = i;
        }
    }
    best as u8
}

fn check(info: &TensorInfo<'_>, dtype: Dtype, shape: &[usize]) -> Result<(), Failure> {
    if info.dtype() != dtype {
        return Err(Failure::Model("a tensor has an unexpected dtype"));
    }
    if !info.shape().iter().eq(shape.iter().map(|&d| d as u64)) {
        return Err(Failure::Model("a tensor has an unexpected shape"));
    }
    Ok(())
}

fn layer_vector_name(layer: &Layer, which: Vector) -> &'static str {
    match which {
        Vector::Bias => layer.bias,
        Vector::Scale => layer.scale.unwrap_or(layer.bias),
    }
}

// ---------------------------------------------------------------- mapped

/// Weights as typed views straight into the memory-mapped file.
pub struct Mapped<'a> {
    fc1: &'a [f16],
    fc2: &'a [bf16],
    fc3: &'a [i8],
    /// Bias and scale of each layer (scale = bias where a layer has none).
    vectors: [[&'a [f32]; 2]; 3],
}

impl<'a> Mapped<'a> {
    /// Finds and checks every tensor; takes zero-copy typed views.
    pub fn new<S: AsRef<[Slot]> + AsMut<[Slot]>>(
        file: &SafeTensors<'a, S>,
    ) -> Result<Self, Failure> {
        let view = |name: &'static str, dtype: Dtype, shape: &[usize]| {
            let view = file
                .tensor(name)
                .ok_or(Failure::Model("a tensor is missing"))?;
            check(&view.info(), dtype, shape)?;
            Ok::<_, Failure>(view)
        };
        let mut vectors: [[&'a [f32]; 2]; 3] = [[&[]; 2]; 3];
        for (layer, v) in LAYERS.iter().zip(vectors.iter_mut()) {
            for (which, slot) in [Vector::Bias, Vector::Scale].into_iter().zip(v.iter_mut()) {
                *slot = view(
                    layer_vector_name(layer, which),
                    Dtype::F32,
                    &[layer.outputs],
                )?
                .try_view::<f32>()?;
            }
        }
        let shape = |l: usize| [LAYERS[l].outputs, LAYERS[l].inputs];
        Ok(Mapped {
            fc1: view(LAYERS[0].weight, LAYERS[0].dtype, &shape(0))?.try_view::<f16>()?,
            fc2: view(LAYERS[1].weight, LAYERS[1].dtype, &shape(1))?.try_view::<bf16>()?,
            fc3: view(LAYERS[2].weight, LAYERS[2].dtype, &shape(2))?.try_view::<i8>()?,
            vectors,
        })
    }
}

impl Weights for Mapped<'_> {
    fn row(&mut self, layer: usize, row: usize, out: &mut [f32]) -> Result<(), Failure> {
        let n = out.len();
        let range = row * n..(row + 1) * n;
        match layer {
            0 => out
                .iter_mut()
                .zip(&self.fc1[range])
                .for_each(|(o, w)| *o = w.to_f32()),
            1 => out
                .iter_mut()
                .zip(&self.fc2[range])
                .for_each(|(o, w)| *o = w.to_f32()),
            _ => out
                .iter_mut()
                .zip(&self.fc3[range])
                .for_each(|(o, &w)| *o = f32::from(w)),
        }
        Ok(())
    }

    fn vector(&mut self, layer: usize, which: Vector, out: &mut [f32]) -> Result<(), Failure> {
        out.copy_from_slice(self.vectors[layer][which as usize]);
        Ok(())
    }
}

/// Samples as typed views into the memory-mapped sample file.
pub struct MappedSamples<'a> {
    x: &'a [u8],
    y: &'a [u8],
}

impl<'a> MappedSamples<'a> {
    pub fn new<S: AsRef<[Slot]> + AsMut<[Slot]>>(
        file: &SafeTensors<'a, S>,
    ) -> Result<Self, Failure> {
        sample_tensors(file.header())?;
        let view = |name| {
            file.tensor(name)
                .ok_or(Failure::Model("a sample tensor is missing"))
        };
        Ok(MappedSamples {
            x: view("x")?.try_view::<u8>()?,
            y: view("y")?.try_view::<u8>()?,
        })
    }
}

impl Samples for MappedSamples<'_> {
    fn len(&self) -> usize {
        self.y.len()
    }

    fn sample(&mut self, i: usize, pixels: &mut [u8; INPUTS]) -> Result<u8, Failure> {
        pixels.copy_from_slice(&self.x[i * INPUTS..(i + 1) * INPUTS]);
        Ok(self.y[i])
    }
}

/// Finds and checks the sample tensors: `x` U8 [n, 64], `y` U8 [n].
fn sample_tensors<'a, S: AsRef<[Slot]>>(
    header: &Header<'a, S>,
) -> Result<(TensorInfo<'a>, TensorInfo<'a>), Failure> {
    let x = header
        .tensor("x")
        .ok_or(Failure::Model("sample tensor x is missing"))?;
    let y = header
        .tensor("y")
        .ok_or(Failure::Model("sample tensor y is missing"))?;
    let n = y.element_count() as usize;
    check(&y, Dtype::U8, &[n])?;
    check(&x, Dtype::U8, &[n, INPUTS])?;
    Ok((x, y))
}

// ---------------------------------------------------------------- streamed

/// Weights read row by row from storage into a 128-byte RAM buffer.
pub struct Streamed<'r, 'h, F: ReadNorFlash, S> {
    reader: &'r mut FlashReader<F>,
    header: &'r Header<'h, S>,
    weights: [TensorInfo<'h>; 3],
    vectors: [[TensorInfo<'h>; 2]; 3],
}

impl<'r, 'h, F: ReadNorFlash, S: AsRef<[Slot]>> Streamed<'r, 'h, F, S> {
    /// Finds and checks every tensor in the header; reads nothing yet.
    pub fn new(reader: &'r mut FlashReader<F>, header: &'r Header<'h, S>) -> Result<Self, Failure> {
        let info = |name: &'static str, dtype: Dtype, shape: &[usize]| {
            let info = header
                .tensor(name)
                .ok_or(Failure::Model("a tensor is missing"))?;
            check(&info, dtype, shape)?;
            Ok::<_, Failure>(info)
        };
        let weight = |l: usize| {
            info(
                LAYERS[l].weight,
                LAYERS[l].dtype,
                &[LAYERS[l].outputs, LAYERS[l].inputs],
            )
        };
        let vectors = |l: usize| {
            let layer = &LAYERS[l];
            Ok::<_, Failure>([
                info(
                    layer_vector_name(layer, Vector::Bias),
                    Dtype::F32,
                    &[layer.outputs],
                )?,
                info(
                    layer_vector_name(layer, Vector::Scale),
                    Dtype::F32,
                    &[layer.outputs],
                )?,
            ])
        };
        Ok(Streamed {
            weights: [weight(0)?, weight(1)?, weight(2)?],
            vectors: [vectors(0)?, vectors(1)?, vectors(2)?],
            reader,
            header,
        })
    }
}

impl<F: ReadNorFlash, S: AsRef<[Slot]>> Weights for Streamed<'_, '_, F, S> {
    fn row(&mut self, layer: usize, row: usize, out: &mut [f32]) -> Result<(), Failure> {
        let info = &self.weights[layer];
        let size = usize::from(info.dtype().bits()) / 8;
        let mut buf = [0u8; INPUTS * 2];
        let bytes = &mut buf[..out.len() * size];
        self.reader
            .read_at(self.header, info, (row * bytes.len()) as u64, bytes)?;
        match info.dtype() {
            Dtype::F16 => {
                for (o, b) in out.iter_mut().zip(bytes.chunks_exact(2)) {
                    *o = f16::from_le_bytes([b[0], b[1]]).to_f32();
                }
            }
            Dtype::BF16 => {
                for (o, b) in out.iter_mut().zip(bytes.chunks_exact(2)) {
                    *o = bf16::from_le_bytes([b[0], b[1]]).to_f32();
                }
            }
            _ => {
                for (o, &b) in out.iter_mut().zip(bytes.iter()) {
                    *o = f32::from(b as i8);
                }
            }
        }
        Ok(())
    }

    fn vector(&mut self, layer: usize, which: Vector, out: &mut [f32]) -> Result<(), Failure> {
        let info = &self.vectors[layer][which as usize];
        self.reader.read_into(self.header, info, out)?;
        Ok(())
    }
}

/// Samples read one at a time from storage: 64 pixel bytes, then one label byte.
pub struct StreamedSamples<'r, 'h, F: ReadNorFlash, S> {
    reader: &'r mut FlashReader<F>,
    header: &'r Header<'h, S>,
    x: TensorInfo<'h>,
    y: TensorInfo<'h>,
}

impl<'r, 'h, F: ReadNorFlash, S: AsRef<[Slot]>> StreamedSamples<'r, 'h, F, S> {
    pub fn new(reader: &'r mut FlashReader<F>, header: &'r Header<'h, S>) -> Result<Self, Failure> {
        let (x, y) = sample_tensors(header)?;
        Ok(StreamedSamples {
            reader,
            header,
            x,
            y,
        })
    }
}

impl<F: ReadNorFlash, S: AsRef<[Slot]>> Samples for StreamedSamples<'_, '_, F, S> {
    fn len(&self) -> usize {
        self.y.element_count() as usize
    }

    fn sample(&mut self, i: usize, pixels: &mut [u8; INPUTS]) -> Result<u8, Failure> {
        self.reader
            .read_at(self.header, &self.x, (i * INPUTS) as u64, pixels)?;
        let mut label = [0u8];
        self.reader
            .read_at(self.header, &self.y, i as u64, &mut label)?;
        Ok(label[0])
    }
}
