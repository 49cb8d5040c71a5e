// Metadata edits (editTensors' `metadata`, editMetadata): the file written
// through serializeStream and writeFile is the reference's save_file of the
// same tensors with that metadata, byte for byte (keys sorted beyond one
// key, docs/format.md W7); bad edits are typed errors before anything is
// written.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  SafeTensors,
  SafeTensorsError,
  editMetadata,
  editTensors,
  openSharded,
  serialize,
  serializeStream,
  writeFile,
} from 'safetensors-nano';
import { runReference, scratch } from '../lib/env.js';
import { collect } from '../lib/streams.js';

const isKind = (kind, says) => (e) => {
  assert.ok(e instanceof SafeTensorsError, String(e));
  assert.equal(e.kind, kind, e.message);
  if (says !== undefined) assert.match(e.message, says);
  return true;
};

const SOURCE_METADATA = { format: 'pt', license: 'mit' };
const ODD = 'a=b "quoted" \\ é 😀\n\t\u0001';

// [what, edits, the metadata the reference is given]
const CASES = [
  ['one key replaced, one dropped', { set: { format: ODD }, drop: ['license'] }, { format: ODD }],
  ['every key dropped: {}', { drop: ['format', 'license'] }, {}],
  ['a missing key dropped: no change', { drop: 'absent' }, SOURCE_METADATA],
  ['cleared', { clear: true }, null],
  ['cleared, then one set', { clear: true, set: new Map([['source', 'x']]) }, { source: 'x' }],
  [
    'keys added, an empty key and value',
    { set: { '': 'empty key', a: '', z: '1' }, drop: ['license'] },
    { '': 'empty key', a: '', format: 'pt', z: '1' },
  ],
];

let reference;
/** The reference's files: the source, and each case's expected output. */
function referenceFiles() {
  if (reference !== undefined) return reference;
  let manifest;
  const run = runReference('metaedit_reference.py', 'stn-metaedit-', (dir) => {
    manifest = {
      source: join(dir, 'source.safetensors'),
      source_metadata: SOURCE_METADATA,
      cases: CASES.map(([, , metadata], i) => ({ out: join(dir, `expected-${i}.safetensors`), metadata })),
    };
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    return [join(dir, 'manifest.json')];
  });
  return (reference = run.skip ? run : { ...run, manifest });
}

/** The header's JSON text and the rest of a file. */
function split(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return { json: new TextDecoder().decode(bytes.subarray(8, 8 + n)), rest: bytes.subarray(8 + n) };
}

/**
 * `ours` is `theirs`: byte for byte with at most one metadata key; beyond
 * that, the reference's key order is random, so ours must have the keys
 * sorted and be the same file otherwise.
 */
function assertReferenceBytes(ours, theirs, metadata, what) {
  if (metadata === null || Object.keys(metadata).length <= 1) {
    assert.deepEqual(ours, theirs, what);
    return;
  }
  assert.equal(ours.length, theirs.length, what);
  const [a, b] = [split(ours), split(theirs)];
  assert.deepEqual(a.rest, b.rest, what);
  assert.deepEqual(JSON.parse(a.json), JSON.parse(b.json), what);
  const keys = Object.keys(JSON.parse(a.json).__metadata__);
  const bytewise = (x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y));
  assert.deepEqual(keys, [...keys].sort(bytewise), `${what}: keys sorted`);
  if ('' in metadata) assert.ok(a.json.startsWith('{"__metadata__":{"":'), `${what}: the empty key first`);
}

test("editTensors' metadata edits write the reference's file with that metadata (serializeStream and writeFile)", {
  skip: referenceFiles().skip,
}, async () => {
  const { dir, manifest } = referenceFiles();
  const source = readFileSync(manifest.source);
  const file = await SafeTensors.fromBlob(new Blob([source]));
  assert.deepEqual(file.metadata(), SOURCE_METADATA);
  for (const [i, [what, edits, expected]] of CASES.entries()) {
    const theirs = new Uint8Array(readFileSync(manifest.cases[i].out));
    const tensors = editTensors(file, { metadata: edits });
    assert.deepEqual(tensors.metadata, expected, what);
    const streamed = (await collect(serializeStream(tensors, tensors.metadata, { chunkBytes: 96 }))).bytes;
    assertReferenceBytes(streamed, theirs, expected, `${what} (serializeStream)`);
    const path = join(dir, `ours-${i}.safetensors`);
    await writeFile(path, tensors, tensors.metadata);
    assertReferenceBytes(new Uint8Array(readFileSync(path)), theirs, expected, `${what} (writeFile)`);
    // What a reader sees: the metadata asked for.
    assert.deepEqual(SafeTensors.fromBytes(streamed).metadata(), expected, what);
  }
  // The source file is not changed, and editMetadata gives the same as editTensors.
  assert.deepEqual(file.metadata(), SOURCE_METADATA);
  for (const [what, edits, expected] of CASES) assert.deepEqual(editMetadata(file.metadata(), edits), expected, what);
});

