// The API of the npm package safetensors-nano, over the wasm core: the one
// module both entries (index.js, node.js) re-export. Re-exports only.
//
// The wasm side parses and validates headers (only header bytes enter wasm
// memory) and answers in numbers alone: a Float64Array describing the
// header, names as spans of the header bytes the JS side holds, errors as a
// kind and its numbers. The modules below decode the names (read/description.js),
// word the errors (errors/safetensors-error.js, errors/messages.js), do the I/O (read/byte-sources.js: Blob
// slices, HTTP ranges; shards/sharded-model.js) and build the JS objects (read/safetensors-file.js,
// read/tensor.js). Tensor data is never copied into wasm memory except in
// bounded decode chunks.

export { DTYPES, DTYPE_INFO } from '../format/dtypes.js';
export { SafeTensorsError } from '../errors/safetensors-error.js';
export { SafeTensors } from '../read/safetensors-file.js';
export { ShardedModel, openSharded } from '../shards/sharded-model.js';
export { openHub } from '../http/hub.js';
export { checkShards, shardFindingMessage } from '../shards/check-index.js';
export { shardHeaderBytes } from '../shards/header-sizes.js';
export { decodeFloat32 } from '../read/tensor.js';
export { wasmMemoryBytes } from '../runtime/wire-numbers.js';
export { serialize } from '../write/serialize.js';
export { serializeStream, serializedSize } from '../write/serialize-stream.js';
export { editTensors } from '../edit/tensor-edits.js';
export { editMetadata } from '../edit/metadata-edits.js';
export { shardTensors } from '../write/shard-split.js';
