// Sharded models: model.safetensors.index.json and the shards it names,
// opened as one namespace once the index and the shard headers agree.

import { KIND, SafeTensorsError, fail } from '../errors/safetensors-error.js';
import { SafeTensors, addCount, emptyCount } from '../read/safetensors-file.js';
import { checkShards, sameList, shardAgrees, totalSizeFinding } from './check-index.js';
import { headerLimitOption } from '../read/description.js';
import { indexLimits, readIndex } from './index-read.js';

function baseName(s) {
  const path = s.split(/[?#]/)[0];
  return decodeURIComponent(path.slice(path.lastIndexOf('/') + 1));
}

/** A model split into shards, one namespace over all (see index.d.ts). */
export class ShardedModel {
  // Name → the shard files the index may put it in: a hint, which
  // #tensorIn checks against the shards' headers. From the caller's
  // weight_map (a live object, which may change after the open) when the
  // index was given parsed, else from the index's names by hash (the
  // parser's NameTable: its weight_map object, of every name, is made only
  // if read).
  #listed;
  #files;
  // Name → shard file for the names no hint leads to (the caller's
  // weight_map may have been changed since), made on the first one.
  #where = null;
  // The files whose Tensor objects are made (file.tensors() keeps them):
  // model.tensor(name) gives the same object every time, and a shard's
  // objects are made when one of its tensors is first asked for.
  #made = new Set();
  constructor(index, shards, filesOf = filesIn(index.weight_map)) {
    this.index = index;
    this.shards = shards;
    this.#listed = filesOf;
    this.#files = new Map(shards.map(({ name, file }) => [name, file]));
  }

  /** @returns {string[]} */
  names() {
    return this.shards.flatMap((s) => s.file.names());
  }

  tensor(name) {
    for (const file of this.#listed(name)) {
      const t = this.#tensorIn(this.#files.get(file), name);
      if (t !== undefined) return t;
    }
    if (this.#where === null) {
      this.#where = new Map();
      for (const { file } of this.shards) for (const n of file.names()) this.#where.set(n, file);
    }
    return this.#tensorIn(this.#where.get(name), name);
  }

  #tensorIn(file, name) {
    if (file === undefined) return undefined;
    if (!this.#made.has(file)) {
      file.tensors();
      this.#made.add(file);
    }
    return file.tensor(name);
  }

  tensors() {
    return this.shards.flatMap((s) => s.file.tensors());
  }

  /** @returns {Record<string, unknown> | null} */
  metadata() {
    const m = this.index.metadata;
    return m === undefined || m === null ? null : { ...m };
  }

  parameterCount() {
    const count = emptyCount();
    for (const s of this.shards) {
      const c = s.file.parameterCount();
      for (const [d, n] of Object.entries(c.byDtype)) addCount(count, d, n);
    }
    return count;
  }

  get bytesRead() {
    return this.shards.reduce((n, s) => n + s.file.bytesRead, 0);
  }
}

// The shard files a weight_map object puts a name in (one, or none).
function filesIn(map) {
  return (name) => (Object.hasOwn(map, name) ? [map[name]] : []);
}

// How many shards openSharded opens at once by default: a few requests in
// flight hide the latency of each, without a model of hundreds of shards
// opening hundreds of connections (browsers queue beyond 6 a host anyway).
const CONCURRENCY = 8;

/**
 * Calls `open` on each item, at most `limit` at a time; resolves to the
 * results in order. After a failure no more are started, and the first
 * failure rejects.
 */
async function mapLimited(items, limit, open) {
  const out = new Array(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        out[i] = await open(items[i]);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * Opens a sharded model: `index` is model.safetensors.index.json (a Blob, a
 * URL, its text or the parsed object); `shards` are the shard files (Files,
 * Blobs or URLs), matched to the index by name. With a URL index and no
 * shards, the shards are fetched from beside it. The index must agree with
 * the shard headers exactly. At most `concurrency` shards are opened at
 * once; `headerLimit` is passed to each shard's opener (fromUrl or
 * fromBlob, with their defaults), and `prefetch` to fromUrl (by default
 * each shard's first request is sized from the index, see shardHeaderBytes).
 * The index is parsed as it arrives, within `indexLimit` bytes and
 * `indexEntryLimit` weight_map entries (IndexTooLarge past either).
 */
export async function openSharded(
  index,
  shards = [],
  {
    headers,
    signal,
    prefetch,
    headerLimit,
    concurrency = CONCURRENCY,
    fetch: fetchFn = globalThis.fetch,
    timeout,
    retries,
    ifRange,
    noRange,
    indexLimit,
    indexEntryLimit,
  } = {},
) {
  if (!(Number.isInteger(concurrency) && concurrency >= 1) && concurrency !== Infinity) {
    throw new TypeError('concurrency: expected a positive integer');
  }
  // (Checked here too: a bad value fails before anything is fetched.)
  if (headerLimit !== undefined) headerLimitOption(headerLimit);
  const limits = indexLimits({ indexLimit, indexEntryLimit });
  // `wanted`: the shard file names the index uses → first ranges and
  // tensor names (IndexInvalid without a weight_map).
  const {
    json,
    base,
    shards: wanted,
    filesOf,
  } = await readIndex(index, limits, { signal, headers, fetch: fetchFn, timeout, retries });
  const given = shardSources(shards, wanted, base);
  const files = [...wanted.keys()].sort();
  // Each shard is compared with the index as it arrives, while the others
  // are still on their way. Only when one disagrees are all compared
  // together (checkShards), for the error that names the first problem.
  let agree = true;
  const opened = await mapLimited(files, concurrency, async (f) => {
    const first = prefetch ?? wanted.get(f).bytes;
    const file = await openShard(f, given.get(f), {
      headers,
      signal,
      prefetch: first,
      headerLimit,
      fetch: fetchFn,
      timeout,
      retries,
      ifRange,
      noRange,
    });
    const listed = wanted.get(f);
    const names = file.names();
    // When the header lists the index's names in its order (the usual
    // case), its strings take the place of the index's: the index's text,
    // which its strings are slices of, is not kept beside the headers'.
    if (sameList(listed.names, names)) listed.names = names;
    else agree &&= shardAgrees(listed.names, names);
    return { name: f, file };
  });
  const dataBytes = (file) => file.fileSize - file.dataOffset;
  if (
    !agree ||
    totalSizeFinding(
      json,
      opened.reduce((n, s) => n + dataBytes(s.file), 0),
    ) !== null
  ) {
    const found = checkShards(
      json,
      opened.map(({ name, file }) => ({ name, names: file.names(), dataBytes: dataBytes(file) })),
    );
    failOnFindings(found, opened);
  }
  // (Hints from the caller's own object, or the parser's table of the names
  // by hash: the object parsed here would make its weight_map of every name.)
  return new ShardedModel(json, opened, json === index ? filesIn(json.weight_map) : (filesOf ?? (() => [])));
}

// Where each shard the index names comes from: the given shards (URLs, paths or Files) by
// file name, the others beside the index's URL when it has one. The names agree before any
// shard is opened (no header read yet): a shard given twice, one the index does not name, or
// one it names that is neither given nor beside a URL is an error.
function shardSources(shards, wanted, base) {
  const given = new Map();
  for (const s of shards) {
    const name = typeof s === 'string' || s instanceof URL ? baseName(String(s)) : s.name;
    if (typeof name !== 'string' || name === '') {
      fail(KIND.IndexInvalid, 'a shard given as a Blob needs a name (use a File)');
    }
    if (given.has(name)) fail(KIND.IndexMismatch, `shard ${name} is given twice`);
    given.set(name, s);
  }
  // The file names agree before any shard is opened (no header read yet).
  const givenNames = [...given.keys()];
  for (const f of [...wanted.keys()].filter((f) => !given.has(f)).sort()) {
    if (base !== null) given.set(f, new URL(f, base).href);
    else fail(KIND.ShardMissing, `shard ${f} named by the index was not given`);
  }
  const unnamed = givenNames.find((name) => !wanted.has(name));
  if (unnamed !== undefined) fail(KIND.IndexMismatch, `shard ${unnamed} is not named by the index`);
  return given;
}

// One shard opened from its URL or Blob; an error names the shard.
async function openShard(name, source, { signal, headerLimit, ...urlOptions }) {
  try {
    return typeof source === 'string' || source instanceof URL
      ? await SafeTensors.fromUrl(source, { signal, headerLimit, ...urlOptions })
      : await SafeTensors.fromBlob(source, { signal, headerLimit });
  } catch (e) {
    if (e instanceof SafeTensorsError) e.message = `${name}: ${e.message}`;
    throw e;
  }
}

// Throws openSharded's error for checkShards' findings over the opened
// shards, if any: the first problem met reading the shards in order, tensor
// by tensor (a repeat before anything else about it); then the index's
// entries in order; then the total size.
function failOnFindings(found, opened) {
  let first;
  for (const x of found) {
    if (x.at === undefined) continue;
    if (
      first === undefined ||
      x.shard < first.shard ||
      (x.shard === first.shard && (x.at < first.at || (x.at === first.at && x.kind === 'duplicate')))
    ) {
      first = x;
    }
  }
  first ??= found.find((x) => x.kind === 'missing') ?? found.find((x) => x.kind === 'totalSize');
  if (first === undefined) return;
  const { tensor = null } = first;
  const shard = opened[first.shard]?.name;
  if (first.kind === 'duplicate') fail(KIND.DuplicateTensorName, `tensor in two shards`, { tensor });
  if (first.kind === 'misplaced')
    fail(KIND.IndexMismatch, `the index puts it in ${first.file}, it is in ${shard}`, { tensor });
  if (first.kind === 'unlisted') fail(KIND.IndexMismatch, `in ${shard} but not in the index`, { tensor });
  if (first.kind === 'missing')
    fail(KIND.IndexMismatch, `the index puts it in ${first.file}, which has no such tensor`, { tensor });
  fail(
    KIND.IndexMismatch,
    `index metadata total_size is ${first.stated}, the shards hold ${first.actual} bytes of tensors`,
  );
}
