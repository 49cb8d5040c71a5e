// The worker that parses headers (open-worker.js), started by index.html ahead of the page's own
// modules: the package and its wasm load while the page does, so that they are ready when the
// first header arrives rather than after it.

import { Jobs } from './jobs.js';

export const opener = new Jobs(new URL('./open-worker.js', import.meta.url));
