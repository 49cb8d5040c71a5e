// Type-checked (tsc --strict) against the installed package's index.d.ts:
// every export is used with its declared types; misuse must not compile.
import {
  SafeTensors,
  SafeTensorsError,
  type ShardedModel,
  openSharded,
  openHub,
  checkShards,
  shardFindingMessage,
  decodeFloat32,
  serialize,
  wasmMemoryBytes,
  DTYPES,
  DTYPE_INFO,
  type Dtype,
  type DtypeInfo,
  type DtypeKind,
  type ShardFinding,
  type ShardHeader,
  type FloatDtype,
  type Tensor,
  type TypedArray,
  type ParameterCount,
  type ErrorKind,
  type OpenOptions,
  type BlobOptions,
  type UrlOptions,
  type ShardedOptions,
  type HubOptions,
  type ReadOptions,
  type TensorInput,
  type SliceEntry,
  type ReadSliceOptions,
} from 'safetensors-nano';

export async function use(buf: ArrayBuffer, file: File, url: string): Promise<number> {
  const a: SafeTensors = SafeTensors.fromBytes(buf);
  const b: SafeTensors = await SafeTensors.fromBlob(file, { signal: AbortSignal.timeout(1000) });
  const c: SafeTensors = await SafeTensors.fromUrl(url, { headers: { Authorization: 'x' }, prefetch: 8 });
  const h: SafeTensors = SafeTensors.fromHeader(new Uint8Array(8), 10n);
  const names: string[] = a.names();
  const meta: Record<string, string> | null = b.metadata();
  const t: Tensor | undefined = c.tensor(names[0]);
  if (t) {
    const d: Dtype = t.dtype;
    const shape: number[] = t.shape;
    const [begin, end]: [number, number] = t.dataOffsets;
    const bytes: Uint8Array = t.bytes();
    const view: TypedArray | null = t.view();
    const f: Float32Array = t.toFloat32();
    const r: Uint8Array = await t.read({ signal: undefined });
    const g: Float32Array = await t.readFloat32({
      chunkBytes: 1 << 20,
      onProgress: (done: number, total: number) => void [done, total],
    });
    const into: Float32Array = await t.readFloat32({ out: new Float32Array(t.elementCount) });
    const spec: SliceEntry[] = [null, 2, [1, null], [0, -1, 2]];
    const so: ReadSliceOptions = { signal: undefined, onProgress: (done: number, total: number) => void [done, total] };
    const sl: { shape: number[]; bytes: Uint8Array } = await t.readSlice(spec, so);
    const sf: { shape: number[]; values: Float32Array } = await t.readSliceFloat32([[null, 4]]);
    // @ts-expect-error a string is no spec entry
    void t.readSlice(['1:3']);
    void [d, shape, begin, end, bytes, view, f, r, g, into, sl, sf, t.byteOffset, t.byteLength, t.elementCount, t.name];
  }
  const count: ParameterCount = h.parameterCount();
  const bf: number | undefined = count.byDtype.BF16;
  const all: Tensor[] = a.tensors();
  const sizes: number[] = [a.headerSize, a.dataOffset, a.fileSize, a.bytesRead, a.length];
  const model: ShardedModel = await openSharded(file, [file, url], { signal: undefined });
  void (await options(buf, file, url));
  const m2: ShardedModel = await openSharded({ weight_map: {} });
  const mm: Record<string, unknown> | null = model.metadata();
  const shardFile: SafeTensors = model.shards[0].file;
  const headers: ShardHeader[] = model.shards.map(({ name, file }) => ({
    name,
    names: file.names(),
    dataBytes: file.fileSize - file.dataOffset,
  }));
  const findings: ShardFinding[] = checkShards(model.index, headers, { fileKey: (n) => n.toLowerCase() });
  const worded: string[] = findings.map((f) =>
    shardFindingMessage(
      f,
      headers.map((h) => h.name),
    ),
  );
  void worded;
  for (const f of checkShards(null, [{ name: 'a', names: null }])) {
    if (f.kind === 'misplaced') void [f.tensor, f.file, f.shard, f.at];
    else if (f.kind === 'totalSize') void [f.stated, f.actual];
  }
  const out: Float32Array = decodeFloat32('F8_E4M3', new Uint8Array(4), new Float32Array(4));
  const saved: Uint8Array = await serialize(
    { w: { dtype: 'BF16', shape: [2], data: new Uint16Array(2) } },
    { format: 'pt' },
  );
  const saved2: Uint8Array = await serialize(
    new Map([['w', { dtype: 'U8' as const, shape: [1], data: new Uint8Array(1) }]]),
  );
  const dt: readonly Dtype[] = DTYPES;
  const info: DtypeInfo = DTYPE_INFO[dt[0]];
  const kind: DtypeKind = info.kind;
  const sizes2: number[] = [info.index, info.bits, info.align];
  const viewName: string = info.view;
  // @ts-expect-error: the facts are read-only
  DTYPE_INFO.F32.bits = 8;
  try {
    SafeTensors.fromBytes(saved);
  } catch (e) {
    if (e instanceof SafeTensorsError) {
      const k: ErrorKind = e.kind;
      const o: number | null = e.offset;
      const n: string | null = e.tensor;
      void [k, o, n];
    }
  }
  // @ts-expect-error: not a dtype name
  const bad: Dtype = 'F33';
  // @ts-expect-error: not a dtype name
  decodeFloat32('F8', new Uint8Array(1));
  // @ts-expect-error: the constructor is not public
  new SafeTensors();
  const fd: FloatDtype = 'BF16';
  void [
    meta,
    bf,
    all,
    sizes,
    m2,
    mm,
    shardFile,
    findings,
    kind,
    sizes2,
    viewName,
    out,
    saved2,
    dt,
    bad,
    fd,
    model.names(),
    model.tensor('x'),
    model.bytesRead,
  ];
  return wasmMemoryBytes();
}

