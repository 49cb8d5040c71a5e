// The worker that opens files for the page (opener.js): it reads each file's 8-byte length and
// header only, parses them with the package and sends them back as plain columns, so that a large
// header never blocks the page. It imports nothing but the package and the index helpers it
// shares with the page (shard-index.js, no wasm), so that the package and its wasm load at once
// when the page starts it (worker.js, for the statistics, has more to load first).
//
// A sharded model by URL is one job: the worker fetches and parses the index, issues every shard's
// request at once (one task, no round trip to the page per shard: over HTTP/2 they share one
// connection) and sends each header back as soon as it is parsed; the page never holds the parsed
// index. The index's check against the headers runs here afterwards ('check'), while the page
// shows the list.
//
// Messages in:  {type: 'shards', id, sources: [{kind: 'blob', blob} | {kind: 'url', url, prefetch}]},
//               {type: 'index', id, url, label},
//               {type: 'check', id, of, order} (the findings of index job `of`, shards in `order`,
//               and its entry count),
//               {type: 'hub', id, repo, revision, file, endpoint, token} (the token kept nowhere)
// Messages out: {type: 'part', id, part: {files} | {index} | {shard: {i, header} | {i, error}}},
//               {type: 'result', id, result}, {type: 'error', id, error: {name, message, kind, …}}

// (Imported dynamically: the package initialises its wasm with a top-level await, and a static
// import would delay the assignment of onmessage below, so that early messages were dropped. The
// index helpers the page uses too, likewise.)
const pkg = import('./vendor/safetensors-nano.js');
const shardIndex = import('./shard-index.js');
// Each dtype's index in the package's DTYPES: a header's dtypes cross to the page as bytes.
let dtypeIndex = null;
pkg.then(({ DTYPES }) => {
  dtypeIndex = new Map(DTYPES.map((d, i) => [d, i]));
  performance.mark('worker:ready'); // (for tests/viewer/bench-viewer.mjs)
});

/** An error the page shows as an OpenError of `file`. */
function openError(file, message) {
  return Object.assign(new Error(message), { file });
}

/** The plain fields of an error, as the page rebuilds it (jobs.js). */
function errorFields(err) {
  return {
    name: err?.name ?? 'Error',
    message: String(err?.message ?? err),
    kind: err?.kind ?? null,
    offset: err?.offset ?? null,
    tensor: err?.tensor ?? null,
    file: err?.file ?? null,
  };
}

/**
 * Opens every source at once (each open starts before this returns); each header (or error) goes
 * to the page as soon as it is parsed, so that the page builds its rows while the others arrive.
 * Resolves to the opened files (null for a failure), in the order of `sources`.
 */
function openAll(id, sources, SafeTensors) {
  const send = (shard, transfer = []) => postMessage({ type: 'part', id, part: { shard } }, transfer);
  return Promise.all(
    sources.map(async (src, i) => {
      try {
        const st =
          src.kind === 'blob'
            ? await SafeTensors.fromBlob(src.blob)
            : await SafeTensors.fromUrl(src.url, { prefetch: src.prefetch });
        const { header, transfer } = columns(st);
        send({ i, header }, transfer);
        return st;
      } catch (err) {
        send({ i, error: errorFields(err) });
        return null;
      }
    }),
  );
}

// What the last index job left for its check: {id, json, files, opened}.
let lastIndex = null;

/**
 * The text of an answer and its size in bytes, decoded piece by piece as it arrives (only the
 * parse is left once the last byte is in).
 */
async function readText(res) {
  if (!res.body) {
    const bytes = await res.arrayBuffer();
    return { text: new TextDecoder().decode(bytes), size: bytes.byteLength };
  }
  const decoder = new TextDecoder();
  const pieces = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    pieces.push(decoder.decode(value, { stream: true }));
  }
  pieces.push(decoder.decode());
  return { text: pieces.join(''), size };
}

