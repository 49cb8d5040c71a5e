// The API of the npm package safetensors-nano, over the wasm core: the one
// module both entries (index.js, node.js) re-export. Re-exports only.
//
// The wasm side parses and validates headers (only header bytes enter wasm
// memory) and answers in numbers alone: a Float64Array describing the
// header, names as spans of the header bytes the JS side holds, errors as a
// kind and its numbers. The modules below decode the names (description.js),
// word the errors (errors.js, messages.js), do the I/O (sources.js: Blob
// slices, HTTP ranges; shards.js) and build the JS objects (file.js,
// tensor.js). Tensor data is never copied into wasm memory except in
// bounded decode chunks.

export { DTYPES, DTYPE_INFO } from './dtypes.js';
export { SafeTensorsError } from './errors.js';
export { SafeTensors } from './file.js';
export { ShardedModel, openSharded } from './shards.js';
export { openHub } from './hub.js';
export { checkShards, shardFindingMessage } from './shardcheck.js';
export { shardHeaderBytes } from './shardsize.js';
export { decodeFloat32 } from './tensor.js';
export { wasmMemoryBytes } from './wire.js';
export { serialize } from './write.js';
export { serializeStream, serializedSize } from './stream.js';
export { editTensors } from './edit.js';
export { editMetadata } from './metaedit.js';
export { shardTensors } from './shardwrite.js';
