// The reader's wasm exports as the package calls them: each through
// runtime/wasm-guard.js, so that a trap renews the module and becomes an Internal error.

import { guardExports } from './wasm-guard.js';
import * as glue from '../safetensors_nano_wasm.js';

/** `open`, `decode_room`, `decode` (wasm/src/lib.rs), guarded; `memory()` the current instance's memory. */
export const reader = {
  ...guardExports(glue, ['open', 'decode_room', 'decode']),
  // (Once the entry has instantiated the module, initSync only returns the
  // current instance's exports: after a renewal, the new one's.)
  memory: () => glue.initSync().memory,
};
