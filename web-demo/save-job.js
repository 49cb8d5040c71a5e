// The worker's side of "Save as…": the open model's files opened with the package, the chosen
// tensors renamed and converted (editTensors), the first file's metadata edited (editMetadata),
// split into shards when asked (shardTensors), and
// each output file streamed (serializeStream) into a File System Access writable, or gathered
// into a Blob for a download. Only a few chunks are in memory at a time on the first path.
//
// Messages: {type: 'savePlan', id, request} → {files: [{name, size}], tensors, total};
//           {type: 'save', id, request, target} → {files: [{name, size, blob?}]}.
// request: {sources: [{kind, blob | url}], names, rename: [from, to] | null,
//           convert: 'keep' | 'BF16' | 'F16' | 'F32', metadata: {set: [[key, value]], drop: [key]},
//           maxShardSize: null | number | string, name}
// target:  {kind: 'file', handle} | {kind: 'directory', handle} | {kind: 'blob'}

const pkg = import('./vendor/safetensors-nano.js');

/**
 * The first file's metadata with the request's keys dropped and set. A key in two "set" rows is
 * refused here (a map would keep the last silently); the package refuses a key both set and
 * dropped, and `__metadata__`.
 */
function editedMetadata(editMetadata, metadata, { set = [], drop = [] } = {}) {
  const keys = new Set();
  for (const [key] of set) {
    if (keys.has(key)) throw new Error(`Metadata key ${JSON.stringify(key)} is set twice: keep one row for it.`);
    keys.add(key);
  }
  return editMetadata(metadata, { set: new Map(set), drop });
}

/** The edited tensors and metadata of a request, and the output files' [name, tensors]. */
async function outputs(request) {
  const { SafeTensors, editMetadata, editTensors, shardTensors } = await pkg;
  const files = await Promise.all(
    request.sources.map((s) => (s.kind === 'blob' ? SafeTensors.fromBlob(s.blob) : SafeTensors.fromUrl(s.url))),
  );
  const wanted = new Set(request.names);
  const tensors = editTensors(
    files.flatMap((f) => f.tensors()),
    {
      keep: (n) => wanted.has(n),
      rename: request.rename && request.rename[0] !== '' ? request.rename : undefined,
      convert: request.convert === 'keep' ? undefined : request.convert,
    },
  );
  const metadata = editedMetadata(editMetadata, files[0]?.metadata() ?? null, request.metadata);
  if (request.maxShardSize === null) return { metadata, tensors, list: [{ name: request.name, tensors }], index: null };
  const split = shardTensors(tensors, { maxShardSize: request.maxShardSize });
  return {
    metadata,
    tensors,
    list: split.shards.map((s) => ({ name: s.name, tensors: s.tensors })),
    index: split.index && { name: split.indexName, text: split.index },
  };
}

/** Sizes before writing: each output file's, the tensor count and the total. */
export async function savePlan(m) {
  const { serializedSize } = await pkg;
  const { metadata, tensors, list, index } = await outputs(m.request);
  const files = [];
  for (const o of list) files.push({ name: o.name, size: await serializedSize(o.tensors, metadata) });
  if (index) files.push({ name: index.name, size: new TextEncoder().encode(index.text).length });
  return { files, tensors: tensors.size, total: files.reduce((n, f) => n + f.size, 0) };
}

// Where one output file goes: a writable stream, and what the result keeps of it.
async function sinkFor(target, name) {
  if (target.kind === 'file') return { writable: await target.handle.createWritable(), done: () => ({ name }) };
  if (target.kind === 'directory') {
    const handle = await target.handle.getFileHandle(name, { create: true });
    return { writable: await handle.createWritable(), done: () => ({ name }) };
  }
  const parts = [];
  const writable = new WritableStream({ write: (chunk) => void parts.push(chunk) });
  return { writable, done: () => ({ name, blob: new Blob(parts, { type: 'application/octet-stream' }) }) };
}

/**
 * Writes every output file. Progress is reported in bytes written over all files; `ctx.check()`
 * (a Cancel) stops the stream between chunks, which aborts the writable (the File System Access
 * API then keeps nothing of it).
 */
export async function save(m, ctx) {
  const { serializeStream, serializedSize } = await pkg;
  const { metadata, list, index } = await outputs(m.request);
  const sizes = [];
  for (const o of list) sizes.push(await serializedSize(o.tensors, metadata));
  const total = sizes.reduce((a, b) => a + b, 0);
  let before = 0;
  const results = [];
  try {
    return await writeAll();
  } catch (e) {
    // Shards written before a failure or a Cancel are removed: a folder holds all or nothing.
    if (m.target.kind === 'directory')
      for (const r of results) await m.target.handle.removeEntry(r.name).catch(() => {});
    throw e;
  }

  async function writeAll() {
    for (const [i, o] of list.entries()) {
      const sink = await sinkFor(m.target, o.name);
      let last = 0;
      const onProgress = (done) => {
        ctx.check();
        ctx.progress(done - last, 'writing', total);
        last = done;
      };
      await serializeStream(o.tensors, metadata, { onProgress }).pipeTo(sink.writable);
      before += sizes[i];
      results.push({ ...sink.done(), size: sizes[i] });
    }
    if (index) {
      const sink = await sinkFor(m.target, index.name);
      const writer = sink.writable.getWriter();
      await writer.write(new TextEncoder().encode(index.text));
      await writer.close();
      results.push({ ...sink.done(), size: index.text.length });
    }
    return { files: results, total: before };
  }
}
