// shardTensors and writeShards: Hub-style shards and index, read back by
// the reference (safe_open on every shard) and checked against
// huggingface_hub's own split (lib/check_shards.py); merging them back.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  SafeTensors,
  SafeTensorsError,
  editTensors,
  openSharded,
  serialize,
  serializeStream,
  shardTensors,
  writeShards,
} from 'safetensors-nano';
import { python, referenceFiles, scratch } from '../lib/env.js';
import { collect } from '../lib/streams.js';

const ref = referenceFiles(); // (skips with it when the venv is absent)
const checker = fileURLToPath(new URL('../lib/check_shards.py', import.meta.url));
const BYTES = { F32: 4, F16: 2, I64: 8, U8: 1 };
const root = scratch('stn-shards-');

// A model of tensors of many sizes, odd names among them (non-ASCII, a
// character above U+FFFF and one just below, integer-like names, U+007F: for
// the index's key order and escapes).
async function model() {
  const tensors = {};
  const sizes = [10, 300, 40, 900, 5, 2000, 70, 64, 1, 333, 128, 256];
  sizes.forEach((n, i) => {
    const values = new Float32Array(n).map((_, k) => (k * (i + 1)) / 7);
    tensors[`layers.${i}.weight`] = { dtype: 'F32', shape: [n], data: values };
  });
  tensors['caf\u00e9.bias'] = { dtype: 'I64', shape: [3], data: new BigInt64Array([1n, -2n, 3n]) };
  tensors['emoji \u{1F600}'] = { dtype: 'U8', shape: [2], data: Uint8Array.of(1, 2) };
  tensors['fullwidth \uFF5E'] = { dtype: 'U8', shape: [1], data: Uint8Array.of(3) };
  // Integer-like names (a JS object orders "9" and "10" numerically, Python's sort as text) and U+007F (escaped by ensure_ascii).
  tensors['10'] = { dtype: 'U8', shape: [3], data: Uint8Array.of(4, 5, 6) };
  tensors['9'] = { dtype: 'U8', shape: [1], data: Uint8Array.of(7) };
  tensors['del \u007f'] = { dtype: 'U8', shape: [1], data: Uint8Array.of(8) };
  return SafeTensors.fromBytes(await serialize(tensors, { format: 'pt' }));
}

