// How long each shard's header is, estimated from the index alone (no
// wasm: the viewer's page sizes its requests with it too, through the
// entry safetensors-nano/facts).

import { KIND, fail } from '../errors/safetensors-error.js';

// A shard's first request, sized from the index so that a shard takes one
// request (a model of many shards has headers of hundreds of KiB, far past
// fromUrl's default first range). The index lists each shard's tensors; a
// header entry is its name as JSON, then
// `:{"dtype":"…","shape":[…],"data_offsets":[…,…]},` — 46 bytes of syntax,
// a dtype of at most 7 letters, a shape of rank 2 with dimensions up to 6
// digits, two offsets as long as a shard's size. Each part errs long, and
// a margin covers the metadata, so that an estimate falls short (costing a
// second request for the rest) only for unusual headers; the bytes it
// overshoots by are a few per tensor.
const ENTRY_SYNTAX = 46 + 7 + 13;
const HEADER_MARGIN = 256;
const encoder = new TextEncoder();
const ESCAPED_OR_WIDE = /[^\x20\x21\x23-\x5b\x5d-\x7e]/;

/**
 * The shard file names of an index's weight_map, each with the estimated
 * 8 + N bytes of its header: the first range to fetch (fromUrl's
 * `prefetch`) for a shard to open with one request. IndexInvalid when the
 * index has no weight_map object or a weight_map value is not a string.
 */
export function shardHeaderBytes(json) {
  const first = new Map();
  for (const [file, { bytes }] of indexShards(json)) first.set(file, bytes);
  return first;
}

/**
 * @internal What the index says of each shard, in one pass over its
 * weight_map: file name → `{ bytes, names }`, the first range to fetch (as
 * shardHeaderBytes) and the tensor names the index puts in it, in index
 * order (what openSharded compares each shard's header with as it arrives).
 */
export function indexShards(json) {
  const map = json !== null && typeof json === 'object' ? json.weight_map : undefined;
  if (map === null || typeof map !== 'object' || Array.isArray(map)) {
    fail(
      KIND.IndexInvalid,
      'index has no "weight_map" object (tensor name to shard file name): pass the parsed model.safetensors.index.json',
    );
  }
  const files = new Map(); // file → { bytes of its tensors' names as JSON, names }
  // (Neighbouring entries mostly share a shard: its record is at hand
  // without a Map lookup. `last` is a string once `shard` is set.)
  let last;
  let shard;
  for (const name of Object.keys(map)) {
    const file = map[name];
    if (file !== last || shard === undefined) {
      if (typeof file !== 'string') fail(KIND.IndexInvalid, 'weight_map value is not a string', { tensor: name });
      shard = files.get(file);
      if (shard === undefined) files.set(file, (shard = { bytes: 0, names: [] }));
      last = file;
    }
    shard.bytes += nameBytes(name);
    shard.names.push(name);
  }
  return sizeHeaders(files, json);
}

/**
 * @internal Bytes of a tensor name as a JSON string: for printable ASCII
 * without `"` or `\` (almost every name) its length and the quotes.
 */
export function nameBytes(name) {
  return ESCAPED_OR_WIDE.test(name) ? encoder.encode(JSON.stringify(name)).length : name.length + 2;
}

/**
 * @internal Turns indexShards' records (`bytes` the sum of their names'
 * nameBytes) into its result: each shard's estimated 8 + N.
 */
export function sizeHeaders(files, json) {
  const total = Number(json.metadata?.total_size);
  // Offsets of a shard twice the mean size; 12 digits (a TB) without total_size.
  const offsetDigits =
    Number.isSafeInteger(total) && total > 0 ? String(Math.ceil((2 * total) / files.size)).length : 12;
  const perEntry = ENTRY_SYNTAX + 2 * offsetDigits;
  for (const shard of files.values()) shard.bytes = 8 + HEADER_MARGIN + shard.bytes + shard.names.length * perEntry;
  return files;
}
