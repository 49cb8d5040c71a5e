// The three browser engines the tests run in, behind one page API, so that a test body is
// written once and runs in each: Chromium (Debian's chromium), Firefox ESR (firefox-esr) and
// WebKitGTK (webkit2gtk-driver's WebKitWebDriver and MiniBrowser), all from Debian packages
// (scripts/setup.sh web browsers).
//
// One npm client per engine, each one that drives the stock browser with no download of its own:
// - Chromium: playwright-core over CDP, as before (its CDP session backs the Chromium-only
//   memory probes of webgpu.test.js).
// - Firefox: puppeteer-core over WebDriver BiDi, which Firefox speaks itself: no geckodriver.
//   (Playwright drives only its own patched Firefox and WebKit builds, which cannot be fetched here.)
// - WebKit: selenium-webdriver over classic WebDriver to WebKitWebDriver: the W3C protocol's
//   reference client, with 4 dependencies (webdriverio brings dozens). WebKitGTK 2.50's
//   MiniBrowser has no headless mode, so it draws on an Xvfb display of its own.
//
// Set ENGINES=firefox (or a comma-separated list) to run the tests in fewer engines.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { after, before, describe } from 'node:test';

import { freePort } from './ports.js';

/** Every engine the tests know, in the order they run. */
export const ENGINES = ['chromium', 'firefox', 'webkit'];

/** Where each engine's browser (or driver) is. */
export const BINARIES = {
  chromium: process.env.CHROMIUM ?? '/usr/bin/chromium',
  firefox: process.env.FIREFOX ?? '/usr/bin/firefox-esr',
  webkit: process.env.WEBKIT_WEBDRIVER ?? '/usr/bin/WebKitWebDriver',
};
const MINIBROWSER = process.env.MINIBROWSER ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';

/** The engines to test: $ENGINES (comma-separated) or all three. */
export function engines() {
  const list = (process.env.ENGINES ?? ENGINES.join(','))
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const e of list)
    if (!ENGINES.includes(e)) throw new Error(`ENGINES: unknown engine ${e} (${ENGINES.join(', ')})`);
  return list;
}

/** Why `engine` cannot run here (its browser is not installed), or null. */
export function missing(engine) {
  const need = engine === 'webkit' ? [BINARIES.webkit, MINIBROWSER] : [BINARIES[engine]];
  const absent = need.find((p) => !existsSync(p));
  return absent ? `${absent} is missing: run scripts/setup.sh ${engine === 'chromium' ? 'web' : 'browsers'}` : null;
}

/** Chromium's flags: headless, and quiet: no background traffic that a request count could see. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Starts `engine`. `webgpu` (Chromium only) turns on WebGPU (SwiftShader here) instead of no
 * GPU; `args` adds Chromium flags (other engines ignore them). Returns a Browser.
 */
export async function launch(engine, { webgpu = false, args = [] } = {}) {
  const why = missing(engine);
  if (why) throw new Error(why);
  if (engine === 'chromium') {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: BINARIES.chromium,
      args: [...CHROMIUM_FLAGS, webgpu ? '--enable-unsafe-webgpu' : '--disable-gpu', ...args],
    });
    return new Browser(engine, {
      newPage: async ({ width, height, initScript }) => {
        const context = await browser.newContext({ viewport: { width, height }, acceptDownloads: true });
        if (initScript) await context.addInitScript(initScript);
        const page = await context.newPage();
        const p = new PlaywrightPage(page);
        page.on('pageerror', (e) => p.errors.push(String(e)));
        return p;
      },
      close: () => browser.close(),
    });
  }
  if (engine === 'firefox') {
    const { default: puppeteer } = await import('puppeteer-core');
    const browser = await puppeteer.launch({ browser: 'firefox', executablePath: BINARIES.firefox, headless: true });
    return new Browser(engine, {
      newPage: async ({ width, height, initScript }) => {
        const page = await browser.newPage();
        await page.setViewport({ width, height });
        // (Uncaught errors from the page's own listeners: puppeteer's 'pageerror' also reports
        // Firefox's console messages about failed CORS requests, which a fault test provokes.)
        await page.evaluateOnNewDocument(LISTEN);
        if (initScript) await page.evaluateOnNewDocument(initScript);
        return new PuppeteerPage(page);
      },
      close: () => browser.close(),
    });
  }
  return launchWebKit();
}

/** A started browser: pages, then close(). */
class Browser {
  constructor(engine, impl) {
    this.engine = engine;
    this.impl = impl;
    this.pages = [];
  }

  /**
   * A new page (its own context where the engine has them) of the given size. `initScript`
   * runs before the page's own scripts on every load (Chromium and Firefox only: classic
   * WebDriver has no such hook).
   */
  async newPage({ width = 1280, height = 900, initScript } = {}) {
    const page = await this.impl.newPage({ width, height, initScript });
    page.engine = this.engine;
    this.pages.push(page);
    return page;
  }

