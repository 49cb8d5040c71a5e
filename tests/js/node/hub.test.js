// openSharded on a Hub-scale model: a DeepSeek-V3-like index (163 shards,
// 91,990 tensors, most headers over 64 KiB) served over HTTP with a delay on
// every answer. Each shard's first request is sized from the index, so each
// shard takes one request and the bytes fetched stay close to what must be
// read (the open time is the bench's: make bench-wasm).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openSharded } from 'safetensors-nano';
import { scratch } from '../lib/env.js';
import { startServer } from '../lib/server.js';
import { deepSeekLike, minimumBytes, virtualFiles } from '../lib/hub.js';

const model = deepSeekLike();
let server;

// The same index with its weight_map sorted by name, as transformers
// writes it: each shard's tensors in another order than its header's.
const sorted = new TextEncoder().encode(
  JSON.stringify({
    ...model.index,
    weight_map: Object.fromEntries(Object.entries(model.index.weight_map).sort(([a], [b]) => (a < b ? -1 : 1))),
  }),
);

before(async () => {
  const { files } = virtualFiles(model);
  files.set('/hub/sorted.index.json', {
    size: BigInt(sorted.length),
    read: (start, end) => sorted.subarray(Number(start), Number(end)),
  });
  server = await startServer({ root: scratch('stn-hub-'), virtual: files, delay: 30 });
});
after(() => server.close());

const fetched = (requests) => requests.reduce((n, r) => n + r.bytes, 0);

test('a 163-shard DeepSeek-V3-like model opens with one request a shard', async () => {
  assert.equal(model.shards.length, 163);
  assert.equal(model.tensors, 91_990);
  assert.ok(model.shards.filter((s) => s.header.length > 65536).length > 100, 'most headers are over 64 KiB');
  server.requests.length = 0;
  server.stats.maxInFlight = 0;
  const m = await openSharded(`${server.url}/hub/model.safetensors.index.json`);
  assert.equal(m.names().length, 91_990);
  const t = m.tensor('model.layers.60.mlp.experts.255.down_proj.weight_scale_inv');
  assert.equal(t.dtype, 'F32');
  assert.deepEqual(t.shape, [56, 16]);
  const requests = server.requests.length;
  assert.ok(requests <= model.shards.length + 2, `${requests} requests for ${model.shards.length} shards`);
  const bytes = fetched(server.requests);
  const least = minimumBytes(model);
  assert.ok(bytes >= least && bytes <= 1.1 * least, `${bytes} bytes fetched, ${least} needed`);
  assert.ok(server.stats.maxInFlight <= 8, 'concurrency stays bounded');
});

test('an explicit prefetch is used as given', async () => {
  server.requests.length = 0;
  const m = await openSharded(`${server.url}/hub/model.safetensors.index.json`, [], { prefetch: 65536 });
  assert.equal(m.names().length, 91_990);
  // A first range of 64 KiB leaves the longer headers a second request.
  const long = model.shards.filter((s) => s.header.length > 65536).length;
  assert.equal(server.requests.length, 1 + model.shards.length + long);
});

test('an index sorted by name opens the same model', async () => {
  server.requests.length = 0;
  const m = await openSharded(`${server.url}/hub/sorted.index.json`);
  assert.equal(m.names().length, 91_990);
  assert.equal(m.names()[0], 'model.embed_tokens.weight');
  assert.equal(m.tensor('model.layers.60.mlp.experts.255.down_proj.weight_scale_inv').dtype, 'F32');
  assert.equal(server.requests.length, 1 + model.shards.length);
});
