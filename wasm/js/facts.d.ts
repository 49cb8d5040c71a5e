// Types of the entry `safetensors-nano/facts` (wasm/js/facts.js).
export { DTYPES, DTYPE_INFO, checkShards, shardFindingMessage, shardHeaderBytes } from './index.js';
export type { Dtype, DtypeInfo, DtypeKind, ShardHeader, ShardFinding } from './index.js';