/** A sharded model by the URL of its index: the index, then every shard's header (as parts). */
async function openIndex({ id, url, label }) {
  lastIndex = null;
  for (const m of ['viewer:index-fetched', 'viewer:index-parsed', 'viewer:shards-request']) performance.clearMarks(m);
  const res = await fetch(url);
  if (!res.ok) throw openError(label, `HTTP ${res.status} ${res.statusText}`);
  const { text, size } = await readText(res);
  performance.mark('viewer:index-fetched');
  const { basename, parseIndexText } = await shardIndex;
  const name = basename(new URL(url).pathname);
  let json;
  try {
    json = parseIndexText(text);
  } catch (e) {
    throw openError(name, e.message);
  }
  performance.mark('viewer:index-parsed');
  const { shardHeaderBytes, SafeTensors } = await pkg;
  // Each shard's first request sized from the index (the package's estimate, as openSharded
  // sizes its own), so that a shard of a large model takes one request, not two.
  let firstBytes;
  let files;
  try {
    firstBytes = shardHeaderBytes(json);
    files = [...firstBytes.keys()];
  } catch {
    // A weight_map value that is not a file name: the shards open with the default first range
    // and the integrity report says what is wrong.
    firstBytes = new Map();
    files = [...new Set(Object.values(json.weight_map))];
  }
  const urls = files.map((f) => new URL(f, url).href);
  postMessage({ type: 'part', id, part: { files: files.map((f, i) => ({ name: f, url: urls[i] })) } });
  performance.mark('viewer:shards-request');
  const opening = openAll(
    id,
    urls.map((u, i) => ({ kind: 'url', url: u, prefetch: firstBytes.get(files[i]) })),
    SafeTensors,
  );
  // What the page shows of the index, sent while the shards' first requests are on their way
  // (the text too, for the raw header on demand). Its entry count comes with the check: counting
  // 100,000 keys here would hold up the headers as they arrive.
  const index = { name, size, metadata: json.metadata ?? null, text };
  postMessage({ type: 'part', id, part: { index } });
  const opened = await opening;
  lastIndex = { id, json, files, opened };
  return { header: { shards: opened.length }, transfer: [] };
}

/**
 * The check's findings for the last index job, with the page's order of its shards, and the
 * index's entry count.
 */
async function check({ of, order }) {
  const { checkIndex } = await shardIndex;
  if (lastIndex?.id !== of) throw new Error('the index was replaced by a newer open');
  const { json, files, opened } = lastIndex;
  lastIndex = null; // (the page keeps the findings)
  const at = new Map(files.map((f, i) => [f, opened[i]]));
  const headers = order.map((name) => {
    const st = at.get(name);
    return { name, names: st ? st.names() : null, dataBytes: st ? st.fileSize - st.dataOffset : 0 };
  });
  const findings = checkIndex(json, headers);
  return { header: { findings, entries: Object.keys(json.weight_map).length }, transfer: [] };
}

/** A Hub model (the package's openHub): its index, and each shard's pinned URL and header. */
async function openFromHub({ repo, revision, file, endpoint, token }) {
  const { openHub } = await pkg;
  const model = await openHub(repo, { revision, file, endpoint, token });
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

/**
 * A file's header as columns: one string of all names, typed arrays for the numbers and the
 * dtypes (indexes in DTYPES).
 */
function columns(st) {
  const tensors = st.tensors();
  const n = tensors.length;
  const nameLengths = new Uint32Array(n);
  const dtypes = new Uint8Array(n);
  const ranks = new Uint8Array(n);
  const begins = new Float64Array(n);
  const ends = new Float64Array(n);
  let dimCount = 0;
  for (const t of tensors) dimCount += t.shape.length;
  const dims = new Float64Array(dimCount);
  const names = new Array(n);
  const { dataOffset } = st;
  let d = 0;
  for (let i = 0; i < n; i++) {
    const t = tensors[i];
    names[i] = t.name;
    nameLengths[i] = t.name.length;
    dtypes[i] = dtypeIndex.get(t.dtype);
    ranks[i] = t.shape.length;
    for (const x of t.shape) dims[d++] = x;
    begins[i] = t.byteOffset - dataOffset;
    ends[i] = begins[i] + t.byteLength;
  }
  const header = {
    headerSize: st.headerSize,
    dataOffset,
    fileSize: st.fileSize,
    bytesRead: st.bytesRead,
    metadata: st.metadata(),
    // One string of all names (plus their lengths) crosses to the page far faster than 100,000.
    names: names.join(''),
    nameLengths,
    dtypes,
    ranks,
    dims,
    begins,
    ends,
  };
  return {
    header,
    transfer: [nameLengths.buffer, dtypes.buffer, ranks.buffer, begins.buffer, ends.buffer, dims.buffer],
  };
}

const JOBS = {
  shards: async (m) => {
    const files = await openAll(m.id, m.sources, (await pkg).SafeTensors);
    return { header: { count: files.length }, transfer: [] };
  },
  index: openIndex,
  check,
  hub: openFromHub,
};

self.onmessage = async (e) => {
  const m = e.data;
  if (!Object.hasOwn(JOBS, m.type)) return;
  const job = JOBS[m.type];
  try {
    const { header, transfer } = await job(m);
    postMessage({ type: 'result', id: m.id, result: header }, transfer);
  } catch (err) {
    postMessage({ type: 'error', id: m.id, error: errorFields(err) });
  }
};

postMessage({ type: 'ready' });