function checkWithReference(dir, tensors, maxShardSize) {
  const plan = {
    max_shard_size: maxShardSize,
    tensors: [...tensors].map(([name, t]) => [name, t.shape.reduce((a, b) => a * b, 1) * BYTES[t.dtype]]),
  };
  const planPath = join(dir, '..', `${dir.split('/').pop()}.plan.json`);
  writeFileSync(planPath, JSON.stringify(plan));
  const r = spawnSync(python, [checker, dir, planPath], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim().split('\n');
}

test('writeShards: Hub-named shards and index, as huggingface_hub splits them, read back by safe_open; merged back into one file', {
  skip: ref.skip,
}, async () => {
  const file = await model();
  const tensors = editTensors(file, { convert: { F32: 'F16' } });
  const whole = (await collect(serializeStream(tensors, { format: 'pt' }))).bytes;
  for (const maxShardSize of [1000, '2KB', 3000, 10 ** 9]) {
    const bytes = typeof maxShardSize === 'number' ? maxShardSize : 2000;
    const dir = join(root, `max-${bytes}`);
    const { shards, index } = await writeShards(dir, tensors, { format: 'pt' }, { maxShardSize });
    const names = checkWithReference(dir, tensors, bytes);
    assert.deepEqual(shards, names);
    assert.deepEqual(readdirSync(dir).sort(), [...names, ...(index ? [index] : [])].sort());
    if (names.length === 1) {
      assert.equal(index, null);
      assert.deepEqual(readFileSync(join(dir, 'model.safetensors')), Buffer.from(whole));
      continue;
    }
    assert.ok(names.length >= 3, `${names.length} shards of ${bytes} bytes`);
    assert.match(names[0], /^model-00001-of-000\d\d\.safetensors$/);
    // Merging: the index and its shards, opened and written as one stream,
    // are the file written unsplit.
    const opened = await openSharded(
      new Blob([readFileSync(join(dir, index))]),
      names.map((n) => new File([readFileSync(join(dir, n))], n)),
    );
    const merged = (await collect(serializeStream(editTensors(opened), opened.shards[0].file.metadata()))).bytes;
    assert.deepEqual(Buffer.from(merged), Buffer.from(whole));
  }
});

test('shardTensors: sizes after conversion, a tensor over the size in its own shard, sizes as the Hub writes them', async () => {
  const file = await model();
  const tensors = editTensors(file, { keep: 'layers.*' });
  const split = shardTensors(tensors, { maxShardSize: '4KB' });
  assert.equal(split.indexName, 'model.safetensors.index.json');
  assert.equal(split.totalSize, 4107 * 4);
  // layers.5 (8000 bytes) is over 4000: a shard of its own, listed before the one that was filling.
  const own = split.shards.find((s) => s.tensors.has('layers.5.weight'));
  assert.equal(own.tensors.size, 1);
  assert.ok(split.shards.every((s) => s.dataBytes <= 4000 || s === own));
  const index = JSON.parse(split.index);
  assert.equal(index.metadata.total_size, split.totalSize);
  assert.equal(Object.keys(index.weight_map).length, 12);
  // Converted to F16, the same tensors take half the bytes.
  assert.equal(
    shardTensors(editTensors(file, { keep: 'layers.*', convert: 'F16' }), { maxShardSize: '4KB' }).totalSize,
    4107 * 2,
  );
  for (const bad of [0, -1, 1.5, '5 parsecs', 'GB', null]) {
    assert.throws(
      () => shardTensors(tensors, { maxShardSize: bad }),
      (e) => e instanceof SafeTensorsError && e.kind === 'InvalidArgument',
      String(bad),
    );
  }
  assert.equal(shardTensors(tensors, { maxShardSize: '1GiB' }).shards.length, 1);
  assert.equal(shardTensors(new Map(), { maxShardSize: 10 }).shards[0].name, 'model.safetensors');
});

test('writeShards: a failure at a later shard leaves no shard, no index and no temporary file behind', async () => {
  // The third shard's tensor is a Blob whose bytes ran short: SourceChanged while it is written.
  class ShortBlob extends Blob {
    slice(start, end) {
      return super.slice(start, Math.max(start, end - 1));
    }
  }
  const tensors = {
    a: { dtype: 'U8', shape: [100], data: new Uint8Array(100) },
    b: { dtype: 'U8', shape: [100], data: new Uint8Array(100) },
    c: { dtype: 'U8', shape: [100], data: new ShortBlob([new Uint8Array(100)]) },
  };
  const dir = join(root, 'fails-late');
  await assert.rejects(
    writeShards(dir, tensors, null, { maxShardSize: 150 }),
    (e) => e instanceof SafeTensorsError && e.kind === 'SourceChanged',
  );
  assert.deepEqual(readdirSync(dir), []);
  // An abort once the first shard is written: nothing either.
  const controller = new AbortController();
  const ok = { ...tensors, c: { dtype: 'U8', shape: [100], data: new Uint8Array(100) } };
  const onProgress = (_done, _total, shard) => shard.includes('00002') && controller.abort();
  await assert.rejects(
    writeShards(dir, ok, null, { maxShardSize: 150, signal: controller.signal, onProgress }),
    (e) => e.name === 'AbortError',
  );
  assert.deepEqual(readdirSync(dir), []);
  // And without a failure: every shard and the index.
  const { shards, index } = await writeShards(dir, ok, null, { maxShardSize: 150 });
  assert.deepEqual(readdirSync(dir).sort(), [...shards, index].sort());
});