  async close() {
    await this.impl.close();
  }
}

/**
 * Launches `engine`, opens `url` (a page that sets its title to 'ready' once the package is
 * loaded) and waits for it. Returns `{ browser, page }`; `page.errors` collects uncaught page
 * errors (`await page.pageErrors()` for the complete list).
 */
export async function openPage(engine, url, options = {}) {
  const browser = await launch(engine, options);
  try {
    const page = await browser.newPage();
    await page.goto(url);
    await page.waitForFunction(() => document.title === 'ready', null, { timeout: 20000 });
    return { browser, page };
  } catch (e) {
    await browser.close();
    throw e;
  }
}

/**
 * A suite per engine of $ENGINES (node:test's describe, named by the engine), each with its own
 * browser and one page at `url()` (a function: the servers start in the file's before()), opened
 * before the suite's tests and closed after them; an uncaught error of the page fails the suite.
 * `body(session, engine)` declares the tests, which reach the page as `session.page` (and the
 * browser as `session.browser`). `options` are openPage's; `beforeOpen()` runs just before the
 * page opens (a test may note where the servers' logs stand).
 */
export function describeEachEngine(url, body, { beforeOpen, ...options } = {}) {
  for (const engine of engines())
    describe(engine, () => {
      const session = { browser: null, page: null };
      before(async () => {
        beforeOpen?.();
        Object.assign(session, await openPage(engine, url(), options));
      });
      after(async () => {
        const errors = await session.page?.pageErrors();
        await session.browser?.close();
        assert.deepEqual(errors, []);
      });
      body(session, engine);
    });
}

// The page API every engine's page gives. Selectors are CSS; `fn` is a function run in the page
// with one JSON-like argument; values cross back as structured data.
class Page {
  constructor() {
    this.errors = [];
  }

  /** Uncaught errors of the page so far. */
  async pageErrors() {
    await this.collectErrors();
    return this.errors;
  }

  /** Moves the errors the page's listeners (LISTEN) kept into `errors`. */
  async collectErrors() {
    try {
      this.errors.push(...(await this.evaluate(() => (window.__pageErrors ? window.__pageErrors.splice(0) : []))));
    } catch {
      // no page yet
    }
  }

