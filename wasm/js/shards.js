// Sharded models: model.safetensors.index.json and the shards it names,
// opened as one namespace once the index and the shard headers agree.

import { KIND, SafeTensorsError, fail } from './errors.js';
import { SafeTensors, addCount, emptyCount } from './file.js';
import { httpError } from './sources.js';

async function readIndex(index, signal, fetchFn, headers) {
  if (typeof Blob !== 'undefined' && index instanceof Blob) {
    return { json: parseIndexText(await index.text()), base: null };
  }
  if (typeof index === 'string' || index instanceof URL) {
    const s = String(index);
    if (s.trimStart().startsWith('{')) return { json: parseIndexText(s), base: null };
    const res = await fetchFn(s, { headers, signal });
    if (!res.ok) throw httpError(res, s);
    return { json: parseIndexText(await res.text()), base: s };
  }
  if (index !== null && typeof index === 'object') return { json: index, base: null };
  throw new TypeError('index: expected a Blob, a URL, JSON text or an object');
}

function parseIndexText(text) {
  try {
    return JSON.parse(text);
  } catch (e) {
    return fail(KIND.IndexInvalid, `index is not JSON: ${e.message}`, { cause: e });
  }
}

function baseName(s) {
  const path = s.split(/[?#]/)[0];
  return decodeURIComponent(path.slice(path.lastIndexOf('/') + 1));
}

/** A model split into shards, one namespace over all (see index.d.ts). */
export class ShardedModel {
  #where;
  constructor(index, shards, where) {
    this.index = index;
    this.shards = shards;
    this.#where = where;
  }

  names() {
    return [...this.#where.keys()];
  }

  tensor(name) {
    const file = this.#where.get(name);
    return file === undefined ? undefined : file.tensor(name);
  }

  tensors() {
    return this.shards.flatMap((s) => s.file.tensors());
  }

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

/**
 * Opens a sharded model: `index` is model.safetensors.index.json (a Blob, a
 * URL, its text or the parsed object); `shards` are the shard files (Files,
 * Blobs or URLs), matched to the index by name. With a URL index and no
 * shards, the shards are fetched from beside it. The index must agree with
 * the shard headers exactly.
 */
export async function openSharded(index, shards = [], { headers, signal, fetch: fetchFn = globalThis.fetch } = {}) {
  const { json, base } = await readIndex(index, signal, fetchFn, headers);
  const map = json?.weight_map;
  if (map === null || typeof map !== 'object' || Array.isArray(map)) {
    fail(KIND.IndexInvalid, 'index has no "weight_map" object');
  }
  const wanted = new Map(); // shard file name → tensor names the index puts there
  for (const [name, file] of Object.entries(map)) {
    if (typeof file !== 'string') fail(KIND.IndexInvalid, 'weight_map value is not a string', { tensor: name });
    if (!wanted.has(file)) wanted.set(file, []);
    wanted.get(file).push(name);
  }
  const given = new Map();
  for (const s of shards) {
    const name = typeof s === 'string' || s instanceof URL ? baseName(String(s)) : s.name;
    if (typeof name !== 'string' || name === '') {
      fail(KIND.IndexInvalid, 'a shard given as a Blob needs a name (use a File)');
    }
    if (given.has(name)) fail(KIND.IndexMismatch, `shard ${name} is given twice`);
    given.set(name, s);
  }
  const files = [...wanted.keys()].sort();
  for (const f of files) {
    if (given.has(f)) continue;
    if (base !== null) given.set(f, new URL(f, base).href);
    else fail(KIND.ShardMissing, `shard ${f} named by the index was not given`);
  }
  for (const name of given.keys()) {
    if (!wanted.has(name)) fail(KIND.IndexMismatch, `shard ${name} is not named by the index`);
  }
  const opened = await Promise.all(
    files.map(async (f) => {
      const s = given.get(f);
      try {
        const file =
          typeof s === 'string' || s instanceof URL
            ? await SafeTensors.fromUrl(s, { headers, signal, fetch: fetchFn })
            : await SafeTensors.fromBlob(s, { signal });
        return { name: f, file };
      } catch (e) {
        if (e instanceof SafeTensorsError) e.message = `${f}: ${e.message}`;
        throw e;
      }
    }),
  );
  const where = new Map();
  let total = 0;
  for (const { name: f, file } of opened) {
    for (const t of file.tensors()) {
      if (where.has(t.name)) fail(KIND.DuplicateTensorName, `tensor in two shards`, { tensor: t.name });
      if (map[t.name] !== f) {
        fail(
          KIND.IndexMismatch,
          Object.hasOwn(map, t.name) ? `the index puts it in ${map[t.name]}, it is in ${f}` : `in ${f} but not in the index`,
          { tensor: t.name },
        );
      }
      where.set(t.name, file);
      total += t.byteLength;
    }
  }
  for (const name of Object.keys(map)) {
    if (!where.has(name)) fail(KIND.IndexMismatch, `the index puts it in ${map[name]}, which has no such tensor`, { tensor: name });
  }
  const declared = json.metadata?.total_size;
  if (declared !== undefined && declared !== null && Number(declared) !== total) {
    fail(KIND.IndexMismatch, `index metadata total_size is ${declared}, the shards hold ${total} bytes of tensors`);
  }
  return new ShardedModel(json, opened, where);
}
