// The entry `safetensors-nano/webgpu`: tensors streamed from any source
// into GPUBuffers, as stored or decoded to f32 / f16 on the GPU.
//
// Bytes go from the file's source (memory, Blob, URL, shard) to the device
// in bounded chunks through `queue.writeBuffer`: at most the chunk being
// written and the one being read are in JS memory, and every few chunks
// the upload waits for the queue, so the browser's own staging stays
// bounded too. Decoding runs in a WGSL compute shader (wgsl.js) over one
// chunk at a time, written straight into the output buffer.

import { DTYPE_INFO } from '../format/dtypes.js';
import { KIND, fail } from '../errors/safetensors-error.js';
import { SHADER, WORKGROUP, constants } from './wgsl.js';

// GPUBufferUsage's flags (the global exists only where WebGPU does).
const MAP_READ = 0x1;
const MAP_WRITE = 0x2;
const COPY_SRC = 0x4;
const COPY_DST = 0x8;
const UNIFORM = 0x40;
const STORAGE = 0x80;

/** The default usage of the returned buffers: STORAGE | COPY_SRC | COPY_DST. */
export const DEFAULT_USAGE = STORAGE | COPY_SRC | COPY_DST;

// Chunks are a multiple of this many bytes: whole elements of every dtype
// (3 bytes for F6, 8 for F64) whose decoded output starts at a multiple of
// 256 bytes, the largest storage-binding offset alignment WebGPU allows.
const CHUNK_QUANTUM = 3 * 65536;
const DEFAULT_CHUNK = 32 * CHUNK_QUANTUM; // 6 MiB
const MAX_CHUNK = 80 * CHUNK_QUANTUM; // 15 MiB: an F4 chunk's f32 output fits the default 128 MiB binding
// Chunks written before the upload waits for the queue to catch up.
const IN_FLIGHT = 2;

const MODES = ['raw', 'f32', 'f16'];
const MAX_GROUPS = 65535;

// Per device: the shader module and one pipeline per dtype and output.
const pipelines = new WeakMap();

function pipeline(device, dtype, half) {
  let cache = pipelines.get(device);
  if (cache === undefined) {
    cache = { module: device.createShaderModule({ label: 'safetensors-nano decode', code: SHADER }), byKey: new Map() };
    pipelines.set(device, cache);
  }
  const key = `${dtype}/${half ? 'f16' : 'f32'}`;
  let p = cache.byKey.get(key);
  if (p === undefined) {
    p = device.createComputePipeline({
      label: `safetensors-nano decode ${key}`,
      layout: 'auto',
      compute: { module: cache.module, entryPoint: 'main', constants: constants(dtype, half) },
    });
    cache.byKey.set(key, p);
  }
  return p;
}

function roundUp4(n) {
  return Math.ceil(n / 4) * 4;
}

/** The byte length of a tensor's buffer in mode `as` (raw rounded up to whole words). */
function outputBytes(tensor, as) {
  if (as === 'raw') return roundUp4(tensor.byteLength);
  return as === 'f32' ? tensor.elementCount * 4 : roundUp4(tensor.elementCount * 2);
}

function checkMode(device, tensor, as) {
  if (!MODES.includes(as))
    fail(KIND.InvalidArgument, `as must be 'raw', 'f32' or 'f16', not ${JSON.stringify(as)}`, { tensor: tensor.name });
  if (as === 'raw') return;
  const info = DTYPE_INFO[tensor.dtype];
  if (info === undefined || constants(tensor.dtype, false) === null) {
    fail(KIND.DtypeMismatch, `${tensor.dtype} is not a float dtype: upload it with as: 'raw'`, { tensor: tensor.name });
  }
  if (as === 'f16' && !device.features.has('shader-f16')) {
    fail(
      KIND.GpuFeatureMissing,
      "as: 'f16' needs a device with the 'shader-f16' feature (requestDevice({ requiredFeatures: ['shader-f16'] }) " +
        "where the adapter has it); use as: 'f32' otherwise",
      { tensor: tensor.name },
    );
  }
}

