// Type-checked (tsc --strict, stream.test.js) against the installed
// package's index.d.ts: the streaming writer, the edits, the shards, Node's
// writeFile; misuse must not compile.
import {
  SafeTensors,
  editMetadata,
  editTensors,
  openSharded,
  serializeStream,
  serializedSize,
  shardTensors,
  writeFile,
  writeShards,
  type ConvertTarget,
  type EditOptions,
  type EditedTensors,
  type MetadataEdits,
  type ShardPlan,
  type StreamOptions,
  type StreamTensorInput,
  type StreamTensors,
} from 'safetensors-nano';

export async function useStreams(file: File, sink: WritableStream<Uint8Array>): Promise<number> {
  const opened: SafeTensors = await SafeTensors.fromBlob(file);
  const edits: EditOptions = {
    keep: ['*.weight', /bias$/, (n: string) => n.length > 2],
    drop: 'optimizer.*',
    rename: ['model.', ''],
    convert: 'BF16',
  };
  const map: Map<string, StreamTensorInput> = editTensors(opened, edits);
  const merged = editTensors(await openSharded(file, [file]), {
    rename: [/^h\.(\d+)/, 'layers.$1'],
    convert: { F32: 'F16', F64: 'F32' },
  });
  const fromList = editTensors(opened.tensors(), { rename: (n: string) => n.toUpperCase() });
  const opts: StreamOptions = {
    signal: AbortSignal.timeout(1000),
    chunkBytes: 1 << 20,
    onProgress: (done: number, total: number) => void [done, total],
  };
  const tensors: StreamTensors = {
    a: { dtype: 'BF16', shape: [2], data: new Float32Array(2) },
    b: { dtype: 'U8', shape: [3], data: new Blob([new Uint8Array(3)]) },
    c: { data: opened.tensors()[0] },
  };
  await serializeStream(tensors, { format: 'pt' }, opts).pipeTo(sink);
  const stream: ReadableStream<Uint8Array> = serializeStream(map);
  const size: number = await serializedSize(map, { format: 'pt' });
  void size;
  void [merged, fromList, stream];
  const target: ConvertTarget = 'F16';
  const split = shardTensors(map, { maxShardSize: '5GB', prefix: 'model' });
  const first: ShardPlan = split.shards[0];
  const names: string[] = split.shards.map((s) => s.name);
  const index: string | null = split.index;
  void [target, first.tensors, first.dataBytes, names, index, split.totalSize, split.indexName];
  const written: { shards: string[]; index: string | null } = await writeShards('out', map, null, {
    maxShardSize: 1e9,
    onProgress: (d, t, shard: string) => void [d, t, shard],
  });
  void written;
  const metaEdits: MetadataEdits = { set: new Map([['format', 'pt']]), drop: ['license'], clear: false };
  const relabelled: EditedTensors = editTensors(opened, { metadata: { set: { format: 'np' }, drop: 'license' } });
  const meta: Record<string, string> | null = editMetadata(relabelled.metadata, metaEdits);
  await serializeStream(relabelled, meta).pipeTo(sink);
  // @ts-expect-error: metadata values are strings
  editMetadata(null, { set: { step: 3 } });
  // @ts-expect-error: the result's metadata is read-only
  relabelled.metadata = null;
  // @ts-expect-error: F8_E4M3 is not a conversion target
  editTensors(opened, { convert: 'F8_E4M3' });
  // @ts-expect-error: rename takes a pair, not a single string
  editTensors(opened, { rename: 'model.' });
  // @ts-expect-error: shardTensors needs a size
  shardTensors(map, {});
  // @ts-expect-error: data must be bytes, a Blob or a Tensor
  serializeStream({ a: { dtype: 'U8', shape: [1], data: [1] } });
  return writeFile('out.safetensors', map, { format: 'pt' }, { signal: undefined });
}