test("a file with no metadata gets it, as the reference's save_file writes it; a list of Tensors starts with none", async () => {
  const bare = await serialize({ w: { dtype: 'F32', shape: [2], data: new Float32Array([1, 2]) } });
  const file = SafeTensors.fromBytes(bare);
  assert.equal(file.metadata(), null);
  assert.equal(editTensors(file).metadata, null);
  assert.equal(editTensors(file, { metadata: { drop: 'format' } }).metadata, null);
  const tensors = editTensors(file, { metadata: { set: { format: 'pt' } } });
  const bytes = (await collect(serializeStream(tensors, tensors.metadata))).bytes;
  // The worked example's layout (docs/format.md): the same as save_file(..., metadata={"format": "pt"}).
  assert.deepEqual(
    bytes,
    await serialize({ w: { dtype: 'F32', shape: [2], data: new Float32Array([1, 2]) } }, { format: 'pt' }),
  );
  assert.ok(split(bytes).json.startsWith('{"__metadata__":{"format":"pt"},"w":'));
  assert.deepEqual(editTensors(file.tensors(), { metadata: { set: { a: 'b' } } }).metadata, { a: 'b' });
});

test("a sharded model's edits start from its first shard's metadata, not the index's", async () => {
  const shard = (name, meta) => serialize({ [name]: { dtype: 'U8', shape: [1], data: new Uint8Array([1]) } }, meta);
  const files = [
    new File([await shard('a', { format: 'pt', note: 'first' })], 'model-00001-of-00002.safetensors'),
    new File([await shard('b', { format: 'pt' })], 'model-00002-of-00002.safetensors'),
  ];
  const index = { metadata: { total_size: 2 }, weight_map: { a: files[0].name, b: files[1].name } };
  const model = await openSharded(index, files);
  const merged = editTensors(model, { metadata: { drop: ['note'], set: { merged: 'yes' } } });
  assert.deepEqual(merged.metadata, { format: 'pt', merged: 'yes' });
  const out = SafeTensors.fromBytes((await collect(serializeStream(merged, merged.metadata))).bytes);
  assert.deepEqual(out.metadata(), { format: 'pt', merged: 'yes' });
  assert.deepEqual(out.names().sort(), ['a', 'b']);
});

test('bad metadata edits are typed errors, before anything is read or written', async () => {
  const file = SafeTensors.fromBytes(
    await serialize({ w: { dtype: 'U8', shape: [1], data: new Uint8Array(1) } }, { format: 'pt' }),
  );
  const dir = scratch('stn-metaedit-bad-');
  const path = join(dir, 'out.safetensors');
  const bad = [
    [{ set: { step: 3 } }, isKind('InvalidArgument', /value of "step" is number; metadata values are strings/)],
    [{ set: { n: null } }, isKind('InvalidArgument', /is null/)],
    [{ set: new Map([[1, 'x']]) }, isKind('InvalidArgument', /a key is number/)],
    [{ drop: ['ok', 7] }, isKind('InvalidArgument', /a key is number/)],
    [{ set: { a: '1' }, drop: ['a'] }, isKind('InvalidArgument', /"a" is both set and dropped/)],
    [{ set: { __metadata__: '{}' } }, isKind('ReservedName', /header key that holds the metadata.*clear: true/)],
    [{ drop: '__metadata__' }, isKind('ReservedName')],
    [{ set: [['a', 'b']] }, TypeError],
    [{ drop: { a: true } }, TypeError],
    [{ clear: 'yes' }, TypeError],
  ];
  for (const [edits, check] of bad) {
    assert.throws(() => editTensors(file, { metadata: edits }), check, JSON.stringify(edits));
    assert.throws(() => editMetadata(file.metadata(), edits), check, JSON.stringify(edits));
  }
  assert.throws(() => editMetadata('format=pt', { clear: false }), TypeError);
  assert.equal(existsSync(path), false);
  // A lone surrogate has no UTF-8: the writer refuses it before the first byte, and writeFile leaves nothing.
  const tensors = editTensors(file, { metadata: { set: { note: '\ud800' } } });
  await assert.rejects(writeFile(path, tensors, tensors.metadata), isKind('InvalidArgument', /lone surrogate/));
  assert.equal(existsSync(path), false);
});
