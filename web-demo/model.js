// Opening a model — one file, several files, a sharded model (index + shards, in any order) or a
// URL — reading headers only, and everything the page shows about it that needs no tensor bytes:
// the tensor rows, totals by dtype, the alignment report and the index/shard integrity report.

import { DTYPES, naturalCompare, viewAlignment } from './format.js';
// Headers are parsed by the package in a worker of their own (opener.js, started with the page, so
// its wasm is ready before the first drop): a 100 MB header never freezes the page, and opening
// does not wait behind a statistics job.
import { opener } from './opener.js';
import { basename, checkIndex, parseIndexText } from './shard-index.js';
import { shardFindingMessage } from './vendor/safetensors-nano/facts.js';

/** A failure while opening, with the file it happened in. */
export class OpenError extends Error {
  constructor(file, cause, src = null) {
    super(cause?.message ?? String(cause));
    this.name = 'OpenError';
    this.file = file;
    this.cause = cause;
    this.src = src;
  }
}

const isIndexName = (n) => /\.index\.json$/i.test(n);
const isJsonName = (n) => /\.json$/i.test(n);
const isTensorName = (n) => /\.safetensors$/i.test(n);

/** A place bytes come from: a File/Blob or a URL served with HTTP Range. */
export function blobSource(file, name = file.name, path = name) {
  return { kind: 'blob', blob: file, name, path, size: file.size };
}
export function urlSource(url, name = basename(new URL(url).pathname) || url, prefetch = undefined) {
  return { kind: 'url', url, name, path: url, size: null, prefetch };
}

/** A parsed header as the worker sends it (columns), with the accessors the model uses. */
export class Header {
  constructor(h) {
    Object.assign(this, h);
  }
  metadata() {
    return this.meta;
  }
}

/** What the worker needs of a source to open it. */
const wireSource = ({ kind, blob, url, prefetch }) => (kind === 'blob' ? { kind, blob } : { kind, url, prefetch });

/** Takes a header (or error) the open worker sends as soon as it has it into `shards`. */
function takeHeader(shards, { shard: p }) {
  if (!p) return;
  const shard = shards[p.i];
  if (p.error) shard.error = Object.assign(new Error(p.error.message), p.error);
  else shard.header = toHeader(p.header);
}

/** A header from the columns the open worker sends. */
function toHeader(h) {
  const { metadata, names: joined, nameLengths, ...rest } = h;
  const names = new Array(nameLengths.length);
  let at = 0;
  for (let i = 0; i < names.length; i++) names[i] = joined.slice(at, (at += nameLengths[i]));
  const header = new Header({ ...rest, names, meta: metadata });
  // The shard's rows are built now, while the page waits for the other shards.
  header.rows = headerRows(header);
  return header;
}

const ALIGN_OF = new Map(DTYPES.map((d) => [d, viewAlignment(d)]));

/** One row per tensor of a header, straight from its columns (`i` and `shard` set by Model). */
function headerRows({ names, dtypes, ranks, dims, begins, ends, dataOffset }) {
  const rows = new Array(names.length);
  let d = 0;
  for (let k = 0; k < names.length; k++) {
    const rank = ranks[k];
    const shape = new Array(rank);
    let params = 1;
    for (let j = 0; j < rank; j++) params *= shape[j] = dims[d++];
    const dtype = DTYPES[dtypes[k]];
    const align = ALIGN_OF.get(dtype);
    const offset = dataOffset + begins[k];
    rows[k] = {
      i: 0,
      name: names[k],
      dtype,
      shape,
      rank,
      params,
      bytes: ends[k] - begins[k],
      begin: begins[k],
      end: ends[k],
      offset,
      shard: 0,
      aligned: align > 0 && offset % align === 0,
      subByte: align === 0,
    };
  }
  return rows;
}

/** Lets the page paint before the next piece of work. */
const yieldToPage = () => new Promise((resolve) => setTimeout(resolve, 0));

