// The Chromium the browser tests drive: one place for its path, its flags
// and the wait for a test page to have loaded the package.

import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

// Headless, and quiet: no background traffic that a request count could see.
const FLAGS = ['--headless', '--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * Launches Chromium, opens `url` (a page that sets its title to 'ready' once
 * the package is loaded) and waits for it. Uncaught page errors are pushed to
 * `errors` for the test's after() to check; `onRequest(url)` sees every
 * request. `webgpu` turns on WebGPU (SwiftShader here) instead of no GPU;
 * `args` adds flags. Returns `{ browser, page }`.
 */
export async function openPage(url, { errors, onRequest, webgpu = false, args = [] } = {}) {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/setup.sh web`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [...FLAGS, webgpu ? '--enable-unsafe-webgpu' : '--disable-gpu', ...args],
  });
  const page = await browser.newPage();
  if (errors) page.on('pageerror', (e) => errors.push(String(e)));
  if (onRequest) page.on('request', (r) => onRequest(r.url()));
  await page.goto(url);
  await page.waitForFunction(() => document.title === 'ready', null, { timeout: 20000 });
  return { browser, page };
}
