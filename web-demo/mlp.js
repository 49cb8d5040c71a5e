// The firmware's digit classifier (scripts/train_digits.py: a
// 64-32-16-10 ReLU perceptron; fc1 F16, fc2 BF16, fc3 I8 with a per-row F32
// scale, F32 biases), run two ways over the same file: in WGSL on the GPU,
// its weights streamed there by safetensors-nano/webgpu, and in JS on the
// CPU, its weights decoded by the package's wasm.
//
// Both repeat the firmware's arithmetic (firmware/src/model.rs): x = pixel / 16;
// per output j, acc = 0, then acc += w[j][i] * x[i] for i ascending, then
// acc *= scale[j] (fc3), then acc += bias[j]; ReLU after fc1 and fc2. The
// prediction is the first largest logit.

import { toGPUBuffers } from './vendor/safetensors-nano/webgpu/index.js';

/** The layers: weight [out, in], bias, optional per-row scale, ReLU. */
export const LAYERS = [
  { weight: 'fc1.weight', bias: 'fc1.bias', scale: null, relu: true, inputs: 64, outputs: 32 },
  { weight: 'fc2.weight', bias: 'fc2.bias', scale: null, relu: true, inputs: 32, outputs: 16 },
  { weight: 'fc3.weight', bias: 'fc3.bias', scale: 'fc3.scale', relu: false, inputs: 16, outputs: 10 },
];
export const PIXELS = 64;
export const CLASSES = 10;

/** The index of the first largest value in row `r` of `classes`-wide logits. */
export function argmax(logits, r = 0, classes = CLASSES) {
  let best = 0;
  for (let j = 1; j < classes; j++) if (logits[r * classes + j] > logits[r * classes + best]) best = j;
  return best;
}

// ---- CPU: every weight decoded to f32 (I8 as its integers), f32 arithmetic.

/** Reads the model's tensors for the CPU path: floats through readFloat32 (wasm), I8 as Int8Array. */
export async function loadCpuWeights(model) {
  const weights = new Map();
  for (const t of model.tensors()) {
    weights.set(t.name, t.dtype === 'I8' ? new Int8Array((await t.read()).slice().buffer) : await t.readFloat32());
  }
  return weights;
}

/** Logits [n × 10] of n images of 64 pixels (0..16), each step rounded to f32 as the firmware's. */
export function cpuLogits(weights, pixels, n) {
  const f = Math.fround;
  const out = new Float32Array(n * CLASSES);
  for (let s = 0; s < n; s++) {
    let x = new Float32Array(PIXELS);
    for (let i = 0; i < PIXELS; i++) x[i] = f(pixels[s * PIXELS + i] / 16);
    for (const layer of LAYERS) {
      const w = weights.get(layer.weight);
      const b = weights.get(layer.bias);
      const scale = layer.scale && weights.get(layer.scale);
      const y = new Float32Array(layer.outputs);
      for (let j = 0; j < layer.outputs; j++) {
        let acc = 0;
        for (let i = 0; i < layer.inputs; i++) acc = f(acc + f(w[j * layer.inputs + i] * x[i]));
        if (scale) acc = f(acc * scale[j]);
        acc = f(acc + b[j]);
        y[j] = layer.relu && !(acc > 0) ? 0 : acc;
      }
      x = y;
    }
    out.set(x, s * CLASSES);
  }
  return out;
}

// ---- GPU: one dispatch per layer, one invocation per (image, output).

const SHADER = /* wgsl */ `
struct Dims { images: u32 }
@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> pixels: array<u32>;   // U8 [n, 64], as stored
@group(0) @binding(2) var<storage, read> input: array<f32>;
@group(0) @binding(3) var<storage, read> weight: array<f32>;   // decoded from F16 / BF16
@group(0) @binding(4) var<storage, read> weight_i8: array<u32>; // I8 [out, in], as stored
@group(0) @binding(5) var<storage, read> scale: array<f32>;
@group(0) @binding(6) var<storage, read> bias: array<f32>;
@group(0) @binding(7) var<storage, read_write> output: array<f32>;

override INPUTS: u32;
override OUTPUTS: u32;

fn pixel(k: u32) -> f32 {
  return f32(extractBits(pixels[k / 4u], (k % 4u) * 8u, 8u)) / 16.0;
}

fn relu(v: f32) -> f32 {
  return select(0.0, v, v > 0.0);
}

@compute @workgroup_size(64)
fn fc1(@builtin(global_invocation_id) id: vec3<u32>) {
  let s = id.x / OUTPUTS;
  let j = id.x % OUTPUTS;
  if (s >= dims.images) { return; }
  var acc = 0.0;
  for (var i = 0u; i < INPUTS; i++) {
    acc = acc + weight[j * INPUTS + i] * pixel(s * INPUTS + i);
  }
  output[id.x] = relu(acc + bias[j]);
}

@compute @workgroup_size(64)
fn fc2(@builtin(global_invocation_id) id: vec3<u32>) {
  let s = id.x / OUTPUTS;
  let j = id.x % OUTPUTS;
  if (s >= dims.images) { return; }
  var acc = 0.0;
  for (var i = 0u; i < INPUTS; i++) {
    acc = acc + weight[j * INPUTS + i] * input[s * INPUTS + i];
  }
  output[id.x] = relu(acc + bias[j]);
}

@compute @workgroup_size(64)
fn fc3(@builtin(global_invocation_id) id: vec3<u32>) {
  let s = id.x / OUTPUTS;
  let j = id.x % OUTPUTS;
  if (s >= dims.images) { return; }
  var acc = 0.0;
  for (var i = 0u; i < INPUTS; i++) {
    let k = j * INPUTS + i;
    let w = f32(extractBits(i32(weight_i8[k / 4u]), (k % 4u) * 8u, 8u));
    acc = acc + w * input[s * INPUTS + i];
  }
  output[id.x] = acc * scale[j] + bias[j];
}
`;

