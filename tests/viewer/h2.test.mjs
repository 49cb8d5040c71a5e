// The web viewer opens a sharded model by ?url= from a server that speaks HTTP/2 only (over TLS,
// with a throwaway certificate that Chromium trusts by its key's hash, tests/js/lib/tls.js): the
// path that make bench-demo times against its HTTP/2 goal, checked here for correctness only.
//
// Needs: dist/demo (scripts/build-demo.sh; built here when missing), Debian's chromium at
// /usr/bin/chromium (or $CHROMIUM), openssl, playwright-core from tests/js/node_modules.
//
//   node --test tests/viewer/h2.test.mjs

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import { startServer } from '../../scripts/serve.mjs';
import { chromiumOptions, playwright, unavailable } from './chromium.mjs';
import { testCertificate } from '../js/lib/tls.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const DEMO = join(ROOT, 'dist/demo');

const missing = unavailable("the viewer's HTTP/2 test");

describe('web viewer over HTTP/2', { skip: missing ?? false, timeout: 60000 }, () => {
  let demo;
  let hub;
  let browser;
  let info;
  const ask = (m) =>
    new Promise((res) => {
      hub.once('message', res);
      hub.postMessage(m);
    });

  before(async () => {
    if (!existsSync(join(DEMO, 'index.html')) || !existsSync(join(DEMO, 'vendor/safetensors-nano/node.js'))) {
      execFileSync('bash', [join(ROOT, 'scripts/build-demo.sh')], { stdio: 'inherit', cwd: ROOT });
    }
    const certificate = testCertificate();
    // A small model of the DeepSeek layout (tests/js/lib/hub.js), in a worker thread.
    hub = new Worker(new URL('../js/lib/hub-server.js', import.meta.url), {
      workerData: { tensors: 3000, shards: 12, tls: { key: certificate.key, cert: certificate.cert } },
    });
    info = await new Promise((res, rej) => {
      hub.once('message', res);
      hub.once('error', rej);
    });
    demo = await startServer({ root: DEMO, port: 0 });
    browser = await playwright.chromium.launch(
      chromiumOptions([`--ignore-certificate-errors-spki-list=${certificate.spki}`]),
    );
  });

  after(async () => {
    await browser?.close();
    await demo?.close();
    await hub?.terminate();
  });

  test('?url= of a sharded index lists every tensor, all requests over HTTP/2', async () => {
    assert.match(info.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    await ask('reset');
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${demo.url}?url=${encodeURIComponent(`${info.url}/hub/model.safetensors.index.json`)}`);
    await page.waitForFunction(
      () =>
        ['ready', 'error'].includes(document.body.dataset.state) &&
        document.querySelector('[data-testid="integrity"]')?.hasAttribute('data-value'),
      null,
      {
        polling: 100,
        timeout: 30000,
      },
    );
    const card = (id) => page.locator(`[data-testid="${id}"]`).getAttribute('data-value').then(Number);
    assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready');
    assert.equal(await card('tensor-count'), info.tensors);
    assert.equal(await card('files'), info.shards);
    assert.equal(await page.locator('#count').textContent(), `${info.tensors.toLocaleString('en-US')} tensors`);
    // The index agrees with every shard header read.
    assert.equal(await card('integrity'), 0);
    const { requests, versions } = await ask('stats');
    assert.deepEqual(versions, ['2.0']);
    assert.ok(requests <= info.shards + 1, `${requests} requests for ${info.shards} shards and the index`);
    assert.deepEqual(errors, []);
  });
});