function checkLimits(device, tensor, size, usage) {
  const { maxBufferSize, maxStorageBufferBindingSize } = device.limits;
  const over = (limit, value) =>
    fail(
      KIND.GpuLimitExceeded,
      `a buffer of ${size} bytes is above the device's ${limit} of ${value}: request a device with a higher ` +
        `requiredLimits.${limit} (up to the adapter's), or upload a smaller tensor`,
      { tensor: tensor.name },
    );
  if (size > maxBufferSize) over('maxBufferSize', maxBufferSize);
  if ((usage & STORAGE) !== 0 && size > maxStorageBufferBindingSize)
    over('maxStorageBufferBindingSize', maxStorageBufferBindingSize);
}

function chunkOption(chunkBytes) {
  if (chunkBytes === undefined) return DEFAULT_CHUNK;
  if (!(chunkBytes > 0)) fail(KIND.InvalidArgument, `chunkBytes must be a positive number, not ${chunkBytes}`);
  return Math.min(MAX_CHUNK, Math.max(CHUNK_QUANTUM, chunkBytes - (chunkBytes % CHUNK_QUANTUM)));
}

async function createBuffer(device, tensor, descriptor) {
  device.pushErrorScope('out-of-memory');
  device.pushErrorScope('validation');
  const buffer = device.createBuffer(descriptor);
  // Both scopes popped before any await: the scopes are the device's, and
  // another upload's would otherwise be pushed and popped in between.
  const [invalid, oom] = await Promise.all([device.popErrorScope(), device.popErrorScope()]);
  const error = invalid ?? oom;
  if (error !== null) {
    buffer.destroy();
    fail(KIND.GpuLimitExceeded, `the device could not create a buffer of ${descriptor.size} bytes: ${error.message}`, {
      tensor: tensor.name,
    });
  }
  return buffer;
}

// Bytes [start, end) of the tensor; a multiple of 4 long (zero-padded at the
// tensor's end), as writeBuffer needs.
async function readChunk(tensor, start, end, signal) {
  const bytes = await tensor._source.read(tensor.byteOffset + start, tensor.byteOffset + end, signal);
  if (bytes.byteLength % 4 === 0) return bytes;
  const padded = new Uint8Array(roundUp4(bytes.byteLength));
  padded.set(bytes);
  return padded;
}

// The decoder's buffers for one upload (or one toGPUBuffers call).
class Staging {
  constructor(device, chunk) {
    this.device = device;
    this.chunk = chunk;
    this.input = null;
    this.params = device.createBuffer({ label: 'safetensors-nano decode params', size: 8, usage: UNIFORM | COPY_DST });
  }
  inputFor(size) {
    if (this.input === null || this.input.size < size) {
      this.input?.destroy();
      this.input = this.device.createBuffer({
        label: 'safetensors-nano staging',
        size: Math.min(this.chunk, roundUp4(size)),
        usage: STORAGE | COPY_DST,
      });
    }
    return this.input;
  }
  destroy() {
    this.input?.destroy();
    this.params.destroy();
  }
}

// Decodes `bytes` (whole elements of the tensor's dtype, starting at element
// `first`) into `out` with the pipeline.
function decodeChunk(device, staging, pipe, out, half, bytes, first, count) {
  const input = staging.inputFor(bytes.byteLength);
  device.queue.writeBuffer(input, 0, bytes);
  const width = half ? 2 : 4;
  const invocations = half ? Math.ceil(count / 2) : count;
  const groups = Math.ceil(invocations / WORKGROUP);
  const x = Math.min(groups, MAX_GROUPS);
  const y = Math.ceil(groups / x);
  device.queue.writeBuffer(staging.params, 0, Uint32Array.of(count, x * WORKGROUP));
  const bind = device.createBindGroup({
    layout: pipe.getBindGroupLayout(0),
    entries: [
      { binding: 0, resource: { buffer: input, offset: 0, size: bytes.byteLength } },
      { binding: 1, resource: { buffer: out, offset: first * width, size: roundUp4(count * width) } },
      { binding: 2, resource: { buffer: staging.params } },
    ],
  });
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipe);
  pass.setBindGroup(0, bind);
  pass.dispatchWorkgroups(x, y);
  pass.end();
  device.queue.submit([encoder.finish()]);
}