const STORAGE = 0x80;
const COPY_SRC = 0x4;
const COPY_DST = 0x8;
const UNIFORM = 0x40;
const MAP_READ = 0x1;

/** The classifier on a GPUDevice: weights streamed from the file by safetensors-nano/webgpu. */
export class GpuMlp {
  constructor(device, buffers) {
    this.device = device;
    this.buffers = buffers;
    const module = device.createShaderModule({ label: 'digits MLP', code: SHADER });
    this.pipelines = LAYERS.map((l, k) =>
      device.createComputePipeline({
        label: `digits fc${k + 1}`,
        layout: 'auto',
        compute: { module, entryPoint: `fc${k + 1}`, constants: { INPUTS: l.inputs, OUTPUTS: l.outputs } },
      }),
    );
  }

  /**
   * Uploads the model's tensors: F16 and BF16 weights decoded to f32 on the
   * GPU, I8 as stored, F32 as is. `onProgress(done, total)` in bytes.
   */
  static async load(device, model, { onProgress, signal } = {}) {
    const buffers = await toGPUBuffers(device, model, {
      as: (t) => (t.dtype === 'I8' ? 'raw' : 'f32'),
      usage: STORAGE | COPY_DST,
      onProgress,
      signal,
    });
    return new GpuMlp(device, buffers);
  }

  /** A buffer holding the pixels of n images (Uint8Array, 0..16). */
  pixelBuffer(pixels) {
    const padded = new Uint8Array(Math.ceil(pixels.length / 4) * 4);
    padded.set(pixels);
    const b = this.device.createBuffer({ label: 'digits pixels', size: padded.length, usage: STORAGE | COPY_DST });
    this.device.queue.writeBuffer(b, 0, padded);
    return b;
  }

  /** Logits [n × 10] of the n images in `pixels` (a GPUBuffer of U8 [n, 64]). */
  async logits(pixels, n) {
    const d = this.device;
    const made = [];
    const buffer = (size, usage, label) => {
      const b = d.createBuffer({ label, size, usage });
      made.push(b);
      return b;
    };
    const dims = buffer(16, UNIFORM | COPY_DST, 'digits dims');
    d.queue.writeBuffer(dims, 0, Uint32Array.of(n, 0, 0, 0));
    const outputs = LAYERS.map((l, k) => buffer(n * l.outputs * 4, STORAGE | COPY_SRC, `digits fc${k + 1} out`));
    const readBack = buffer(n * CLASSES * 4, MAP_READ | COPY_DST, 'digits logits');
    const encoder = d.createCommandEncoder();
    LAYERS.forEach((layer, k) => {
      const b = (name) => ({ buffer: this.buffers.get(name) });
      const entries = [
        { binding: 0, resource: { buffer: dims } },
        { binding: 6, resource: b(layer.bias) },
        { binding: 7, resource: { buffer: outputs[k] } },
      ];
      if (k === 0)
        entries.push({ binding: 1, resource: { buffer: pixels } }, { binding: 3, resource: b(layer.weight) });
      if (k === 1)
        entries.push({ binding: 2, resource: { buffer: outputs[0] } }, { binding: 3, resource: b(layer.weight) });
      if (k === 2) {
        entries.push(
          { binding: 2, resource: { buffer: outputs[1] } },
          { binding: 4, resource: b(layer.weight) },
          { binding: 5, resource: b(layer.scale) },
        );
      }
      const pass = encoder.beginComputePass();
      pass.setPipeline(this.pipelines[k]);
      pass.setBindGroup(0, d.createBindGroup({ layout: this.pipelines[k].getBindGroupLayout(0), entries }));
      pass.dispatchWorkgroups(Math.ceil((n * layer.outputs) / 64));
      pass.end();
    });
    encoder.copyBufferToBuffer(outputs[2], 0, readBack, 0, n * CLASSES * 4);
    d.queue.submit([encoder.finish()]);
    try {
      await readBack.mapAsync(1 /* GPUMapMode.READ */);
      return new Float32Array(readBack.getMappedRange().slice(0));
    } finally {
      for (const b of made) b.destroy();
    }
  }
}
