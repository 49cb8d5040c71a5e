// Type-checked (tsc --strict) against the installed package's webgpu/index.d.ts
// with @webgpu/types: the entry safetensors-nano/webgpu used with its
// declared types; misuse must not compile.
import { SafeTensors, openSharded, type Tensor } from 'safetensors-nano';
import {
  toGPUBuffer,
  toGPUBuffers,
  DEFAULT_USAGE,
  type GPUUploadMode,
  type ToGPUBufferOptions,
} from 'safetensors-nano/webgpu';

export async function upload(device: GPUDevice, file: File, indexUrl: string): Promise<number> {
  const st: SafeTensors = await SafeTensors.fromBlob(file);
  const t: Tensor = st.tensors()[0];
  const mode: GPUUploadMode = 'f32';
  const opts: ToGPUBufferOptions = {
    as: mode,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
    label: t.name,
    signal: new AbortController().signal,
    onProgress: (done: number, total: number) => void (done / total),
    chunkBytes: 1 << 20,
  };
  const b: GPUBuffer = await toGPUBuffer(device, t, opts);
  const usage: GPUBufferUsageFlags = DEFAULT_USAGE;
  const model = await openSharded(indexUrl);
  const all: Map<string, GPUBuffer> = await toGPUBuffers(device, model, {
    filter: (x: Tensor) => x.dtype !== 'I8',
    as: (x: Tensor) => (x.dtype === 'BF16' ? 'f32' : 'raw'),
    label: (x: Tensor) => `model/${x.name}`,
    onProgress: (done: number, total: number, name: string) => void [done, total, name],
  });
  // @ts-expect-error: 'f64' is not a mode
  await toGPUBuffer(device, t, { as: 'f64' });
  // @ts-expect-error: a tensor, not its name
  await toGPUBuffer(device, t.name);
  return b.size + usage + all.size;
}
