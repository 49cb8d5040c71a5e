// Python's own static server, `python3 -m http.server`, which answers every
// request with 200 and the whole file (it ignores Range), on 127.0.0.1 and
// a port the system picks.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { python } from './env.js';

/** Serves `dir`; resolves to { base, close() } once it listens. */
export function startPythonServer(dir) {
  const exe = existsSync(python) ? python : 'python3';
  const child = spawn(exe, ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', dir], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`python3 -m http.server exited (${code}): ${out}`)));
    child.stdout.on('data', (d) => {
      out += d;
      const m = / port (\d+) /.exec(out);
      if (m) {
        child.stdout.removeAllListeners('data');
        child.stdout.resume();
        resolve({ base: `http://127.0.0.1:${m[1]}/`, close: () => child.kill() });
      }
    });
  });
}
