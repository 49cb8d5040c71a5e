// Splitting a tensor map into Hub-style shards: which tensors go in which
// `model-0000i-of-0000N.safetensors`, and the `model.safetensors.index.json`
// text, as huggingface_hub and transformers write them. Each shard's map is
// then written with serializeStream (or Node's writeFile).

import { KIND, fail } from '../errors/safetensors-error.js';
import { tensorSource } from './serialize-stream.js';
import { tensorEntries } from './serialize.js';

const UNITS = { B: 1, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12, KIB: 2 ** 10, MIB: 2 ** 20, GIB: 2 ** 30, TIB: 2 ** 40 };

/** A shard size: bytes, or a string as the Hub's tools take ("5GB" = 5·10^9, "500MiB" = 500·2^20). */
export function parseSize(size) {
  if (typeof size === 'number') {
    if (Number.isSafeInteger(size) && size > 0) return size;
  } else if (typeof size === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?)\s*([KMGT]?I?B)\s*$/i.exec(size);
    const unit = m && UNITS[m[2].toUpperCase()];
    if (unit !== undefined && unit !== null) {
      const bytes = Math.floor(Number(m[1]) * unit);
      if (bytes > 0) return bytes;
    }
  }
  return fail(
    KIND.InvalidArgument,
    `maxShardSize: ${JSON.stringify(size)} is not a size (bytes, or e.g. "5GB", "500MiB")`,
  );
}

// Python's sort of str keys: by code point (JS's default sort compares
// UTF-16 units, which orders characters above U+FFFF before U+E000–U+FFFF).
function byCodePoint(a, b) {
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    const x = a.codePointAt(i);
    const y = b.codePointAt(j);
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  return a.length - b.length;
}

// A JSON string or number as Python's json.dumps writes it with
// ensure_ascii: every character outside ' '…'~' that JSON.stringify leaves
// as it is (U+007F and up; UTF-16 units, so a pair is two escapes) as \uXXXX.
const asciiJson = (v) =>
  JSON.stringify(v).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

// JSON as Python's json.dumps(value, indent=2, sort_keys=True) writes it.
// Objects are Maps or plain objects; the text is built from their pairs in
// Python's order (a JS object would put integer-like keys such as "9" and
// "10" first, in numeric order, whatever order they were given in).
function pythonJson(value, indent = '') {
  if (value === null || typeof value !== 'object') return asciiJson(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => inner + pythonJson(v, inner)).join(',\n')}\n${indent}]`;
  }
  const pairs = [...(value instanceof Map ? value : Object.entries(value))].sort(([a], [b]) => byCodePoint(a, b));
  if (pairs.length === 0) return '{}';
  return `{\n${pairs.map(([k, v]) => `${inner}${asciiJson(k)}: ${pythonJson(v, inner)}`).join(',\n')}\n${indent}}`;
}

/**
 * Splits `tensors` (what serializeStream takes, in its order) into shards
 * of at most `maxShardSize` bytes of tensor data, as the Hub's tools do: a
 * tensor that would take the current shard over the size starts the next
 * one; a tensor larger than the size gets a shard of its own. One shard is
 * `<prefix>.safetensors` with no index; more are
 * `<prefix>-00001-of-0000N.safetensors`… with the index text as
 * transformers' save_pretrained writes it (sorted keys, two-space indent,
 * `metadata.total_size` = the tensors' data bytes).
 */
export function shardTensors(tensors, { maxShardSize, prefix = 'model' } = {}) {
  const max = parseSize(maxShardSize);
  if (typeof prefix !== 'string' || prefix === '' || /[/\\]/.test(prefix)) {
    throw new TypeError('prefix: expected a file name prefix (no slashes)');
  }
  // (The order of huggingface_hub's split_state_dict_into_shards: a shard
  // is listed when it is closed, so a large tensor's own shard comes before
  // the shard that was filling when it came.)
  const groups = [];
  let current = { tensors: new Map(), dataBytes: 0 };
  let totalSize = 0;
  for (const [name, t] of tensorEntries(tensors)) {
    // (The byte length as the file will hold it, after any conversion.)
    const size = tensorSource(name, t).byteLength;
    totalSize += size;
    if (size > max) {
      groups.push({ tensors: new Map([[name, t]]), dataBytes: size });
      continue;
    }
    if (current.dataBytes + size > max) {
      groups.push(current);
      current = { tensors: new Map(), dataBytes: 0 };
    }
    current.tensors.set(name, t);
    current.dataBytes += size;
  }
  if (current.tensors.size > 0) groups.push(current);
  if (groups.length === 0) groups.push({ tensors: new Map(), dataBytes: 0 });
  const n = groups.length;
  const pad = (i) => String(i).padStart(5, '0');
  const shards = groups.map((g, i) => ({
    name: n === 1 ? `${prefix}.safetensors` : `${prefix}-${pad(i + 1)}-of-${pad(n)}.safetensors`,
    ...g,
  }));
  if (n === 1) return { shards, indexName: null, index: null, totalSize };
  // (A Map: a tensor named "__proto__" is a key like any other.)
  const weightMap = new Map();
  for (const s of shards) for (const name of s.tensors.keys()) weightMap.set(name, s.name);
  const index = `${pythonJson({ metadata: { total_size: totalSize }, weight_map: weightMap })}\n`;
  return { shards, indexName: `${prefix}.safetensors.index.json`, index, totalSize };
}
