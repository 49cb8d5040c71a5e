// Metadata edits as data: a `__metadata__` map (docs/format.md R7: strings
// to strings) with keys set, dropped or all cleared, for serializeStream,
// serialize and writeFile. The same rules as the CLI's `edit`: clear, then
// drop, then set; setting creates the map; dropping a key the map lacks
// changes nothing (as gguf's --remove-metadata); a map left with no keys
// is `{}`; a key both set and dropped, or the key `__metadata__` (the
// header's name for the map itself), is refused.

import { KIND, fail } from '../errors/safetensors-error.js';

const RESERVED = '__metadata__';

function reserved(what) {
  fail(
    KIND.ReservedName,
    `metadata.${what}: "${RESERVED}" is the header key that holds the metadata, not a key in it; give the metadata's ` +
      'own keys (or clear: true to remove it all)',
  );
}

/** The `[key, value]` pairs of `set`: an object or a Map of strings. */
function setPairs(set) {
  if (set === undefined || set === null) return [];
  let pairs;
  if (set instanceof Map) pairs = [...set];
  else if (typeof set === 'object' && !Array.isArray(set)) pairs = Object.entries(set);
  else throw new TypeError('metadata.set: expected an object or a Map from keys to string values');
  for (const [key, value] of pairs) {
    if (typeof key !== 'string')
      fail(KIND.InvalidArgument, `metadata.set: a key is ${typeof key}; metadata keys are strings`);
    if (key === RESERVED) reserved('set');
    if (typeof value !== 'string') {
      fail(
        KIND.InvalidArgument,
        `metadata.set: the value of ${JSON.stringify(key)} is ${value === null ? 'null' : typeof value}; metadata ` +
          'values are strings (convert it, e.g. String(value))',
      );
    }
  }
  return pairs;
}

/** The keys of `drop`: one string or an array of them. */
function dropKeys(drop) {
  if (drop === undefined || drop === null) return new Set();
  const keys = typeof drop === 'string' ? [drop] : drop;
  if (!Array.isArray(keys)) throw new TypeError('metadata.drop: expected a key or an array of keys');
  for (const key of keys) {
    if (typeof key !== 'string')
      fail(KIND.InvalidArgument, `metadata.drop: a key is ${typeof key}; metadata keys are strings`);
    if (key === RESERVED) reserved('drop');
  }
  return new Set(keys);
}

/**
 * `metadata` (an object of strings, or null/undefined for none) with the
 * edits `{ set, drop, clear }` applied (see the module comment and
 * index.d.ts): a new object, or null when the result has no metadata.
 * Every check runs before anything is changed; `metadata` is not modified.
 */
export function editMetadata(metadata, edits = {}) {
  if (edits === null || typeof edits !== 'object') throw new TypeError('metadata edits: expected { set, drop, clear }');
  const { set, drop, clear = false } = edits;
  if (typeof clear !== 'boolean') throw new TypeError('metadata.clear: expected true or false');
  const pairs = setPairs(set);
  const dropped = dropKeys(drop);
  for (const [key] of pairs) {
    if (dropped.has(key))
      fail(
        KIND.InvalidArgument,
        `metadata: the key ${JSON.stringify(key)} is both set and dropped; give it in one of them`,
      );
  }
  if (metadata !== undefined && metadata !== null && (typeof metadata !== 'object' || Array.isArray(metadata))) {
    throw new TypeError('metadata: expected an object of strings, or null');
  }
  const base = clear || metadata === undefined || metadata === null ? null : metadata;
  if (base === null && pairs.length === 0) return null;
  const out = Object.create(null);
  if (base !== null) for (const [k, v] of Object.entries(base)) if (!dropped.has(k)) out[k] = v;
  for (const [k, v] of pairs) out[k] = v;
  return { ...out };
}
