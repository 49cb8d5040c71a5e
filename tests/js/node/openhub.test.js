// openHub against the local Hub stand-in (tests/hub/server.mjs): an API
// endpoint that redirects weights to a CDN on another origin with signed
// URLs, answers 404s and gated repositories as the Hub does.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openHub, ShardedModel, SafeTensorsError } from 'safetensors-nano';
import { tensorFile } from '../lib/format.js';
import { GATED_TOKEN, startHubStandIn } from '../lib/hub-repos.js';

let hub;
before(async () => {
  hub = await startHubStandIn();
});
after(() => hub.close());

const values = async (model, name) => [...(await model.tensor(name).readFloat32())];
const kindOf = async (promise) => {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof SafeTensorsError, `not a SafeTensorsError: ${e}`);
    return e;
  }
  assert.fail('expected a rejection');
};
const since = (n) => hub.requests.slice(n);

test('a sharded model opens by name: index from the endpoint, shards through the CDN redirect', async () => {
  const n = hub.requests.length;
  const model = await openHub('org/sharded', { endpoint: hub.endpoint });
  assert.ok(model instanceof ShardedModel);
  assert.deepEqual(
    model.shards.map((s) => s.name),
    ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'],
  );
  assert.deepEqual(model.names(), ['embed.weight', 'layers.0.w', 'layers.1.w', 'lm_head.weight']);
  assert.deepEqual(await values(model, 'layers.1.w'), [6, 7]);
  assert.deepEqual(model.metadata(), { total_size: 36 });
  const seen = since(n);
  const index = seen.find((r) => r.path.endsWith('/model.safetensors.index.json'));
  assert.equal(index.origin, 'endpoint');
  assert.equal(index.status, 200, 'the index is a regular file, served directly');
  for (const shard of ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']) {
    const resolves = seen.filter((r) => r.origin === 'endpoint' && r.path === `/org/sharded/resolve/main/${shard}`);
    assert.equal(resolves.length, 1, `${shard}: resolved once, then pinned`);
    assert.equal(resolves[0].status, 302);
    const cdn = seen.filter((r) => r.origin === 'cdn' && r.path.startsWith(`/repos/org/sharded/main/${shard}?`));
    assert.ok(
      cdn.length >= 1 && cdn.every((r) => r.status === 206 && /Signature=/.test(r.path)),
      `${shard}: read from the signed URL by ranges`,
    );
  }
});

test('a single file becomes a model of one shard', async () => {
  const model = await openHub('org/single', { endpoint: `${hub.endpoint}/` });
  assert.deepEqual(
    model.shards.map((s) => s.name),
    ['model.safetensors'],
  );
  assert.deepEqual(model.names(), ['w']);
  assert.deepEqual(model.index.weight_map, { w: 'model.safetensors' });
  assert.deepEqual(await values(model, 'w'), [1, 2, 3]);
  assert.equal(model.parameterCount().total, 3);
});

test("file names a file or an index in a subfolder; the index's shards come from its folder", async () => {
  const unet = await openHub('org/diffusion', {
    endpoint: hub.endpoint,
    file: 'unet/diffusion_pytorch_model.safetensors',
  });
  assert.deepEqual(await values(unet, 'conv_in.weight'), [7, 8]);
  const n = hub.requests.length;
  const encoder = await openHub('org/diffusion', {
    endpoint: hub.endpoint,
    file: 'text_encoder/model.safetensors.index.json',
  });
  assert.deepEqual(await values(encoder, 'lm_head.weight'), [58]);
  assert.ok(
    since(n).some((r) => r.path === '/org/diffusion/resolve/main/text_encoder/model-00002-of-00002.safetensors'),
  );
});

test('revision: a branch such as refs/pr/1 is one encoded segment', async () => {
  const n = hub.requests.length;
  const model = await openHub('org/sharded', { endpoint: hub.endpoint, revision: 'refs/pr/1' });
  assert.deepEqual(await values(model, 'embed.weight'), [100, 101, 102, 103]);
  assert.ok(since(n).some((r) => r.path === '/org/sharded/resolve/refs%2Fpr%2F1/model.safetensors.index.json'));
  const missing = await kindOf(openHub('org/sharded', { endpoint: hub.endpoint, revision: 'v9' }));
  assert.equal(missing.kind, 'HubNotFound');
  assert.match(missing.message, /org\/sharded has no revision "v9".*RevisionNotFound/);
});

