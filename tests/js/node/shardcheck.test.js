// checkShards: an index's weight_map and total_size against shard headers,
// as plain findings; and openSharded's errors, which it decides from them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SafeTensorsError, checkShards, openSharded, shardFindingMessage, shardHeaderBytes } from 'safetensors-nano';
import { tensorFile } from '../lib/format.js';

const A = 'model-00001-of-00002.safetensors';
const B = 'model-00002-of-00002.safetensors';
const index = (weight_map, metadata) => (metadata === undefined ? { weight_map } : { metadata, weight_map });
const agreeing = index({ a: A, b: A, c: B }, { total_size: 30 });
const shards = () => [
  { name: A, names: ['a', 'b'], dataBytes: 20 },
  { name: B, names: ['c'], dataBytes: 10 },
];

test('checkShards finds nothing when the index and the headers agree', () => {
  assert.deepEqual(checkShards(agreeing, shards()), []);
  // No total_size, or a null one: nothing to compare.
  assert.deepEqual(checkShards(index({ a: A, b: A, c: B }), shards()), []);
  assert.deepEqual(checkShards(index({ a: A, b: A, c: B }, { total_size: null }), shards()), []);
  // A string total_size is compared as a number.
  assert.deepEqual(checkShards(index({ a: A, b: A, c: B }, { total_size: '30' }), shards()), []);
});

test('checkShards reports each kind of disagreement, in its documented order', () => {
  const idx = index({ ghost: B, b: B, c: B, gone: 'model-3.safetensors', a: A }, { total_size: 99 });
  const s = [
    { name: A, names: ['a', 'b', 'x'], dataBytes: 20 },
    { name: B, names: ['c', 'a'], dataBytes: 10 },
    { name: 'extra.safetensors', names: ['y'], dataBytes: 4 },
  ];
  const found = checkShards(idx, s);
  assert.deepEqual(found, [
    // Index entries, by tensor name.
    { kind: 'misplaced', tensor: 'b', file: B, shard: 0, at: 1 },
    { kind: 'missing', tensor: 'ghost', file: B },
    // Shard contents, in shard then data-offset order.
    { kind: 'unlisted', tensor: 'x', shard: 0, at: 2 },
    { kind: 'duplicate', tensor: 'a', shard: 1, at: 1, first: 0 },
    { kind: 'unlisted', tensor: 'y', shard: 2, at: 0 },
    // Files; the total size is not judged while a shard the index names is missing.
    { kind: 'missingShard', file: 'model-3.safetensors' },
    { kind: 'unnamedShard', shard: 2 },
  ]);
  // Each finding worded as the Rust core words it (the CLI's verify).
  assert.deepEqual(
    found.map((f) =>
      shardFindingMessage(
        f,
        s.map((x) => x.name),
      ),
    ),
    [
      `tensor "b" is indexed in ${B}, but it is in ${A}`,
      `tensor "ghost" is indexed in ${B}, but no shard holds it`,
      `tensor "x" in ${A} is not in the index`,
      `tensor "a" is in both ${A} and ${B}`,
      'tensor "y" in extra.safetensors is not in the index',
      'shard model-3.safetensors is named by the index but missing',
      'shard extra.safetensors is not named by the index',
    ],
  );
  // total_size: the data of the shards the index names (not of an unnamed one).
  const total = checkShards(index({ a: A, b: A, c: B }, { total_size: 99 }), [
    ...shards(),
    { name: 'x', names: [], dataBytes: 5 },
  ]);
  assert.deepEqual(total, [
    { kind: 'unnamedShard', shard: 2 },
    { kind: 'totalSize', stated: 99, actual: 30 },
  ]);
  assert.equal(shardFindingMessage(total[1], []), "index states total_size 99, but the shards' tensors hold 30 bytes");
  // Not judged while a named shard's header was not read.
  assert.deepEqual(checkShards(index({ a: A, c: B }, { total_size: 99 }), [{ name: A, names: null }, shards()[1]]), []);
});