// Every option of every opener, by name and through the option types.
export async function options(buf: ArrayBuffer, file: File, url: string): Promise<SafeTensors[]> {
  const controller = new AbortController();
  const open: OpenOptions = { headerLimit: 1 << 20 };
  const blob: BlobOptions = { signal: controller.signal, headerLimit: 4096 };
  const http: UrlOptions = {
    headers: new Headers({ Authorization: 'Bearer x' }),
    signal: controller.signal,
    prefetch: 1 << 16,
    headerLimit: 25_000_000,
    fetch: (input, init) => fetch(input, init),
  };
  const sharded: ShardedOptions = { ...http, concurrency: 4 };
  const read: ReadOptions = { signal: controller.signal };
  const shared = new SharedArrayBuffer(16);
  const files: SafeTensors[] = [
    SafeTensors.fromBytes(buf, open),
    SafeTensors.fromBytes(new Uint8Array(buf), { headerLimit: 100 }),
    SafeTensors.fromBytes(shared),
    SafeTensors.fromBytes(new DataView(buf)),
    SafeTensors.fromHeader(buf, 16, open),
    SafeTensors.fromHeader(new Uint8Array(shared), 16n, { headerLimit: 8 }),
    await SafeTensors.fromBlob(file, blob),
    await SafeTensors.fromBlob(new Blob([buf]), { headerLimit: 0 }),
    await SafeTensors.fromUrl(url, http),
    await SafeTensors.fromUrl(new URL(url), { headers: [['Range', 'x']], prefetch: 8, headerLimit: 1024, fetch }),
  ];
  const models: ShardedModel[] = [
    await openSharded(url, [], sharded),
    await openSharded(JSON.stringify({ weight_map: {} }), [file, new URL(url)], {
      concurrency: Infinity,
      prefetch: 8,
      headerLimit: 1,
      headers: {},
      signal: AbortSignal.abort(),
      fetch,
    }),
    await openSharded({ weight_map: {} }, [file, url] as const),
    await openHub('org/name'),
    await openHub('org/name', {
      revision: 'refs/pr/1',
      file: 'unet/diffusion_pytorch_model.safetensors',
      endpoint: new URL(url),
      token: 'hf_x',
      concurrency: 4,
      timeout: 1000,
    } satisfies HubOptions),
  ];
  // @ts-expect-error: the token is a string
  await openHub('org/name', { token: 1 });
  const t: Tensor | undefined = files[0].tensor('x');
  const bytes: Uint8Array | undefined = await t?.read(read);
  const input: TensorInput = { dtype: 'F32', shape: [1] as const, data: new SharedArrayBuffer(4) };
  const written: Uint8Array = await serialize({ x: input });
  // @ts-expect-error: headerLimit is a number of bytes
  SafeTensors.fromBytes(buf, { headerLimit: '100' });
  // @ts-expect-error: not an option of fromBlob
  await SafeTensors.fromBlob(file, { prefetch: 8 });
  // @ts-expect-error: concurrency is openSharded's alone
  await SafeTensors.fromUrl(url, { concurrency: 2 });
  void [models, bytes, written];
  return files;
}

// The README's JavaScript quick start (README.md, "In JavaScript"), as it reads there.
export async function quickStart(file: File): Promise<void> {
  const st = await SafeTensors.fromBlob(file); // reads 8 bytes, then the header
  for (const t of st.tensors()) console.log(t.name, t.dtype, t.shape);
  const values = await st.tensor('lm_head.weight')?.readFloat32();
  void values;
}

// view() is a Float16Array for F16 where the lib declares one (types/float16.ts checks it under esnext).
export function f16View(t: Tensor): number {
  const v: TypedArray | null = t.view();
  return v === null ? 0 : v.length;
}

// The wasm-free entry: the same facts, the same check.
import {
  DTYPES as FACT_DTYPES,
  DTYPE_INFO as FACT_INFO,
  checkShards as factCheck,
  type DtypeInfo as FactInfo,
} from 'safetensors-nano/facts';
export function facts(): number {
  const info: FactInfo = FACT_INFO[FACT_DTYPES[0]];
  return info.bits + factCheck(null, []).length;
}

// init: the reader's .wasm from a URL, bytes or a compiled module; or both modules at once.
import { init, type WasmInput } from 'safetensors-nano';
export async function load(url: URL, bytes: ArrayBuffer, module: WebAssembly.Module): Promise<void> {
  await init();
  await init(url);
  await init(bytes);
  await init(module);
  await init(fetch(url));
  const reader: WasmInput = url.href;
  await init({ reader, writer: bytes });
}
