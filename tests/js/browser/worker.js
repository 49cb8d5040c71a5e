// A module Worker that runs concurrency tasks (tasks.js) on the package. It
// says 'ready' once loaded: a message sent while the package's top-level
// await still loads the wasm would reach no handler.
import * as stn from '/node_modules/safetensors-nano/index.js';
import { runTasks } from './tasks.js';

self.onmessage = async ({ data }) => {
  self.postMessage(await runTasks(stn, data));
};
self.postMessage('ready');