test('checkShards orders tensor names by code point, as Rust sorts them', () => {
  // UTF-16 order would put the astral '\u{1F600}' (a surrogate pair) before '\uFF21'.
  const names = ['\u{1F600}', '\uFF21', 'b', '10', '9', 'a"\n'];
  const found = checkShards(index(Object.fromEntries(names.map((n) => [n, A]))), [
    { name: A, names: [], dataBytes: 0 },
  ]);
  assert.deepEqual(
    found.map((f) => f.tensor),
    ['10', '9', 'a"\n', 'b', '\uFF21', '\u{1F600}'],
  );
  assert.equal(shardFindingMessage(found[2], [A]), `tensor "a\\"\\n" is indexed in ${A}, but no shard holds it`);
});

test('checkShards reads each name a bounded number of times when two shards swap all their names', () => {
  // A shard's names behind a Proxy that counts the reads of its items: a
  // search per misplaced finding would read about n²/4 of them.
  let reads = 0;
  const counted = (names) =>
    new Proxy(names, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
  const half = 2000;
  const a = Array.from({ length: half }, (_, i) => `a.${i}`);
  const b = Array.from({ length: half }, (_, i) => `b.${i}`);
  const weight_map = Object.fromEntries([...a.map((t) => [t, B]), ...b.map((t) => [t, A])]);
  const found = checkShards(index(weight_map), [
    { name: A, names: counted(a), dataBytes: 0 },
    { name: B, names: counted(b), dataBytes: 0 },
  ]);
  const byName = (x, y) => (x.tensor < y.tensor ? -1 : x.tensor > y.tensor ? 1 : 0);
  assert.deepEqual(
    found,
    [
      ...a.map((tensor, at) => ({ kind: 'misplaced', tensor, file: B, shard: 0, at })),
      ...b.map((tensor, at) => ({ kind: 'misplaced', tensor, file: A, shard: 1, at })),
    ].sort(byName),
  );
  assert.ok(reads <= 3 * 2 * half, `${reads} reads of ${2 * half} names`);
  // The position reported is the first occurrence in that shard.
  assert.deepEqual(
    checkShards(index({ x: B, y: B }), [
      { name: A, names: ['y', 'x', 'x'] },
      { name: B, names: ['y'] },
    ]),
    [
      { kind: 'misplaced', tensor: 'x', file: B, shard: 0, at: 1 },
      { kind: 'misplaced', tensor: 'y', file: B, shard: 0, at: 0 },
      { kind: 'duplicate', tensor: 'x', shard: 0, at: 2, first: 0 },
      { kind: 'duplicate', tensor: 'y', shard: 1, at: 0, first: 0 },
      { kind: 'unnamedShard', shard: 0 },
    ],
  );
});

test('checkShards: an unread header, a null index, fileKey, and names that are Object properties', () => {
  // A shard whose header was not read: only its file name counts.
  const unread = [
    { name: A, names: null },
    { name: B, names: ['c'], dataBytes: 10 },
  ];
  assert.deepEqual(checkShards(index({ a: A, c: B }), unread), []);
  assert.deepEqual(checkShards(index({ a: A, c: A }), unread), [{ kind: 'unnamedShard', shard: 1 }]);
  // No index: files opened together, only duplicates matter.
  assert.deepEqual(
    checkShards(null, [
      { name: A, names: ['a', 'b'] },
      { name: B, names: ['b', 'c'] },
    ]),
    [{ kind: 'duplicate', tensor: 'b', shard: 1, at: 0, first: 0 }],
  );
  // fileKey: compare base names (the web viewer's folder drops).
  const base = (p) => p.split('/').pop();
  const inDir = index({ a: `sub/${A}`, c: B });
  const s = [
    { name: A, names: ['a'], dataBytes: 1 },
    { name: `x/${B}`, names: ['c'], dataBytes: 1 },
  ];
  assert.deepEqual(checkShards(inDir, s, { fileKey: base }), []);
  assert.deepEqual(
    checkShards(inDir, s).map((f) => f.kind),
    ['missingShard', 'missingShard', 'unnamedShard', 'unnamedShard'],
  );
  // Only the index's own entries list a tensor.
  assert.deepEqual(checkShards(index({}), [{ name: A, names: ['constructor'] }]), [
    { kind: 'unlisted', tensor: 'constructor', shard: 0, at: 0 },
    { kind: 'unnamedShard', shard: 0 },
  ]);
});

// openSharded's errors: the first disagreement met reading the shards in
// order, then the index's entries, then total_size.
const f32 = (...v) => new Float32Array(v);
const fileA = tensorFile([
  ['a', 'F32', [2], f32(1, 2)],
  ['b', 'F32', [1], f32(3)],
]);
const fileB = tensorFile([['c', 'F32', [1], f32(4)]]);
const files = (b = fileB) => [new File([fileA], A), new File([b], B)];

async function error(idx, shardFiles = files()) {
  try {
    await openSharded(idx, shardFiles);
  } catch (e) {
    return [e.kind, e.message];
  }
  return null;
}

test('openSharded fails with the first finding, worded as before', async () => {
  assert.equal(await error(index({ a: A, b: A, c: B }, { total_size: 16 })), null);
  assert.deepEqual(await error(index({ a: A, b: B, c: B })), [
    'IndexMismatch',
    `the index puts it in ${B}, it is in ${A} (tensor "b")`,
  ]);
  assert.deepEqual(await error(index({ a: A, c: B })), ['IndexMismatch', `in ${A} but not in the index (tensor "b")`]);
  assert.deepEqual(await error(index({ a: A, b: A, c: B, ghost: B })), [
    'IndexMismatch',
    `the index puts it in ${B}, which has no such tensor (tensor "ghost")`,
  ]);
  assert.deepEqual(await error(index({ a: A, b: A, c: B }, { total_size: 15 })), [
    'IndexMismatch',
    'index metadata total_size is 15, the shards hold 16 bytes of tensors',
  ]);
  // A repeat is reported before the repeated tensor's other problems.
  const again = tensorFile([
    ['a', 'F32', [1], f32(5)],
    ['c', 'F32', [1], f32(4)],
  ]);
  assert.deepEqual(await error(index({ a: B, b: A, c: B }), files(again)), [
    'IndexMismatch',
    `the index puts it in ${B}, it is in ${A} (tensor "a")`,
  ]);
  assert.deepEqual(await error(index({ b: A, c: B }), files(again)), [
    'IndexMismatch',
    `in ${A} but not in the index (tensor "a")`,
  ]);
  assert.deepEqual(await error(index({ a: A, b: A, c: B }), files(again)), [
    'DuplicateTensorName',
    'tensor in two shards (tensor "a")',
  ]);
  // Shard-order first: a problem in the first shard wins over an earlier index entry.
  assert.deepEqual(await error(index({ c: A, a: B, b: A })), [
    'IndexMismatch',
    `the index puts it in ${B}, it is in ${A} (tensor "a")`,
  ]);
  assert.deepEqual(await error(index({ ghost: A, c: B, b: A })), [
    'IndexMismatch',
    `in ${A} but not in the index (tensor "a")`,
  ]);
  // Each shard's names against the index's, in any order: the index may
  // list them otherwise than the headers do (sorted by name, as the Hub's).
  assert.equal(await error(index({ c: B, b: A, a: A }, { total_size: 16 })), null);
  // Two tensors swapped between shards leave every shard its count of names.
  assert.deepEqual(await error(index({ a: A, c: A, b: B })), [
    'IndexMismatch',
    `the index puts it in ${B}, it is in ${A} (tensor "b")`,
  ]);
  // File names, before any shard is opened.
  assert.deepEqual(await error(index({ a: A, b: A, c: B, z: 'z.safetensors', y: 'y.safetensors' })), [
    'ShardMissing',
    'shard y.safetensors named by the index was not given',
  ]);
  assert.deepEqual(await error(index({ a: A, b: A }), files()), [
    'IndexMismatch',
    `shard ${B} is not named by the index`,
  ]);
  assert.deepEqual(await error(index({ a: A, b: A, c: B }), [...files(), new File([fileB], A)]), [
    'IndexMismatch',
    `shard ${A} is given twice`,
  ]);
});

test('the entry safetensors-nano/facts: the same table and check, with no wasm in its imports', async () => {
  const facts = await import('safetensors-nano/facts');
  const main = await import('safetensors-nano');
  assert.equal(facts.DTYPE_INFO, main.DTYPE_INFO);
  assert.equal(facts.DTYPES, main.DTYPES);
  assert.equal(facts.checkShards, main.checkShards);
  assert.equal(facts.shardHeaderBytes, main.shardHeaderBytes);
  // Walk facts.js's static imports in the installed package: none reaches the wasm glue.
  const { readFileSync } = await import('node:fs');
  const { fileURLToPath } = await import('node:url');
  const seen = new Set();
  const walk = (url) => {
    if (seen.has(url.href)) return;
    seen.add(url.href);
    for (const [, spec] of readFileSync(fileURLToPath(url), 'utf8').matchAll(
      /^(?:import|export)\b[^'"]*from\s+'([^']+)'/gm,
    )) {
      walk(new URL(spec, url));
    }
  };
  walk(new URL(import.meta.resolve('safetensors-nano/facts')));
  const files = [...seen].map((u) => u.slice(u.lastIndexOf('/') + 1));
  assert.ok(files.includes('dtypes.js') && files.includes('check-index.js'), files.join());
  assert.ok(!files.some((f) => f.startsWith('safetensors_nano_')), files.join());
});

test('shardHeaderBytes: each shard of a DeepSeek-like index, its header covered from the index alone, all within 10%', async () => {
  const { shardHeaderBytes, SafeTensorsError } = await import('safetensors-nano');
  const { deepSeekLike } = await import('../lib/hub.js');
  const model = deepSeekLike();
  const sizes = shardHeaderBytes(model.index);
  assert.deepEqual([...sizes.keys()].sort(), model.shards.map((s) => s.name).sort());
  let guessed = 0;
  let headers = 0;
  for (const s of model.shards) {
    const guess = sizes.get(s.name);
    assert.ok(guess >= s.header.length, `${s.name}: ${guess} for a header of ${s.header.length} bytes`);
    guessed += guess;
    headers += s.header.length;
  }
  assert.ok(guessed <= 1.1 * headers, `${guessed} bytes guessed for ${headers} bytes of headers`);
  assert.throws(
    () => shardHeaderBytes({ weight_map: { a: 7 } }),
    (e) => e instanceof SafeTensorsError && e.kind === 'IndexInvalid',
  );
});

test('shardHeaderBytes of an index without a weight_map object is IndexInvalid, as openSharded finds it', async () => {
  const invalid = (e) => e instanceof SafeTensorsError && e.kind === 'IndexInvalid';
  for (const index of [
    {},
    { weight_map: null },
    { weight_map: 'model.safetensors' },
    { weight_map: ['a'] },
    null,
    'text',
  ]) {
    assert.throws(() => shardHeaderBytes(index), invalid, JSON.stringify(index));
  }
  assert.throws(() => shardHeaderBytes({ weight_map: { a: 3 } }), invalid);
  // Whichever entry it is: the first, or one after others of a shard.
  for (const weight_map of [{ a: undefined }, { a: null }, { a: 'x', b: 'x', c: null }, { a: 'x', b: undefined }]) {
    const bad = Object.keys(weight_map).at(-1);
    assert.throws(
      () => shardHeaderBytes({ weight_map }),
      (e) => invalid(e) && e.tensor === bad,
      JSON.stringify(weight_map),
    );
  }
  await assert.rejects(openSharded({ metadata: {} }, []), invalid);
  assert.deepEqual([...shardHeaderBytes({ weight_map: { a: 'x.safetensors' } }).keys()], ['x.safetensors']);
});