/** Bytes [start, end) of a source (used for the raw header and error context). */
export async function readSourceRange(src, start, end) {
  if (src.kind === 'blob') return new Uint8Array(await src.blob.slice(start, end).arrayBuffer());
  const res = await fetch(src.url, { headers: { Range: `bytes=${start}-${end - 1}` } });
  if (res.status !== 206) throw new Error(`${src.url}: HTTP ${res.status} to a Range request`);
  return new Uint8Array(await res.arrayBuffer());
}

/** One opened safetensors file (a shard of the model, or the only file). */
class Shard {
  constructor(src) {
    this.src = src;
    this.name = src.name;
    this.header = null;
    this.error = null;
  }
  get size() {
    return this.header ? this.header.fileSize : this.src.size;
  }
  get bytesRead() {
    return this.header ? this.header.bytesRead : 0;
  }
}

/**
 * Everything known about a model after reading its headers. `rows` are plain objects (cheap to
 * sort and filter); `byName` finds a row by tensor name (built on first use).
 */
export class Model {
  #byName = null;
  #summary = null;
  #integrity = null;

  constructor({ name, shards, index = null, notes = [] }) {
    this.name = name;
    this.shards = shards;
    this.index = index;
    this.notes = notes;
    this.extraBytesRead = index?.size ?? 0;
    this.rows = [];
    shards.forEach((shard, s) => {
      for (const row of shard.header?.rows ?? []) {
        row.i = this.rows.length;
        row.shard = s;
        this.rows.push(row);
      }
    });
    // (Set by checkIntegrity: the page shows the list before it.)
    this.integrity = null;
  }

