// Shared test environment: where the repository is, the reference's golden
// files (made by tests/.venv's Python, which scripts/setup.sh python
// creates), scratch files.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const repo = process.env.SAFETENSORS_NANO_REPO ?? join(here, '..', '..', '..');
export const python = join(repo, 'tests', '.venv', 'bin', 'python');

/** A scratch folder removed at exit. */
export function scratch(prefix = 'stn-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * `why` a test cannot run here (a tool is missing), as the reason to skip it,
 * or null when it can. Under CI (CI set), where scripts/setup.sh installs
 * every tool, a missing one is a failure (thrown) instead.
 */
export function skipReason(why) {
  if (why && process.env.CI) throw new Error(`${why} (required when CI is set)`);
  return why || null;
}

/**
 * Runs `script` (of tests/js/lib) with the venv's Python in a new scratch
 * folder, with the arguments `prepare(dir)` returns (it may write the
 * script's inputs there first): `{ skip: false, dir }`, or `{ skip }` when
 * the venv is absent (see skipReason).
 */
export function runReference(script, prefix, prepare = (dir) => [dir]) {
  const skip = skipReason(
    existsSync(python) ? null : `no ${python}: run scripts/setup.sh python for the tests against the reference`,
  );
  if (skip) return { skip };
  const dir = scratch(prefix);
  const r = spawnSync(python, [join(here, script), ...prepare(dir)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${script} failed: ${r.stderr}`);
  return { skip: false, dir };
}

let golden;
/**
 * The reference's golden files ({ floats, mixed }: Uint8Arrays and paths),
 * or `{ skip }` (see runReference).
 */
export function referenceFiles() {
  if (golden !== undefined) return golden;
  const run = runReference('reference.py', 'stn-golden-');
  golden = run.skip
    ? run
    : {
        ...run,
        floats: new Uint8Array(readFileSync(join(run.dir, 'floats.safetensors'))),
        mixed: new Uint8Array(readFileSync(join(run.dir, 'mixed.safetensors'))),
      };
  return golden;
}