  /** Waits until `fn(arg)` is truthy in the page; returns its value. */
  async waitForFunction(fn, arg = null, { timeout = 20000 } = {}) {
    const t0 = Date.now();
    for (;;) {
      const v = await this.evaluate(fn, arg);
      if (v) return v;
      if (Date.now() - t0 > timeout) throw new Error(`${this.engine}: timed out after ${timeout} ms waiting for ${fn}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Waits for an element matching `selector`. */
  waitForSelector(selector, { timeout = 20000 } = {}) {
    return this.waitForFunction((s) => document.querySelector(s) !== null, selector, { timeout });
  }

  /** The text of the first element matching `selector` (null if none). */
  text(selector) {
    return this.evaluate((s) => document.querySelector(s)?.textContent ?? null, selector);
  }

  /** Chooses an option of a <select> by value, as the page sees a person's choice. */
  select(selector, value) {
    return this.evaluate(
      ({ selector, value }) => {
        const el = document.querySelector(selector);
        el.value = value;
        el.dispatchEvent(new Event('input', { bubbles: true }));
        el.dispatchEvent(new Event('change', { bubbles: true }));
      },
      { selector, value },
    );
  }

  /** Checks a checkbox or radio button by clicking it, unless it is checked. */
  async check(selector) {
    if (!(await this.evaluate((s) => document.querySelector(s).checked, selector))) await this.click(selector);
  }

  /**
   * From now on, files the page hands to the browser to download (an `<a download>` clicked,
   * over a blob: URL) are kept by the page instead of saved; `downloads()` returns them.
   * (Firefox and WebKit: neither WebDriver protocol reports a download's bytes. Chromium's
   * page saves its downloads for real.)
   */
  catchDownloads() {
    return this.evaluate(() => {
      window.__downloads = [];
      HTMLAnchorElement.prototype.click = function click() {
        if (!this.hasAttribute('download')) return HTMLElement.prototype.click.call(this);
        window.__downloads.push(
          fetch(this.href)
            .then((r) => r.arrayBuffer())
            .then((b) => ({ name: this.download, bytes: b })),
        );
      };
    });
  }

  /** The files the page downloaded since catchDownloads(): [{ name, bytes: Buffer }]. */
  async downloads() {
    const got = await this.evaluate(async () => {
      const all = await Promise.all(window.__downloads);
      // (Base64 crosses every protocol intact.)
      const b64 = (buf) => {
        const u = new Uint8Array(buf);
        let s = '';
        for (let i = 0; i < u.length; i += 0x8000) s += String.fromCharCode(...u.subarray(i, i + 0x8000));
        return btoa(s);
      };
      return all.map((d) => ({ name: d.name, bytes: b64(d.bytes) }));
    });
    return got.map((d) => ({ name: d.name, bytes: Buffer.from(d.bytes, 'base64') }));
  }
}

class PlaywrightPage extends Page {
  constructor(page) {
    super();
    this.page = page;
  }

  goto(url) {
    return this.page.goto(url);
  }

  evaluate(fn, arg = null) {
    return this.page.evaluate(fn, arg);
  }

  waitForFunction(fn, arg = null, { timeout = 20000 } = {}) {
    return this.page.waitForFunction(fn, arg, { timeout });
  }

  click(selector) {
    return this.page.click(selector);
  }

  fill(selector, text) {
    return this.page.fill(selector, text);
  }

  setInputFiles(selector, paths) {
    return this.page.setInputFiles(selector, paths);
  }

  /** Pointer strokes: [[x, y], …] lists in page coordinates, each pressed, moved and released. */
  async draw(strokes) {
    for (const s of strokes) {
      await this.page.mouse.move(...s[0]);
      await this.page.mouse.down();
      for (const p of s.slice(1)) await this.page.mouse.move(...p, { steps: 8 });
      await this.page.mouse.up();
    }
  }

  screenshot(path) {
    return this.page.screenshot({ path });
  }

  /** (Playwright reports uncaught errors itself: 'pageerror'.) */
  async collectErrors() {}

  /** Chromium saves downloads itself, and playwright reports each with its file. */
  async catchDownloads() {
    if (this.caught) return;
    this.caught = [];
    this.page.on('download', (d) =>
      this.caught.push(d.path().then(async (path) => ({ name: d.suggestedFilename(), bytes: await readFile(path) }))),
    );
  }

  downloads() {
    return Promise.all(this.caught);
  }

  /** A CDP session of this page (Chromium only: the memory probes). */
  cdpSession() {
    return this.page.context().newCDPSession(this.page);
  }

  close() {
    return this.page.context().close();
  }
}

class PuppeteerPage extends Page {
  constructor(page) {
    super();
    this.page = page;
  }

  async goto(url) {
    await this.collectErrors();
    await this.page.goto(url);
  }

  evaluate(fn, arg = null) {
    return this.page.evaluate(fn, arg);
  }

  waitForFunction(fn, arg = null, { timeout = 20000 } = {}) {
    return this.page.waitForFunction(fn, { timeout, polling: 50 }, arg);
  }

  click(selector) {
    return this.page.click(selector);
  }

  async fill(selector, text) {
    await this.page.$eval(selector, (el) => {
      el.value = '';
    });
    await this.page.type(selector, text);
  }

  async setInputFiles(selector, paths) {
    const input = await this.page.$(selector);
    await input.uploadFile(...[paths].flat());
  }

  async draw(strokes) {
    for (const s of strokes) {
      await this.page.mouse.move(...s[0]);
      await this.page.mouse.down();
      for (const p of s.slice(1)) await this.page.mouse.move(...p, { steps: 8 });
      await this.page.mouse.up();
    }
  }

  screenshot(path) {
    return this.page.screenshot({ path });
  }

  close() {
    return this.page.close();
  }
}

// ---- WebKit: WebKitWebDriver on a free port, MiniBrowser on an Xvfb display of its own.

/** Starts Xvfb on the first free display (-displayfd); returns { display, process }. */
async function startXvfb() {
  const xvfb = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', '1920x1200x24', '-nolisten', 'tcp'], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  xvfb.stderr.on('data', (d) => (stderr += d));
  const display = await new Promise((resolve, reject) => {
    xvfb.once('error', (e) => reject(new Error(`Xvfb: ${e.message} (scripts/setup.sh browsers installs xvfb)`)));
    xvfb.once('exit', (code) => reject(new Error(`Xvfb exited (${code}): ${stderr}`)));
    xvfb.stdio[3].once('data', (d) => resolve(`:${String(d).trim()}`));
  });
  return { display, process: xvfb };
}

/** Waits until WebKitWebDriver answers /status. */
async function driverReady(url, driver) {
  for (let i = 0; i < 200; i++) {
    if (driver.exitCode !== null) throw new Error(`WebKitWebDriver exited (${driver.exitCode})`);
    try {
      if ((await fetch(`${url}/status`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('WebKitWebDriver did not start within 10 s');
}

async function launchWebKit() {
  const { Builder } = await import('selenium-webdriver');
  const xvfb = await startXvfb();
  const port = await freePort();
  const driverProcess = spawn(BINARIES.webkit, [`--port=${port}`, '--host=127.0.0.1'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, DISPLAY: xvfb.display },
  });
  const stop = () => {
    driverProcess.kill();
    xvfb.process.kill();
  };
  try {
    const url = `http://127.0.0.1:${port}`;
    await driverReady(url, driverProcess);
    const sessions = [];
    let last = null;
    return new Browser('webkit', {
      // One MiniBrowser (a WebDriver session) per page; WebKitWebDriver runs one session at a
      // time, so a new page ends the one before (its errors kept).
      newPage: async ({ width, height, initScript }) => {
        if (initScript) throw new Error('webkit: classic WebDriver cannot run a script before the page');
        if (last) {
          await last.collectErrors();
          await last.driver.quit().catch(() => {});
        }
        const driver = await new Builder()
          .usingServer(url)
          .withCapabilities({
            browserName: 'MiniBrowser',
            'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] },
          })
          .build();
        sessions.push(driver);
        await driver.manage().setTimeouts({ script: 600000, pageLoad: 60000 });
        await driver.manage().window().setRect({ width, height });
        last = new WebDriverPage(driver);
        return last;
      },
      close: async () => {
        for (const d of sessions) await d.quit().catch(() => {});
        stop();
      },
    });
  } catch (e) {
    stop();
    throw e;
  }
}

// Classic WebDriver carries results as JSON: special numbers, -0 and undefined are tagged in the
// page and restored here, so a test sees what the other engines' clients give it.
const ENCODE = `const encode = (v) => {
  if (v === undefined) return { __stn: 'undefined' };
  if (typeof v === 'number') return Number.isFinite(v) && !Object.is(v, -0) ? v : { __stn: Object.is(v, -0) ? '-0' : String(v) };
  if (typeof v === 'bigint') return { __stn: 'bigint', v: String(v) };
  if (Array.isArray(v)) return v.map(encode);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, encode(x)]));
  return v;
};`;

function decode(v) {
  if (Array.isArray(v)) return v.map(decode);
  if (v && typeof v === 'object') {
    if (typeof v.__stn === 'string') {
      if (v.__stn === 'undefined') return undefined;
      if (v.__stn === 'bigint') return BigInt(v.v);
      return v.__stn === '-0' ? -0 : Number(v.__stn);
    }
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, decode(x)]));
  }
  return v;
}

