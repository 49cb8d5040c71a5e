// openHub in each browser engine from a page on a third origin: the Hub stand-in's endpoint and
// CDN are two other origins, so the index, the redirect and every range go through CORS, with
// the browser's own fetch following the redirect (a page cannot see it), and the token must
// still never reach the CDN.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../lib/server.js';
import { describeEachEngine } from '../lib/engines.js';
import { GATED_TOKEN, startHubStandIn } from '../lib/hub-repos.js';

const project = join(dirname(fileURLToPath(import.meta.url)), '..');
let site;
let hub;

before(async () => {
  hub = await startHubStandIn();
  site = await startServer({ root: project, range: true });
});

after(() => Promise.all([site?.close(), hub?.close()]));

describeEachEngine(
  () => `${site.url}/browser/page.html`,
  (session) => {
    test('openHub lists a sharded model and a gated one through CORS and the CDN redirect', async () => {
      const from = hub.requests.length;
      const r = await session.page.evaluate(
        async ({ endpoint, token }) => {
          const { openHub, SafeTensorsError } = window.stn;
          const model = await openHub('org/sharded', { endpoint });
          const gated = await openHub('org/gated', { endpoint, token });
          let refused = null;
          try {
            await openHub('org/gated', { endpoint });
          } catch (e) {
            refused = e instanceof SafeTensorsError ? e.kind : String(e);
          }
          return {
            names: model.names(),
            values: [...(await model.tensor('layers.1.w').readFloat32())],
            secret: [...(await gated.tensor('secret').readFloat32())],
            urls: [...model.shards, ...gated.shards].map((s) => s.url),
            refused,
          };
        },
        { endpoint: hub.endpoint, token: GATED_TOKEN },
      );
      assert.deepEqual(r.names, ['embed.weight', 'layers.0.w', 'layers.1.w', 'lm_head.weight']);
      assert.deepEqual(r.values, [6, 7]);
      assert.deepEqual(r.secret, [42]);
      assert.equal(r.refused, 'HubUnauthorized');
      assert.ok(
        r.urls.every((u) => u.startsWith(`${hub.cdn}/repos/`)),
        `each shard pinned to its signed CDN URL: ${r.urls}`,
      );
      const log = hub.requests.slice(from);
      const cdn = log.filter((q) => q.origin === 'cdn' && q.method === 'GET');
      assert.ok(cdn.length >= 4);
      for (const q of log.filter((x) => x.origin === 'cdn')) {
        assert.equal(q.headers.authorization, undefined, `no token to the CDN: ${q.method} ${q.path}`);
        assert.equal(
          q.headers.origin === undefined || /^(null|http:\/\/127\.0\.0\.1:\d+)$/.test(q.headers.origin),
          true,
        );
      }
      assert.ok(
        log.some(
          (q) => q.origin === 'endpoint' && q.headers.authorization === `Bearer ${GATED_TOKEN}` && q.status === 302,
        ),
      );
      // Reads after the open go to the pinned URL, not through the endpoint again.
      const resolves = log.filter(
        (q) =>
          q.origin === 'endpoint' &&
          q.method === 'GET' &&
          q.path === '/org/sharded/resolve/main/model-00002-of-00002.safetensors',
      );
      assert.equal(resolves.length, 1);
    });
  },
);
