// The entry `safetensors-nano/facts`: what the package knows without its
// wasm — the dtype table and the shard check. Code that must not wait for
// (or download) the wasm imports this: a page's main thread that only
// formats dtypes, a worker before its message handler is set.

export { DTYPES, DTYPE_INFO } from './dtypes.js';
export { checkShards } from './shardcheck.js';