  /**
   * Checks of the index against the shard headers, once: resolves to (and sets `integrity` to)
   * [{level: 'ok'|'warn'|'error', text}].
   */
  checkIntegrity() {
    this.#integrity ??= this.#checkIntegrity().then((found) => {
      this.integrity = found;
      return found;
    });
    return this.#integrity;
  }

  /** The row of each tensor name (its first, when a name is in two shards). */
  get byName() {
    if (!this.#byName) {
      this.#byName = new Map();
      for (const row of this.rows) if (!this.#byName.has(row.name)) this.#byName.set(row.name, row);
    }
    return this.#byName;
  }

  get sharded() {
    return this.shards.length > 1 || this.index !== null;
  }

  get bytesRead() {
    return this.shards.reduce((a, s) => a + s.bytesRead, 0) + this.extraBytesRead;
  }

  get fileBytes() {
    return this.shards.reduce((a, s) => a + (s.size ?? 0), 0);
  }

  /** Totals: tensors, parameters and bytes, overall and per dtype (by bytes), worked out once. */
  summary() {
    this.#summary ??= this.#sum();
    return this.#summary;
  }

  #sum() {
    const by = new Map();
    let params = 0;
    let bytes = 0;
    let aligned = 0;
    let alignedBytes = 0;
    let subByte = 0;
    for (const r of this.rows) {
      params += r.params;
      bytes += r.bytes;
      let d = by.get(r.dtype);
      if (!d) by.set(r.dtype, (d = { dtype: r.dtype, tensors: 0, params: 0, bytes: 0, aligned: 0 }));
      d.tensors++;
      d.params += r.params;
      d.bytes += r.bytes;
      if (r.aligned) {
        aligned++;
        alignedBytes += r.bytes;
        d.aligned++;
      }
      if (r.subByte) subByte++;
    }
    const byDtype = DTYPES.filter((t) => by.has(t)).map((t) => by.get(t));
    byDtype.sort((a, b) => b.bytes - a.bytes);
    return {
      tensors: this.rows.length,
      params,
      bytes,
      byDtype,
      aligned,
      alignedBytes,
      subByte,
      misaligned: this.rows.length - aligned - subByte,
    };
  }

  /** `__metadata__` entries: the index's metadata and each shard's, as [key, value, where]. */
  metadataRows() {
    const out = [];
    if (this.index?.metadata) {
      for (const [k, v] of Object.entries(this.index.metadata))
        out.push([k, typeof v === 'string' ? v : JSON.stringify(v), this.index.name]);
    }
    const seen = new Map();
    for (const shard of this.shards) {
      const md = shard.header?.metadata();
      if (!md) continue;
      for (const [k, v] of Object.entries(md)) {
        const key = `${k}\u0000${v}`;
        if (seen.has(key)) seen.get(key)[2].push(shard.name);
        else {
          const row = [k, v, [shard.name]];
          seen.set(key, row);
          out.push(row);
        }
      }
    }
    const all = this.shards.filter((s) => s.header).length;
    return out.map(([k, v, w]) => [
      k,
      v,
      Array.isArray(w) ? (w.length === all && all > 1 ? 'all shards' : w.join(', ')) : w,
    ]);
  }

  /**
   * The package's check, over the headers read (a shard that failed to open has none): by the
   * worker that read a remote index (it holds the parsed index), else here. The index may name
   * shards by path, a drop gives base names.
   */
  async #findings() {
    const order = this.shards.map((s) => s.name);
    const found = await this.index?.check?.(order).catch(() => null);
    if (found) return found;
    const headers = this.shards.map(({ name, header: h }) => ({
      name,
      names: h ? h.names : null,
      dataBytes: h ? h.fileSize - h.dataOffset : 0,
    }));
    return checkIndex(this.index?.json ?? null, headers);
  }

  async #checkIntegrity() {
    const findings = await this.#findings();
    const out = [];
    for (const shard of this.shards) {
      if (shard.error)
        out.push({
          level: 'error',
          text: `${shard.name}: ${describeError(shard.error)}`,
          error: shard.error,
          shard: shard.name,
        });
    }
    for (const n of this.notes) out.push(n);
    // Worded as the CLI's verify words them (the table generated from the Rust core).
    const names = this.shards.map((s) => s.name);
    const say = (f) => shardFindingMessage(f, names);
    const of = (kind) => findings.filter((f) => f.kind === kind);
    for (const d of of('duplicate')) out.push({ level: 'error', text: say(d) });
    if (!this.index) {
      const good = this.shards.filter((s) => s.header);
      if (good.length)
        out.push({
          level: 'ok',
          text:
            good.length === 1
              ? 'header valid; offsets tile the data exactly to the end of the file'
              : `${good.length} file headers valid; offsets tile each file exactly`,
        });
      return out;
    }
    // At most 5 lines of each kind, then a count of the rest.
    const some = (kind, level, rest) => {
      const all = of(kind);
      for (const f of all.slice(0, 5)) out.push({ level, text: say(f) });
      if (all.length > 5) out.push({ level, text: `… ${all.length - 5} ${rest}` });
    };
    some('missing', 'error', 'more tensors listed in the index are missing');
    some('misplaced', 'error', 'more tensors are in another shard than the index says');
    for (const f of of('missingShard')) out.push({ level: 'error', text: say(f) });
    some('unlisted', 'error', 'more tensors are missing from the index');
    for (const f of of('unnamedShard')) out.push({ level: 'warn', text: say(f) });
    const declared = this.index.metadata?.total_size;
    const [size] = of('totalSize');
    if (size) out.push({ level: 'warn', text: say(size) });
    else if (
      declared !== undefined &&
      declared !== null &&
      !findings.some((f) => f.kind === 'missingShard') &&
      this.shards.every((s) => s.header)
    ) {
      out.push({ level: 'ok', text: `total_size ${Number(declared)} = sum of tensor bytes in the shard headers` });
    }
    if (!out.some((x) => x.level === 'error')) {
      // With no error, each index entry is exactly one tensor of the shards (none missing,
      // misplaced, unlisted or duplicated, no shard missing): as many entries as rows.
      const entries = this.rows.length;
      out.push({
        level: 'ok',
        text:
          `all ${entries} index entries match the headers of ` +
          `${this.shards.length} shard${this.shards.length === 1 ? '' : 's'}`,
      });
    }
    return out;
  }

  /** The header JSON of every file (read on demand), pretty-printed. */
  async headerJson() {
    const read = async (shard) => {
      const bytes = await readSourceRange(shard.src, 8, shard.header.dataOffset);
      this.extraBytesRead += bytes.length;
      return JSON.parse(new TextDecoder().decode(bytes));
    };
    const good = this.shards.filter((s) => s.header);
    if (!this.sharded) return JSON.stringify(await read(good[0]), null, 2);
    const out = {};
    if (this.index) out[this.index.name] = this.index.json;
    for (const s of good) out[s.name] = await read(s);
    return JSON.stringify(out, null, 2);
  }
}