test('a 404 names the files tried; a repository that does not exist says so', async () => {
  const none = await kindOf(openHub('org/docs', { endpoint: hub.endpoint }));
  assert.equal(none.kind, 'HubNotFound');
  assert.match(
    none.message,
    /org\/docs at revision "main" on http:\/\/127\.0\.0\.1:\d+ has none of the files tried: model\.safetensors\.index\.json, model\.safetensors \(the Hub answered 404 EntryNotFound/,
  );
  assert.match(none.message, /pass \{ file \}/);
  const named = await kindOf(openHub('org/single', { endpoint: hub.endpoint, file: 'unet/x.safetensors' }));
  assert.match(named.message, /has none of the files tried: unet\/x\.safetensors \(/);
  const shard = await kindOf(openHub('org/broken', { endpoint: hub.endpoint }));
  assert.equal(shard.kind, 'HubNotFound');
  assert.match(
    shard.message,
    /has no model-00002-of-00002\.safetensors, which its index model\.safetensors\.index\.json names/,
  );
  const repo = await kindOf(openHub('org/nothing', { endpoint: hub.endpoint }));
  assert.equal(repo.kind, 'HubNotFound');
  assert.match(repo.message, /org\/nothing is not a repository on .*RepoNotFound/);
});

test('a gated repository: 401 without a token is HubUnauthorized; a wrong token too; the right one opens it', async () => {
  const anonymous = await kindOf(openHub('org/gated', { endpoint: hub.endpoint }));
  assert.equal(anonymous.kind, 'HubUnauthorized');
  assert.match(
    anonymous.message,
    /org\/gated .* is gated or private \(the Hub answered 401 GatedRepo.*\): pass \{ token \}/,
  );
  const wrong = await kindOf(openHub('org/gated', { endpoint: hub.endpoint, token: 'hf_wrong' }));
  assert.equal(wrong.kind, 'HubUnauthorized');
  assert.match(wrong.message, /403 GatedRepo.*the token given has no access/);
  const n = hub.requests.length;
  const model = await openHub('org/gated', { endpoint: hub.endpoint, token: GATED_TOKEN });
  assert.deepEqual(await values(model, 'secret'), [42]);
  const seen = since(n);
  assert.ok(
    seen.some(
      (r) => r.origin === 'endpoint' && r.headers.authorization === `Bearer ${GATED_TOKEN}` && r.status === 302,
    ),
  );
  assert.ok(seen.some((r) => r.origin === 'cdn' && r.status === 206));
});

test('the token never reaches the CDN, not even given as a header', async () => {
  const n = hub.requests.length;
  const model = await openHub('org/gated', {
    endpoint: hub.endpoint,
    token: GATED_TOKEN,
    headers: { Authorization: 'Bearer hf_other', 'X-Trace': '1' },
  });
  await model.tensor('secret').read();
  const seen = since(n);
  const cdn = seen.filter((r) => r.origin === 'cdn');
  assert.ok(cdn.length >= 2, 'the open and the read went to the CDN');
  for (const r of cdn) {
    assert.equal(r.headers.authorization, undefined, `no Authorization to ${r.path}`);
    assert.equal(r.headers['x-trace'], '1', 'other headers are kept');
  }
  assert.ok(
    seen.filter((r) => r.origin === 'endpoint').every((r) => r.headers.authorization === `Bearer ${GATED_TOKEN}`),
  );
});

test('the signed URL is pinned: a shard replaced after the open is SourceChanged', async () => {
  const model = await openHub('org/sharded', { endpoint: hub.endpoint });
  const n = hub.requests.length;
  assert.deepEqual(await values(model, 'embed.weight'), [0, 1, 2, 3]);
  assert.ok(
    since(n).every((r) => r.origin === 'cdn'),
    'reads go to the pinned URL, not through the endpoint',
  );
  const file = join(hub.root, 'org', 'sharded', 'model-00001-of-00002.safetensors');
  writeFileSync(
    file,
    tensorFile([
      ['embed.weight', 'F32', [2, 2], new Float32Array([9, 9, 9, 9])],
      ['layers.0.w', 'F32', [2], new Float32Array([9, 9])],
    ]),
  );
  const e = await kindOf(model.tensor('layers.0.w').read());
  assert.equal(e.kind, 'SourceChanged');
  assert.match(e.message, /changed since it was opened/);
});

test('bad arguments are TypeErrors before any request', async () => {
  const n = hub.requests.length;
  await assert.rejects(openHub('not a repo', { endpoint: hub.endpoint }), TypeError);
  await assert.rejects(openHub('org/../x', { endpoint: hub.endpoint }), TypeError);
  await assert.rejects(openHub('org/single', { endpoint: hub.endpoint, file: '../x' }), TypeError);
  await assert.rejects(openHub('org/single', { endpoint: 'ftp://x' }), TypeError);
  await assert.rejects(openHub('org/single', { endpoint: hub.endpoint, token: '' }), TypeError);
  assert.equal(hub.requests.length, n);
});
