// The files of the trap test (trap.test.js, trap-child.mjs).

import { rawFile, tensorFile } from './format.js';

/** A header of `pairs` metadata pairs and no tensor: cheap bytes, a lot of parsed state. */
export function metadataFile(pairs) {
  const parts = [];
  for (let i = 0; i < pairs; i++) parts.push(`"k${i}":""`);
  return rawFile(`{"__metadata__":{${parts.join(',')}}}`);
}

/** A small file with an F16 tensor 'h' of [1, -2] (decoded through wasm). */
export function smallFile() {
  return tensorFile([['h', 'F16', [2], Uint16Array.of(0x3c00, 0xc000)]]);
}