/** "Kind: message" for any error (the package's message already says where). */
export function describeError(err) {
  if (err?.kind) return `${err.kind}: ${err.message}`;
  return err?.message ?? String(err);
}

function parseIndex(text, name, size) {
  let json;
  try {
    json = parseIndexText(text);
  } catch (e) {
    throw new OpenError(name, e);
  }
  return { name, size, json, entries: Object.keys(json.weight_map).length, metadata: json.metadata ?? null };
}

/**
 * The index the open worker read (its text and metadata): parsed here only when the raw header
 * is asked for, or the worker could not check it; its check against the headers is the worker's,
 * which counts its entries too.
 */
function remoteIndex({ name, size, metadata, text }, job) {
  let json = null;
  let entries = null;
  const index = {
    name,
    size,
    metadata,
    get entries() {
      entries ??= Object.keys(index.json.weight_map).length;
      return entries;
    },
    get json() {
      json ??= JSON.parse(text);
      return json;
    },
    check: async (order) => {
      const found = await opener.run('check', { of: job, order }).promise;
      entries = found.entries;
      return found.findings;
    },
  };
  return index;
}

/**
 * Opens every shard at once (one job of the open worker); a shard that fails is kept with its
 * error.
 */
async function openShards(sources) {
  const shards = sources.map((src) => new Shard(src));
  await opener.run('shards', { sources: sources.map(wireSource) }, { onPart: (part) => takeHeader(shards, part) })
    .promise;
  return sortShards(shards);
}

async function sortShards(shards) {
  shards.sort((a, b) => naturalCompare(a.name, b.name));
  await yieldToPage();
  return shards;
}

/**
 * Opens dropped or picked files: one or more .safetensors files, or a sharded model (its
 * *.index.json and shards, any order, other files ignored). `files` are File objects, optionally
 * with `relativePath` (folder drops).
 */
export async function openFiles(files, { folder = false } = {}) {
  const list = [...files];
  if (list.length === 0) throw new Error('no files');
  const indexFiles = [];
  const tensorFiles = [];
  const ignored = [];
  for (const f of list) {
    const n = f.name;
    if (isJsonName(n)) (folder && !isIndexName(n) ? ignored : indexFiles).push(f);
    else (folder && !isTensorName(n) ? ignored : tensorFiles).push(f);
  }
  const notes = [];
  let index = null;
  if (indexFiles.length) {
    const found = [];
    for (const f of indexFiles) {
      const text = await f.text();
      try {
        found.push(parseIndex(text, f.name, f.size));
      } catch (e) {
        if (isIndexName(f.name) || list.length === 1) throw e;
        ignored.push(f);
      }
    }
    if (found.length) {
      index = found[0];
      for (const other of found.slice(1)) notes.push({ level: 'warn', text: `ignored a second index, ${other.name}` });
    }
  }
  if (!index && tensorFiles.length === 0)
    throw new OpenError(list[0].name, new Error('no .safetensors file among the dropped files'));
  if (ignored.length)
    notes.push({
      level: 'info',
      text: `ignored ${ignored.length} other file${ignored.length === 1 ? '' : 's'}: ${ignored
        .slice(0, 4)
        .map((f) => f.name)
        .join(', ')}${ignored.length > 4 ? ', …' : ''}`,
    });
  const shards = await openShards(
    tensorFiles.map((f) => blobSource(f, f.name, f.relativePath || f.webkitRelativePath || f.name)),
  );
  if (!index && shards.length === 1 && shards[0].error)
    throw new OpenError(shards[0].name, shards[0].error, shards[0].src);
  const name = index
    ? index.name.replace(/\.index\.json$/i, '').replace(/\.json$/i, '')
    : shards.length === 1
      ? shards[0].name
      : `${shards.length} files`;
  const folderName = (list[0].relativePath || list[0].webkitRelativePath || '').split('/')[0];
  return new Model({ name: folder && folderName ? folderName : name, shards, index, notes });
}

