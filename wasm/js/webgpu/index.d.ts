// Types of the entry `safetensors-nano/webgpu` (wasm/js/webgpu/index.js).
// The WebGPU types (GPUDevice, GPUBuffer, GPUBufferUsageFlags) are
// @webgpu/types' ("types": ["@webgpu/types"] in a tsconfig, or this reference).
/// <reference types="@webgpu/types" />

import type { SafeTensors, ShardedModel, Tensor } from '../index.js';

/**
 * What a buffer holds: the tensor's bytes as stored (`'raw'`, zero-padded
 * to a multiple of 4 bytes), or each element decoded on the GPU to an f32
 * (`'f32'`, bit-identical to `decodeFloat32`) or to the nearest f16 (`'f16'`,
 * ties to even; needs a device with the `'shader-f16'` feature, else a
 * SafeTensorsError of kind `GpuFeatureMissing`). Decoding a dtype that is
 * not a float is kind `DtypeMismatch`.
 */
export type GPUUploadMode = 'raw' | 'f32' | 'f16';

/** Options of toGPUBuffer. */
export interface ToGPUBufferOptions {
  /** Default 'raw'. */
  as?: GPUUploadMode;
  /**
   * The buffer's usage (default STORAGE | COPY_SRC | COPY_DST). The flags
   * the upload needs are added: COPY_DST for 'raw', STORAGE for a decode.
   * MAP_READ and MAP_WRITE are refused (InvalidArgument): a mappable
   * buffer cannot have those flags.
   */
  usage?: GPUBufferUsageFlags;
  /** The buffer's label (default: the tensor's name). */
  label?: string;
  /** Cancels the upload: the promise rejects with the signal's reason and the buffer is destroyed. */
  signal?: AbortSignal;
  /** Called after each chunk with the tensor's bytes uploaded and its byte length. */
  onProgress?: (done: number, total: number) => void;
  /**
   * Bytes read from the source per chunk (default 6 MiB; rounded down to
   * a multiple of 192 KiB, at most 15 MiB): JS holds about two chunks at a time.
   */
  chunkBytes?: number;
}

/** Options of toGPUBuffers. */
export interface ToGPUBuffersOptions {
  /** Which tensors to upload (default: all). */
  filter?: (tensor: Tensor) => boolean;
  /** One mode for all, or per tensor (default 'raw'), e.g. `(t) => (t.dtype === 'I8' ? 'raw' : 'f32')`. */
  as?: GPUUploadMode | ((tensor: Tensor) => GPUUploadMode);
  /** Every buffer's usage, as in toGPUBuffer. */
  usage?: GPUBufferUsageFlags;
  /** Each buffer's label (default: the tensor's name). */
  label?: (tensor: Tensor) => string;
  /** Cancels: the promise rejects with the signal's reason and every buffer made so far is destroyed. */
  signal?: AbortSignal;
  /** Called after each chunk: bytes uploaded of all the tensors, their total, the tensor being uploaded. */
  onProgress?: (done: number, total: number, tensor: string) => void;
  /** As in toGPUBuffer. */
  chunkBytes?: number;
}

/** STORAGE | COPY_SRC | COPY_DST: the default usage of the buffers. */
export const DEFAULT_USAGE: GPUBufferUsageFlags;

/**
 * Streams one tensor, from whatever source its file was opened with
 * (fromBytes without a copy, fromBlob, fromUrl, a shard), into a new
 * GPUBuffer in bounded chunks. A buffer above the device's `maxBufferSize`,
 * or with STORAGE usage above its `maxStorageBufferBindingSize`, is a
 * SafeTensorsError of kind `GpuLimitExceeded` naming the limit, raised
 * before any byte is read.
 *
 * @example
 * const st = await SafeTensors.fromBlob(file);
 * const w = await toGPUBuffer(device, st.tensor('fc1.weight')!, { as: 'f32' });
 */
export function toGPUBuffer(device: GPUDevice, tensor: Tensor, opts?: ToGPUBufferOptions): Promise<GPUBuffer>;

/**
 * Streams the tensors of a file or sharded model (those `filter` keeps)
 * into GPUBuffers, one after another: a Map from tensor name to buffer, in
 * the model's order. Every tensor's mode and size is checked before any
 * byte is read.
 *
 * @example
 * const model = await openSharded(indexUrl);
 * const buffers = await toGPUBuffers(device, model, {
 *   as: (t) => (t.dtype === 'BF16' ? 'f32' : 'raw'),
 *   onProgress: (done, total) => console.log(`${done} of ${total} bytes`),
 * });
 */
export function toGPUBuffers(
  device: GPUDevice,
  model: SafeTensors | ShardedModel,
  opts?: ToGPUBuffersOptions,
): Promise<Map<string, GPUBuffer>>;
