// The worker that opens files for the page (opener.js): it reads a file's 8-byte length and header
// only, parses it with the package and sends it back as plain columns, so that a large header
// never blocks the page. It imports nothing but the package, so that the package and its wasm
// load at once when the page starts it (worker.js, for the statistics, has more to load first).
//
// Messages in:  {type: 'open', id, src: {kind: 'blob', blob} | {kind: 'url', url, prefetch}},
//               {type: 'hub', id, repo, revision, file, endpoint, token} (the token kept nowhere)
// Messages out: {type: 'result', id, result}, {type: 'error', id, error: {name, message, kind, offset, tensor}}

// (Imported dynamically: the package initialises its wasm with a top-level await, and a static
// import would delay the assignment of onmessage below, so that early messages were dropped.)
const pkg = import('./vendor/safetensors-nano.js');
pkg.then(() => performance.mark('worker:ready')); // (for tests/viewer/bench-viewer.mjs)

/** A file's header as columns: one string of all names, typed arrays for the numbers. */
async function open({ src }) {
  const { SafeTensors } = await pkg;
  const st =
    src.kind === 'blob'
      ? await SafeTensors.fromBlob(src.blob)
      : await SafeTensors.fromUrl(src.url, { prefetch: src.prefetch, fetch: (input, init) => fetch(input, init) });
  return columns(st);
}

/** A Hub model (the package's openHub): its index, and each shard's pinned URL and header. */
async function openFromHub({ repo, revision, file, endpoint, token }) {
  const { openHub } = await pkg;
  const model = await openHub(repo, { revision, file, endpoint, token, fetch: (input, init) => fetch(input, init) });
  const shards = model.shards.map(({ name, url, file: st }) => ({ name, url, ...columns(st) }));
  return {
    header: {
      file: model.file,
      index: model.index,
      shards: shards.map(({ name, url, header }) => ({ name, url, header })),
    },
    transfer: shards.flatMap((s) => s.transfer),
  };
}

function columns(st) {
  const tensors = st.tensors();
  const n = tensors.length;
  const nameLengths = new Uint32Array(n);
  const dtypes = new Array(n);
  const ranks = new Uint8Array(n);
  const begins = new Float64Array(n);
  const ends = new Float64Array(n);
  let dimCount = 0;
  for (const t of tensors) dimCount += t.shape.length;
  const dims = new Float64Array(dimCount);
  let d = 0;
  for (let i = 0; i < n; i++) {
    const t = tensors[i];
    nameLengths[i] = t.name.length;
    dtypes[i] = t.dtype;
    ranks[i] = t.shape.length;
    for (const x of t.shape) dims[d++] = x;
    [begins[i], ends[i]] = t.dataOffsets;
  }
  // One string of all names (plus their lengths) crosses to the page far faster than 100,000.
  const names = tensors.map((t) => t.name).join('');
  const header = {
    headerSize: st.headerSize,
    dataOffset: st.dataOffset,
    fileSize: st.fileSize,
    bytesRead: st.bytesRead,
    metadata: st.metadata(),
    names,
    nameLengths,
    dtypes,
    ranks,
    dims,
    begins,
    ends,
  };
  return { header, transfer: [nameLengths.buffer, ranks.buffer, begins.buffer, ends.buffer, dims.buffer] };
}

self.onmessage = async (e) => {
  const m = e.data;
  if (m.type !== 'open' && m.type !== 'hub') return;
  try {
    const { header, transfer } = await (m.type === 'hub' ? openFromHub(m) : open(m));
    postMessage({ type: 'result', id: m.id, result: header }, transfer);
  } catch (err) {
    postMessage({
      type: 'error',
      id: m.id,
      error: {
        name: err?.name ?? 'Error',
        message: String(err?.message ?? err),
        kind: err?.kind ?? null,
        offset: err?.offset ?? null,
        tensor: err?.tensor ?? null,
      },
    });
  }
};

postMessage({ type: 'ready' });
