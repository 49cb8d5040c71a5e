// Whether a sharded model's index (model.safetensors.index.json) agrees with
// the headers of its shards. Plain data in, findings out, no wasm and no
// I/O: openSharded turns the first finding into its error, the web viewer
// lists them all in its integrity report.
//
// The kinds of finding, their fields and their messages are the Rust core's
// (`IndexProblem`, core/src/io/index_check.rs), generated into
// generated/shard-findings.js; the CLI's `verify` runs the core's check. This
// walk is the same rules in JavaScript, not a call into wasm: the reader
// .wasm is within a few hundred bytes of its 40,000-byte budget, which the
// core's check would not fit. A test compares the two over thousands of
// generated models (tests/js/node/shardcheck-agree.test.js).

import { FINDING_FIELDS, FINDING_TEMPLATES, finding } from '../generated/shard-findings.js';

/**
 * Compares an index's `weight_map` (tensor name → shard file name) and its
 * `metadata.total_size` with the shards' headers.
 *
 * `shards` are `{ name, names, dataBytes }`: the shard's file name, its
 * tensor names in data-offset order (null when its header was not read:
 * only file names are compared for it) and the bytes of its data buffer
 * (file size − 8 − N, which the tensors tile exactly). `index` may be null
 * (files opened together without an index): then only duplicates are found.
 * `fileKey` maps both the index's file names and the shards' names to what
 * is compared (default: the name itself).
 *
 * Findings, in this order (generated/shard-findings.d.ts has their fields):
 * - `missing` {tensor, file} and `misplaced` {tensor, file, shard, at}, by
 *   tensor name (in code point order, as Rust sorts strings): the index puts
 *   `tensor` in `file`, whose header was read; no shard has it, or
 *   (misplaced) its first occurrence is `shards[shard]`, position `at`;
 * - `duplicate` {tensor, shard, at, first} and `unlisted` {tensor, shard, at},
 *   in shard order, then data-offset order: a tensor again in `shards[shard]`
 *   after `shards[first]`; a tensor the index does not list;
 * - `missingShard` {file}, by file name: named by the index, not a shard;
 * - `unnamedShard` {shard}, in shard order: a shard the index does not name;
 * - `totalSize` {stated, actual}: `metadata.total_size` (when not null)
 *   differs from the bytes of the data of the shards the index names, judged
 *   only when each of them was read.
 *
 * @param {{ weight_map: Record<string, string>, metadata?: Record<string, unknown> | null } | null} index
 * @param {Array<{ name: string, names: readonly string[] | null, dataBytes?: number }>} shards
 * @param {{ fileKey?: (name: string) => string }} [options]
 */
export function checkShards(index, shards, { fileKey = (name) => name } = {}) {
  const map = index?.weight_map ?? null;
  // Each tensor's first occurrence: the shard (its position there is
  // looked up when a finding needs it).
  const where = new Map();
  // A shard's name → first position, made on the shard's first misplaced
  // finding (a search per finding would be quadratic when two shards swap
  // their names).
  const positions = new Map();
  const positionIn = (shard, tensor) => {
    let at = positions.get(shard);
    if (at === undefined) {
      at = new Map();
      shards[shard].names.forEach((name, i) => {
        if (!at.has(name)) at.set(name, i);
      });
      positions.set(shard, at);
    }
    return at.get(tensor);
  };
  const inShards = [];
  shards.forEach(({ names }, shard) => {
    if (names === null) return;
    for (let at = 0; at < names.length; at++) {
      const tensor = names[at];
      const seen = where.get(tensor);
      if (seen === undefined) where.set(tensor, shard);
      else inShards.push(finding.duplicate(tensor, shard, at, seen));
      if (map !== null && !Object.hasOwn(map, tensor)) inShards.push(finding.unlisted(tensor, shard, at));
    }
  });
  if (map === null) return inShards;

  const findings = [];
  // Shards by key (of two with one key, the later one counts).
  const shardOf = new Map(shards.map((s, i) => [fileKey(s.name), i]));
  const missingShards = new Set();
  const named = new Set();
  // (Keys, then each value: Object.entries would build a pair per tensor.
  // Neighbouring entries mostly name one file: its key is looked up once
  // for the run.)
  let file;
  let key;
  let s;
  for (const tensor of Object.keys(map)) {
    if (map[tensor] !== file || key === undefined) {
      file = map[tensor];
      key = fileKey(file);
      named.add(key);
      s = shardOf.get(key);
      if (s === undefined) missingShards.add(file);
    }
    if (s !== undefined && shards[s].names !== null) {
      const seen = where.get(tensor);
      if (seen === undefined) findings.push(finding.missing(tensor, file));
      else if (seen !== s) findings.push(finding.misplaced(tensor, file, seen, positionIn(seen, tensor)));
    }
  }
  findings.sort((a, b) => byCodePoint(a.tensor, b.tensor));
  for (const f of inShards) findings.push(f);
  for (const file of [...missingShards].sort(byCodePoint)) findings.push(finding.missingShard(file));
  shards.forEach((s, shard) => {
    if (!named.has(fileKey(s.name))) findings.push(finding.unnamedShard(shard));
  });
  const total = totalSizeFinding(index, namedBytes(named, shardOf, shards));
  if (total !== null) findings.push(total);
  return findings;
}

