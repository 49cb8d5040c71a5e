// Type-checked (tsc --strict) against the installed package's index.d.ts:
// every export is used with its declared types; misuse must not compile.
import {
  SafeTensors, SafeTensorsError, ShardedModel, openSharded, checkShards, decodeFloat32, serialize, wasmMemoryBytes, DTYPES, DTYPE_INFO,
  type Dtype, type DtypeInfo, type DtypeKind, type ShardFinding, type ShardHeader, type FloatDtype, type Tensor, type TypedArray, type ParameterCount, type ErrorKind,
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
    const g: Float32Array = await t.readFloat32({ chunkBytes: 1 << 20, onProgress: (done: number, total: number) => void [done, total] });
    void [d, shape, begin, end, bytes, view, f, r, g, t.byteOffset, t.byteLength, t.elementCount, t.name];
  }
  const count: ParameterCount = h.parameterCount();
  const bf: number | undefined = count.byDtype.BF16;
  const all: Tensor[] = a.tensors();
  const sizes: number[] = [a.headerSize, a.dataOffset, a.fileSize, a.bytesRead, a.length];
  const model: ShardedModel = await openSharded(file, [file, url], { signal: undefined });
  const m2: ShardedModel = await openSharded({ weight_map: {} });
  const mm: Record<string, unknown> | null = model.metadata();
  const shardFile: SafeTensors = model.shards[0].file;
  const headers: ShardHeader[] = model.shards.map(({ name, file }) => ({ name, names: file.names(), dataBytes: file.fileSize - file.dataOffset }));
  const findings: ShardFinding[] = checkShards(model.index, headers, { fileKey: (n) => n.toLowerCase() });
  for (const f of checkShards(null, [{ name: 'a', names: null }])) {
    if (f.kind === 'misplaced') void [f.tensor, f.file, f.shard, f.at];
    else if (f.kind === 'totalSize') void [f.declared, f.bytes];
  }
  const out: Float32Array = decodeFloat32('F8_E4M3', new Uint8Array(4), new Float32Array(4));
  const saved: Uint8Array = await serialize({ w: { dtype: 'BF16', shape: [2], data: new Uint16Array(2) } }, { format: 'pt' });
  const saved2: Uint8Array = await serialize(new Map([['w', { dtype: 'U8' as const, shape: [1], data: new Uint8Array(1) }]]));
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
  void [meta, bf, all, sizes, m2, mm, shardFile, findings, kind, sizes2, viewName, out, saved2, dt, bad, fd, model.names(), model.tensor('x'), model.bytesRead];
  return wasmMemoryBytes();
}
