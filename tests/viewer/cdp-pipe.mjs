// Chromium driven over its DevTools pipe (--remote-debugging-pipe) with the Target and Runtime
// domains only, for timing pages as a user's browser runs them.
//
// Why not Playwright or Puppeteer here: both turn on the Network domain for every page they
// drive, so that the browser reports each request and keeps its body for the inspector. That is
// right for tests and wrong for timing a page that makes 164 requests for 21 MB, where that
// recording is a large share of the time (tests/viewer/bench-viewer.mjs). The viewer's tests
// keep Playwright (tests/viewer/chromium.mjs).
//
// Messages on the pipe are JSON, each ended by a NUL byte (Chromium's fd 3 in, fd 4 out).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A page (or one of its workers) that evaluates functions in its own JS context. */
class Target {
  constructor(browser, sessionId) {
    this.browser = browser;
    this.sessionId = sessionId;
  }

  /** Runs `fn(arg)` in the target, awaits its promise, and resolves to its JSON value. */
  async evaluate(fn, arg) {
    const { result, exceptionDetails } = await this.browser.send(
      'Runtime.evaluate',
      { expression: `(${fn})(${JSON.stringify(arg)})`, awaitPromise: true, returnByValue: true },
      this.sessionId,
    );
    if (exceptionDetails)
      throw new Error(`in the page: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
    return result.value;
  }
}

/** A tab in its own browser context (its own cookies, cache and connections). */
class Page extends Target {
  constructor(browser, sessionId, { targetId, contextId }) {
    super(browser, sessionId);
    this.targetId = targetId;
    this.contextId = contextId;
    /** Dedicated workers the page has started, as Targets. */
    this.workers = [];
    /** The page's uncaught exceptions, as text. */
    this.errors = [];
  }

  /** Starts loading `url` in the tab; resolves once the navigation has begun (not loaded). */
  async goto(url) {
    await this.browser.send('Page.navigate', { url }, this.sessionId);
  }

  /** Closes the tab and its browser context. */
  async close() {
    await this.browser.send('Target.closeTarget', { targetId: this.targetId });
    await this.browser.send('Target.disposeBrowserContext', { browserContextId: this.contextId });
  }
}

/** Headless Chromium at `executablePath` with `args`; resolves to a Browser. */
export async function launchOverPipe({ executablePath, args = [] }) {
  const profile = mkdtempSync(join(tmpdir(), 'cdp-pipe-'));
  const child = spawn(
    executablePath,
    [...args, `--user-data-dir=${profile}`, '--remote-debugging-pipe', 'about:blank'],
    {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  const browser = new Browser(child, profile, () => stderr);
  await browser.send('Target.setDiscoverTargets', { discover: false });
  return browser;
}

class Browser {
  constructor(child, profile, stderr) {
    this.child = child;
    this.profile = profile;
    this.nextId = 0;
    this.pending = new Map();
    this.pages = new Map();
    let text = '';
    child.stdio[4].on('data', (chunk) => {
      text += chunk;
      for (let end = text.indexOf('\0'); end >= 0; end = text.indexOf('\0')) {
        this.receive(JSON.parse(text.slice(0, end)));
        text = text.slice(end + 1);
      }
    });
    child.once('exit', (code) => {
      for (const { reject } of this.pending.values()) reject(new Error(`chromium exited (${code}): ${stderr()}`));
      this.pending.clear();
    });
  }

  /** The browser's process id (its renderers and services are its descendants). */
  get pid() {
    return this.child.pid;
  }

  /** Sends one command (to `sessionId`'s target, or to the browser); resolves to its result. */
  send(method, params = {}, sessionId = undefined) {
    const id = ++this.nextId;
    this.child.stdio[3].write(`${JSON.stringify({ id, method, params, sessionId })}\0`);
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject, method }));
  }

  receive(message) {
    const waiting = this.pending.get(message.id);
    if (waiting) {
      this.pending.delete(message.id);
      if (message.error) waiting.reject(new Error(`${waiting.method}: ${message.error.message}`));
      else waiting.resolve(message.result);
    } else if (message.method === 'Target.attachedToTarget' && message.params.targetInfo.type === 'worker') {
      this.pages.get(message.sessionId)?.workers.push(new Target(this, message.params.sessionId));
    } else if (message.method === 'Runtime.exceptionThrown') {
      const { exception, text } = message.params.exceptionDetails;
      this.pages.get(message.sessionId)?.errors.push(exception?.description ?? text);
    }
  }

  /** A new `width` × `height` tab (about:blank) of a new browser context, attached. */
  async newPage({ width = 1280, height = 800 } = {}) {
    const { browserContextId: contextId } = await this.send('Target.createBrowserContext', { disposeOnDetach: true });
    const { targetId } = await this.send('Target.createTarget', {
      url: 'about:blank',
      browserContextId: contextId,
      width,
      height,
    });
    const { sessionId } = await this.send('Target.attachToTarget', { targetId, flatten: true });
    const page = new Page(this, sessionId, { targetId, contextId });
    this.pages.set(sessionId, page);
    // (Workers are attached as they start, without pausing them, so that they can be evaluated in.)
    await this.send(
      'Target.setAutoAttach',
      { autoAttach: true, waitForDebuggerOnStart: false, flatten: true },
      sessionId,
    );
    // (Runtime reports uncaught exceptions; unlike Network, it records nothing per request.)
    await this.send('Runtime.enable', {}, sessionId);
    return page;
  }

  /** Ends the browser and removes its profile. */
  async close() {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill();
    await exited;
    rmSync(this.profile, { recursive: true, force: true });
  }
}
