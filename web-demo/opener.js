// The workers that parse headers (open-worker.js), started by index.html ahead of the page's own
// modules: the package and its wasm load while the page does, so that they are ready when the
// first header arrives rather than after it.
//
// Two of them when the machine has the cores: over HTTP/2 the headers of a sharded model arrive
// all at once, and one worker parsing them in turn would leave them waiting in line.

import { Jobs } from './jobs.js';

const url = new URL('./open-worker.js', import.meta.url);
const workers = Array.from({ length: Math.min(2, navigator.hardwareConcurrency || 1) }, () => new Jobs(url));

/** Runs a job on the worker with the fewest jobs pending (as Jobs.run). */
export const opener = {
  run(type, payload, options) {
    let best = workers[0];
    for (const w of workers) if (w.pending.size < best.pending.size) best = w;
    return best.run(type, payload, options);
  },
};
