// The entry `safetensors-nano/facts`: what the package knows without its
// wasm — the dtype table, the shard check and the shard header sizes an
// index implies. Code that must not wait for
// (or download) the wasm imports this: a page's main thread that only
// formats dtypes, a worker before its message handler is set.

export { DTYPES, DTYPE_INFO } from './format/dtypes.js';
export { checkShards, shardFindingMessage } from './shards/check-index.js';
export { shardHeaderBytes } from './shards/header-sizes.js';
