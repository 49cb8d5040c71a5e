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

let golden;
/**
 * The reference's golden files ({ floats, mixed }: Uint8Arrays and paths),
 * or a skip reason when the venv is absent outside CI. Under CI a missing
 * venv is a failure.
 */
export function referenceFiles() {
  if (golden !== undefined) return golden;
  if (!existsSync(python)) {
    if (process.env.CI) throw new Error(`${python} is missing (CI is set): run scripts/setup.sh python`);
    golden = { skip: `no ${python}: run scripts/setup.sh python for the tests against the reference` };
    return golden;
  }
  const dir = scratch('stn-golden-');
  const r = spawnSync(python, [join(here, 'reference.py'), dir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`reference.py failed: ${r.stderr}`);
  golden = {
    skip: false,
    dir,
    floats: new Uint8Array(readFileSync(join(dir, 'floats.safetensors'))),
    mixed: new Uint8Array(readFileSync(join(dir, 'mixed.safetensors'))),
  };
  return golden;
}
