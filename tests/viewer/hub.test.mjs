// The web viewer opening models from the Hub stand-in (tests/hub/server.mjs) in headless
// Chromium: ?hub=org/name lists a sharded model whose shards redirect to the CDN (another
// origin), a tensor's statistics are read from the pinned signed URL, and a gated repository
// opens once a token is typed in the form. The token stays in memory: not in the address, not in
// storage, never sent to the CDN.
//
// Needs: dist/demo (scripts/build-demo.sh; built here when missing), Debian's chromium at
// /usr/bin/chromium (or $CHROMIUM), playwright-core from tests/js/node_modules.
//
//   node --test tests/viewer/hub.test.mjs

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { startServer } from '../../scripts/serve.mjs';
import { chromiumOptions, playwright, unavailable } from './chromium.mjs';
import { GATED_TOKEN, startHubStandIn } from '../js/lib/hub-repos.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const DEMO = join(ROOT, 'dist/demo');

const missing = unavailable("the viewer's Hub tests");

describe('web viewer: models from the Hub', { skip: missing ?? false, timeout: 120000 }, () => {
  let server;
  let hub;
  let browser;

  before(async () => {
    if (!existsSync(join(DEMO, 'index.html')) || !existsSync(join(DEMO, 'hub-form.js'))) {
      execFileSync('bash', [join(ROOT, 'scripts/build-demo.sh')], { stdio: 'inherit', cwd: ROOT });
    }
    hub = await startHubStandIn();
    server = await startServer({ root: DEMO, port: 0 });
    browser = await playwright.chromium.launch(chromiumOptions());
  });

  after(async () => {
    await browser?.close();
    await Promise.all([server?.close(), hub?.close()]);
  });

  async function newPage(path) {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.errors = errors;
    await page.goto(new URL(path, server.url).href);
    return page;
  }

  const ready = (page) =>
    page.waitForFunction(() => document.body.dataset.state === 'ready' && document.body.dataset.openMs, null, {
      timeout: 20000,
    });
  const cardValue = (page, id) => page.locator(`[data-testid="${id}"]`).getAttribute('data-value').then(Number);

  test('?hub=org/name lists a sharded model through the CDN redirect; a tensor reads from the pinned URL', async () => {
    const page = await newPage(`/?hub=org/sharded&endpoint=${encodeURIComponent(hub.endpoint)}`);
    await ready(page);
    assert.equal(await cardValue(page, 'tensor-count'), 4);
    assert.equal(await cardValue(page, 'files'), 2);
    assert.equal(await page.textContent('#model-name'), 'org/sharded');
    assert.equal(await page.inputValue('#hub-repo'), 'org/sharded');
    assert.match(
      await page.textContent('#hub-endpoint'),
      /127\.0\.0\.1/,
      'the page says which Hub a token would go to',
    );
    const shardUrls = await page.evaluate(() => window.viewer.a.shards.map((s) => s.src.url));
    assert.ok(
      shardUrls.every((u) => u.startsWith(`${hub.cdn}/repos/org/sharded/main/`)),
      String(shardUrls),
    );
    const query = new URL(page.url()).searchParams;
    assert.equal(query.get('hub'), 'org/sharded');
    assert.equal(query.get('endpoint'), hub.endpoint);
    for (const shard of ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']) {
      assert.ok(
        hub.requests.some(
          (r) => r.origin === 'endpoint' && r.status === 302 && r.path === `/org/sharded/resolve/main/${shard}`,
        ),
      );
    }
    // The statistics worker reads layers.1.w (values 6, 7) from the shard's signed URL.
    const before = hub.requests.length;
    await page.locator('body').press('/');
    await page.keyboard.type('layers.1.w');
    await page.waitForTimeout(200);
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#detail[data-tensor="layers.1.w"] [data-testid="stats"]', { timeout: 20000 });
    const text = await page.textContent('#detail [data-testid="stats"]');
    assert.match(text, /6\.5/, 'the mean of 6 and 7');
    const reads = hub.requests.slice(before);
    assert.ok(reads.length > 0 && reads.every((r) => r.origin === 'cdn'), 'the read went to the pinned CDN URL');
    assert.deepEqual(page.errors, []);
  });

  test('a gated repository: refused without a token, opened with one typed in the form, which is kept nowhere', async () => {
    const page = await newPage(`/?hub=org/gated&endpoint=${encodeURIComponent(hub.endpoint)}`);
    await page.waitForSelector('#error:not([hidden])', { timeout: 20000 });
    assert.equal(await page.getAttribute('#error', 'data-kind'), 'HubUnauthorized');
    assert.match(await page.textContent('#error'), /gated or private.*pass \{ token \}/);
    const before = hub.requests.length;
    await page.fill('#hub-token', GATED_TOKEN);
    await page.click('#hub-form button[type=submit]');
    await ready(page);
    assert.equal(await cardValue(page, 'tensor-count'), 1);
    assert.equal(await page.textContent('#model-name'), 'org/gated');
    const seen = hub.requests.slice(before);
    assert.ok(seen.some((r) => r.origin === 'endpoint' && r.headers.authorization === `Bearer ${GATED_TOKEN}`));
    assert.ok(seen.some((r) => r.origin === 'cdn'));
    for (const r of hub.requests.filter((q) => q.origin === 'cdn'))
      assert.equal(r.headers.authorization, undefined, `no token to the CDN: ${r.path}`);
    const kept = await page.evaluate(() => ({
      href: location.href,
      local: JSON.stringify({ ...localStorage }),
      session: JSON.stringify({ ...sessionStorage }),
      cookie: document.cookie,
      history: history.length,
    }));
    assert.ok(
      !kept.href.includes(GATED_TOKEN) &&
        !kept.local.includes(GATED_TOKEN) &&
        !kept.session.includes(GATED_TOKEN) &&
        !kept.cookie.includes(GATED_TOKEN),
      JSON.stringify(kept),
    );
    assert.equal(new URL(kept.href).searchParams.get('hub'), 'org/gated');
    // Nothing from the page's own origin carried it either.
    assert.deepEqual(page.errors, []);
  });
});
