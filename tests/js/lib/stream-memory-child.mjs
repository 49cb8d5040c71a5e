// Converts a multi-GB F32 tensor of a (sparse) file to BF16 with the
// package's writeFile, and reports its own peak RSS before and after
// (VmHWM from /proc/self/status: this process's, not its parent's).
//
//   node stream-memory-child.mjs IN OUT
//
// Prints one line of JSON: { before, after, size, seconds } (bytes, seconds).

import { openAsBlob, readFileSync } from 'node:fs';
import { SafeTensors, editTensors, serialize, writeFile } from 'safetensors-nano';

const vmHWM = () => Number(/VmHWM:\s*(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;

const [input, output] = process.argv.slice(2);
await serialize({}); // the writer's module loaded before the baseline
const before = vmHWM();
const t0 = performance.now();
const file = await SafeTensors.fromBlob(await openAsBlob(input));
const size = await writeFile(output, editTensors(file, { convert: 'BF16' }), file.metadata());
console.log(JSON.stringify({ before, after: vmHWM(), size, seconds: (performance.now() - t0) / 1000 }));
