// openSharded: an index plus its shards (Files or URLs), one namespace,
// and the index checked against the shard headers.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSharded, ShardedModel, SafeTensorsError } from 'safetensors-nano';
import { tensorFile } from '../lib/format.js';
import { scratch } from '../lib/env.js';
import { startServer } from '../lib/server.js';

const dir = scratch('stn-shards-');
const f32 = (...v) => new Float32Array(v);
const shard1 = tensorFile(
  [
    ['embed.weight', 'F32', [2, 2], f32(1, 2, 3, 4)],
    ['layers.0.w', 'F16', [2], new Uint16Array([0x3c00, 0xc000])],
  ],
  { metadata: { format: 'pt' } },
);
const shard2 = tensorFile(
  [
    ['layers.1.w', 'F16', [2], new Uint16Array([0x4200, 0x0000])],
    ['head.bias', 'F32', [1], f32(0.5)],
  ],
  { metadata: { format: 'pt' } },
);
const names = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
const index = {
  metadata: { total_size: 16 + 4 + 4 + 4 },
  weight_map: {
    'embed.weight': names[0],
    'layers.0.w': names[0],
    'layers.1.w': names[1],
    'head.bias': names[1],
  },
};
mkdirSync(join(dir, 'repo'));
writeFileSync(join(dir, 'repo', names[0]), shard1);
writeFileSync(join(dir, 'repo', names[1]), shard2);
writeFileSync(join(dir, 'repo', 'model.safetensors.index.json'), JSON.stringify(index));

const files = () => [new File([shard2], names[1]), new File([shard1], names[0])];
const indexFile = (obj = index) => new File([JSON.stringify(obj)], 'model.safetensors.index.json');

function check(model) {
  assert.ok(model instanceof ShardedModel);
  assert.deepEqual(model.names(), ['embed.weight', 'layers.0.w', 'layers.1.w', 'head.bias']);
  assert.deepEqual(
    model.shards.map((s) => s.name),
    names,
  );
  assert.deepEqual(model.metadata(), { total_size: 28 });
  assert.deepEqual(model.parameterCount(), { total: 9, byDtype: { F32: 5, F16: 4 } });
  assert.equal(model.tensor('missing'), undefined);
  assert.deepEqual(
    model.tensors().map((t) => t.name),
    model.names(),
  );
}

test('openSharded with an index File and shard Files', async () => {
  const model = await openSharded(indexFile(), files());
  check(model);
  assert.deepEqual([...(await model.tensor('layers.1.w').readFloat32())], [3, 0]);
  assert.deepEqual([...(await model.tensor('embed.weight').readFloat32())], [1, 2, 3, 4]);
  assert.equal(model.shards[1].file.tensor('head.bias').name, 'head.bias');
  assert.ok(model.bytesRead > 0);
});

test('model.tensor gives one object a name, the one tensors() lists, also once the index is changed', async () => {
  const idx = structuredClone(index);
  const model = await openSharded(idx, files());
  const t = model.tensor('head.bias');
  assert.equal(model.tensor('head.bias'), t);
  assert.equal(
    model.tensors().find((x) => x.name === 'head.bias'),
    t,
  );
  // The index lists each tensor's shard; changed after the open, it does
  // not change what the model holds.
  idx.weight_map['head.bias'] = names[0];
  delete idx.weight_map['layers.0.w'];
  idx.weight_map.ghost = names[1];
  assert.equal(model.tensor('head.bias'), t);
  assert.deepEqual([...(await model.tensor('layers.0.w').readFloat32())], [1, -2]);
  assert.equal(model.tensor('ghost'), undefined);
  assert.equal(model.tensor('constructor'), undefined);
  assert.deepEqual(model.names(), ['embed.weight', 'layers.0.w', 'layers.1.w', 'head.bias']);
});

test('openSharded takes the index as an object or as JSON text', async () => {
  check(await openSharded(index, files()));
  check(await openSharded(JSON.stringify(index), files()));
});

let server;
before(async () => {
  server = await startServer({ root: dir });
});
after(() => server?.close());

test('openSharded with a URL index fetches the shards from beside it', async () => {
  const model = await openSharded(`${server.url}/repo/model.safetensors.index.json`);
  check(model);
  assert.deepEqual([...(await model.tensor('head.bias').readFloat32())], [0.5]);
});

test('openSharded with shard URLs', async () => {
  const model = await openSharded(
    index,
    names.map((n) => `${server.url}/repo/${n}`),
  );
  check(model);
});

async function rejects(p, kind, tensor) {
  await assert.rejects(p, (e) => {
    assert.ok(e instanceof SafeTensorsError, String(e));
    assert.equal(e.kind, kind, e.message);
    if (tensor !== undefined) assert.equal(e.tensor, tensor);
    return true;
  });
}

test('the index must agree with the shard headers', async () => {
  const wm = (patch) => ({ ...index, weight_map: { ...index.weight_map, ...patch } });
  // A tensor the index puts in the wrong shard.
  await rejects(openSharded(wm({ 'head.bias': names[0] }), files()), 'IndexMismatch', 'head.bias');
  // A tensor the index lists that no shard has.
  await rejects(openSharded(wm({ ghost: names[1] }), files()), 'IndexMismatch', 'ghost');
  // A shard tensor missing from the index.
  const partial = { ...index, weight_map: { ...index.weight_map } };
  delete partial.weight_map['layers.0.w'];
  await rejects(openSharded(partial, files()), 'IndexMismatch', 'layers.0.w');
  // total_size that disagrees with the shards.
  await rejects(openSharded({ ...index, metadata: { total_size: 27 } }, files()), 'IndexMismatch');
  // Shards missing, extra, or a tensor in two shards.
  await rejects(openSharded(index, files().slice(0, 1)), 'ShardMissing');
  await rejects(openSharded(index, [...files(), new File([shard1], 'other.safetensors')]), 'IndexMismatch');
  const dup = tensorFile([
    ['head.bias', 'F32', [1], f32(1)],
    ['layers.1.w', 'F16', [2], new Uint16Array(2)],
  ]);
  await rejects(
    openSharded(index, [new File([shard1], names[0]), new File([dup], names[0].replace('00001', 'x'))]),
    'ShardMissing',
  );
  const twice = tensorFile([
    ['embed.weight', 'F32', [2, 2], f32(1, 2, 3, 4)],
    ['head.bias', 'F32', [1], f32(0.5)],
    ['layers.1.w', 'F16', [2], new Uint16Array(2)],
  ]);
  await rejects(
    openSharded(index, [new File([shard1], names[0]), new File([twice], names[1])]),
    'DuplicateTensorName',
    'embed.weight',
  );
  // A malformed index, and a malformed shard (named in the message).
  await rejects(openSharded('{"weight_map": 3}', files()), 'IndexInvalid');
  await rejects(openSharded(new File(['{not json'], 'i.json'), files()), 'IndexInvalid');
  const broken = new File([shard1.subarray(0, shard1.length - 1)], names[0]);
  await assert.rejects(
    openSharded(index, [broken, files()[0]]),
    (e) => e.kind === 'MetadataIncompleteBuffer' && e.message.startsWith(names[0]),
  );
  await rejects(openSharded(`${server.url}/repo/nothing.json`), 'Http');
});