/** Opens a remote .safetensors file, or an index and its shards, by HTTP Range requests. */
export async function openUrl(url) {
  const abs = new URL(url, location.href).href;
  if (isJsonName(new URL(abs).pathname)) {
    // The open worker reads the index and every shard (one job); the page takes the headers as
    // they come.
    let shards = [];
    let facts = null;
    const onPart = (part) => {
      if (part.files) shards = part.files.map((f) => new Shard(urlSource(f.url, f.name)));
      if (part.index) facts = part.index;
      takeHeader(shards, part);
    };
    performance.mark('viewer:index-request');
    const job = opener.run('index', { url: abs, label: url }, { onPart });
    try {
      await job.promise;
    } catch (e) {
      throw e.file ? new OpenError(e.file, new Error(e.message)) : e;
    }
    performance.mark('viewer:shards-read');
    const index = remoteIndex(facts, job.id);
    const dir = new URL(abs).pathname.split('/').slice(-2, -1)[0];
    return new Model({
      name: dir ? decodeURIComponent(dir) : index.name.replace(/\.index\.json$/i, ''),
      shards: await sortShards(shards),
      index,
    });
  }
  const shards = await openShards([urlSource(abs)]);
  if (shards[0].error) throw new OpenError(shards[0].name, shards[0].error, shards[0].src);
  return new Model({ name: shards[0].name, shards });
}

/**
 * Opens a model on the Hugging Face Hub by name, with the package's openHub (in the open worker,
 * the only place the token goes; it is sent to the Hub's endpoint alone). The shards are then
 * read from the URLs they were pinned to (the Hub's signed CDN URLs: no token needed).
 */
export async function openHubModel({ repo, revision, file, endpoint, token }) {
  const r = await opener.run('hub', { repo, revision, file, endpoint, token }).promise;
  const shards = r.shards.map((s) => {
    const shard = new Shard(urlSource(s.url, s.name));
    shard.header = toHeader(s.header);
    return shard;
  });
  shards.sort((a, b) => naturalCompare(a.name, b.name));
  const index = isJsonName(r.file)
    ? {
        name: basename(r.file),
        size: null,
        json: r.index,
        entries: Object.keys(r.index.weight_map).length,
        metadata: r.index.metadata ?? null,
      }
    : null;
  return new Model({ name: repo, shards, index });
}

/** Files of a drop, walking dropped folders (each File gets `relativePath`). */
export async function filesFromDataTransfer(dt) {
  const entries = [];
  for (const item of dt.items ?? []) {
    const entry = item.kind === 'file' && item.webkitGetAsEntry?.();
    if (entry) entries.push(entry);
  }
  if (!entries.some((e) => e.isDirectory)) return { files: [...dt.files], folder: false };
  const files = [];
  const walk = async (entry, path) => {
    if (entry.isFile) {
      const file = await new Promise((res, rej) => entry.file(res, rej));
      file.relativePath = path + file.name;
      files.push(file);
    } else if (entry.isDirectory) {
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((res, rej) => reader.readEntries(res, rej));
        if (!batch.length) break;
        for (const e of batch) await walk(e, `${path}${entry.name}/`);
      }
    }
  };
  for (const e of entries) await walk(e, '');
  return { files, folder: true };
}
