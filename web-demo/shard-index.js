// A sharded model's index as the viewer reads it, on the page (a dropped index) and in the open
// worker (an index by URL) alike: its JSON, with what is wrong when it is not an index, and the
// package's check of it against the shards' headers. No DOM and no wasm.

import { checkShards } from './vendor/safetensors-nano/facts.js';

/** The last part of a path (either slash). */
export const basename = (p) => p.split(/[\\/]/).pop();

/** An index's text parsed; an Error that says what is wrong when it is not JSON or has no weight_map. */
export function parseIndexText(text) {
  let json;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new Error(`not valid JSON: ${e.message}`);
  }
  if (!json || typeof json.weight_map !== 'object' || json.weight_map === null)
    throw new Error('not a sharded-model index: it has no "weight_map" object');
  return json;
}

/**
 * The package's findings for the index `json` (null: none) against the shards' `headers`
 * ([{name, names, dataBytes}], names null for a shard that failed to open). The index may name
 * shards by path; a drop gives base names.
 */
export function checkIndex(json, headers) {
  // (Each distinct file name's key once: the index repeats a few hundred names 100,000 times.)
  const keys = new Map();
  const fileKey = (n) => keys.get(n) ?? keys.set(n, basename(n)).get(n);
  return checkShards(json, headers, { fileKey });
}
