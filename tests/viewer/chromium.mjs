// Chromium for the viewer's tests and its bench: playwright-core from tests/js, Debian's
// chromium (or $CHROMIUM) with the flags of tests/js/lib/engines.js and no GPU, and why it cannot
// run here when it cannot.

import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { BINARIES, CHROMIUM_FLAGS, missing } from '../js/lib/engines.js';
import { skipReason } from '../js/lib/env.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** The chromium binary the viewer's tests launch. */
export const CHROMIUM = BINARIES.chromium;

/** playwright-core from tests/js/node_modules, or null when it is not installed. */
export const playwright = (() => {
  try {
    return createRequire(join(ROOT, 'tests/js/package.json'))('playwright-core');
  } catch {
    return null;
  }
})();

/** Headless Chromium's launch options, no GPU; `args` adds flags. */
export const chromiumOptions = (args = []) => ({
  executablePath: CHROMIUM,
  args: [...CHROMIUM_FLAGS, '--disable-gpu', ...args],
});

/**
 * Why `tests` (a name, for the log) cannot run here, or null: playwright-core or Chromium is
 * missing, or `more()` names something else they need. Under CI that is an error; otherwise it is
 * logged, and the caller skips them.
 */
export function unavailable(tests, more = () => null) {
  const why = !playwright
    ? 'playwright-core is not installed in tests/js (scripts/setup.sh web)'
    : (missing('chromium') ?? more());
  if (skipReason(why)) console.log(`# skipping ${tests}: ${why}`);
  return why;
}