// The bytes of the data of the shards the index names, or null when one of
// them is missing or its header was not read.
function namedBytes(named, shardOf, shards) {
  let bytes = 0;
  for (const key of named) {
    const s = shardOf.get(key);
    if (s === undefined || shards[s].names === null) return null;
    bytes += shards[s].dataBytes ?? 0;
  }
  return bytes;
}

// Strings in code point order (Rust's order for `str`): UTF-16 code units
// compare so except a surrogate (an astral code point) against U+E000–U+FFFF.
function byCodePoint(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

const codePointRank = (unit) => (unit >= 0xe000 ? unit - 0x800 : unit >= 0xd800 ? unit + 0x2000 : unit);

/**
 * A finding's message, as the Rust core words it (`IndexProblem::message`):
 * its kind's template with the fields filled in, a shard named by
 * `shardNames[position]`.
 *
 * @param {{ kind: string } & Record<string, unknown>} f
 * @param {readonly string[]} shardNames
 */
export function shardFindingMessage(f, shardNames) {
  const fields = FINDING_FIELDS[f.kind];
  return FINDING_TEMPLATES[f.kind].replace(/\{(\w+)\}/g, (_, name) => {
    const type = fields.find(([field]) => field === name)?.[1];
    const value = f[name];
    if (type === 'tensor') return JSON.stringify(value);
    if (type === 'shard') return shardNames[value] ?? `#${value}`;
    return String(value);
  });
}

/**
 * @internal The `totalSize` finding when the index's `metadata.total_size`
 * (when not null) differs from `bytes`, the data of the shards it names
 * (null: not judged); else null.
 */
export function totalSizeFinding(index, bytes) {
  const stated = index?.metadata?.total_size;
  if (bytes === null || stated === undefined || stated === null || Number(stated) === bytes) return null;
  return finding.totalSize(Number(stated), bytes);
}

/**
 * @internal Whether one shard's header agrees with the index, looked at
 * alone (so as it arrives): its `names` are exactly `listed`, the names the
 * index puts in it (weight_map's own keys). A header's names are distinct
 * (D1), so equal lists, in order or once both are sorted, are equal sets.
 * When every shard the index names agrees, the shards match the index's
 * file names and totalSizeFinding is null, checkShards finds nothing (a
 * name in two shards would be put in two files).
 *
 * (Compared as lists, not looked up by name: the names are new strings,
 * which a lookup hashes or interns one by one, in a table far larger than
 * the cache when the index is large. An index that lists each shard's tensors in data
 * order compares in order; one sorted by name, against a header whose
 * tensors are grouped by dtype and sorted by name within a group, sorts
 * as a few runs, which sort merges.)
 */
export function shardAgrees(listed, names) {
  if (names.length !== listed.length) return false;
  return sameItems(listed, names) || sameItems([...listed].sort(), [...names].sort());
}

/** @internal Whether two lists of names are the same, item by item. */
export function sameList(a, b) {
  return a.length === b.length && sameItems(a, b);
}

function sameItems(a, b) {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