// Uncaught errors, kept by the page itself (classic WebDriver reports none): listeners added
// before the page's scripts in Firefox, after each load in WebKit (there a load's own errors
// show as a page that never gets ready).
const LISTEN = () => {
  if (window.__pageErrors) return;
  window.__pageErrors = [];
  window.addEventListener('error', (e) => window.__pageErrors.push(String(e.error ?? e.message)));
  window.addEventListener('unhandledrejection', (e) => window.__pageErrors.push(String(e.reason)));
};

class WebDriverPage extends Page {
  constructor(driver) {
    super();
    this.driver = driver;
  }

  async goto(url) {
    await this.collectErrors();
    await this.driver.get(url);
    await this.evaluate(LISTEN);
  }

  async evaluate(fn, arg = null) {
    const script = `${ENCODE}
const done = arguments[arguments.length - 1];
Promise.resolve().then(() => (${fn})(arguments[0])).then(
  (v) => done({ ok: encode(v) }),
  (e) => done({ error: String(e && e.stack ? e + '\\n' + e.stack : e) }),
);`;
    const r = await this.driver.executeAsyncScript(script, arg);
    if (r.error !== undefined) throw new Error(`webkit: evaluate failed: ${r.error}`);
    return decode(r.ok);
  }

  async click(selector) {
    await (await this.driver.findElement({ css: selector })).click();
  }

  async fill(selector, text) {
    const el = await this.driver.findElement({ css: selector });
    await el.clear();
    if (text !== '') await el.sendKeys(text);
    // (Element Clear fires change, not input.)
    else
      await this.evaluate(
        (s) => document.querySelector(s).dispatchEvent(new Event('input', { bubbles: true })),
        selector,
      );
  }

  async setInputFiles(selector, paths) {
    // (WebDriver's Element Send Keys takes a file input's paths, one a line.)
    await (await this.driver.findElement({ css: selector })).sendKeys([paths].flat().join('\n'));
  }

  async draw(strokes) {
    for (const s of strokes) {
      let actions = this.driver
        .actions({ async: true })
        .move({ x: Math.round(s[0][0]), y: Math.round(s[0][1]) })
        .press();
      for (const [x, y] of s.slice(1)) actions = actions.move({ x: Math.round(x), y: Math.round(y), duration: 20 });
      await actions.release().perform();
    }
  }

  async screenshot(path) {
    writeFileSync(path, Buffer.from(await this.driver.takeScreenshot(), 'base64'));
  }

  close() {
    return this.driver.quit();
  }
}