// Streams one tensor into `out` (already created), chunk by chunk.
async function upload(device, tensor, out, as, staging, { signal, onProgress }) {
  const total = tensor.byteLength;
  const bits = DTYPE_INFO[tensor.dtype].bits;
  const pipe = as === 'raw' ? null : pipeline(device, tensor.dtype, as === 'f16');
  const step = staging.chunk;
  onProgress?.(0, total);
  signal?.throwIfAborted();
  let next = total > 0 ? readChunk(tensor, 0, Math.min(step, total), signal) : null;
  let written = 0;
  for (let done = 0; done < total; ) {
    const bytes = await next;
    const end = Math.min(total, done + step);
    // The next chunk is read while this one is written and decoded.
    next = end < total ? readChunk(tensor, end, Math.min(total, end + step), signal) : null;
    next?.catch(() => {}); // (its failure is seen when it is awaited)
    if (pipe === null) {
      device.queue.writeBuffer(out, done, bytes);
    } else {
      const first = (done * 8) / bits;
      decodeChunk(
        device,
        staging,
        pipe,
        out,
        as === 'f16',
        bytes.subarray(0, roundUp4(end - done)),
        first,
        ((end - done) * 8) / bits,
      );
    }
    done = end;
    if (++written % IN_FLIGHT === 0) await device.queue.onSubmittedWorkDone();
    signal?.throwIfAborted();
    onProgress?.(done, total);
  }
  await device.queue.onSubmittedWorkDone();
  signal?.throwIfAborted();
}

function usageOption(usage, as) {
  const u = usage ?? DEFAULT_USAGE;
  // (A mappable buffer cannot have the STORAGE or COPY_DST the upload adds.)
  if (!Number.isInteger(u) || u < 0 || (u & (MAP_READ | MAP_WRITE)) !== 0) {
    fail(KIND.InvalidArgument, `usage must be GPUBufferUsage flags without MAP_READ or MAP_WRITE, not ${usage}`);
  }
  // What the upload itself needs: COPY_DST for writeBuffer, STORAGE for the decoder.
  return u | (as === 'raw' ? COPY_DST : STORAGE);
}

async function oneBuffer(device, tensor, opts, staging) {
  const as = opts.as ?? 'raw';
  checkMode(device, tensor, as);
  const usage = usageOption(opts.usage, as);
  const size = outputBytes(tensor, as);
  checkLimits(device, tensor, size, usage);
  opts.signal?.throwIfAborted();
  const buffer = await createBuffer(device, tensor, { label: opts.label ?? tensor.name, size, usage });
  try {
    await upload(device, tensor, buffer, as, staging, opts);
  } catch (e) {
    buffer.destroy();
    throw e;
  }
  return buffer;
}

/**
 * Streams one tensor into a new GPUBuffer: its bytes as stored (`as:
 * 'raw'`, the default), or decoded on the GPU to f32 or f16.
 * @returns {Promise<GPUBuffer>}
 */
export async function toGPUBuffer(device, tensor, opts = {}) {
  const staging = new Staging(device, chunkOption(opts.chunkBytes));
  try {
    return await oneBuffer(device, tensor, opts, staging);
  } finally {
    staging.destroy();
  }
}

/**
 * Streams many tensors (of a SafeTensors or a ShardedModel, those `filter`
 * keeps) into GPUBuffers: a Map of name to buffer, in the model's order.
 */
export async function toGPUBuffers(device, model, opts = {}) {
  const { filter, as, onProgress, signal } = opts;
  const tensors = model.tensors().filter((t) => filter === undefined || filter(t));
  const modeOf = typeof as === 'function' ? as : () => as;
  const plan = tensors.map((t) => ({ tensor: t, as: modeOf(t) ?? 'raw' }));
  const total = tensors.reduce((n, t) => n + t.byteLength, 0);
  // Every tensor is checked before any byte moves.
  for (const { tensor, as: mode } of plan) {
    checkMode(device, tensor, mode);
    checkLimits(device, tensor, outputBytes(tensor, mode), usageOption(opts.usage, mode));
  }
  const buffers = new Map();
  const staging = new Staging(device, chunkOption(opts.chunkBytes));
  let before = 0;
  try {
    for (const { tensor, as: mode } of plan) {
      const label = opts.label === undefined ? tensor.name : opts.label(tensor);
      const progress = onProgress && ((done) => onProgress(before + done, total, tensor.name));
      buffers.set(
        tensor.name,
        await oneBuffer(device, tensor, { usage: opts.usage, as: mode, label, signal, onProgress: progress }, staging),
      );
      before += tensor.byteLength;
    }
  } catch (e) {
    for (const b of buffers.values()) b.destroy();
    throw e;
  } finally {
    staging.destroy();
  }
  return buffers;
}
