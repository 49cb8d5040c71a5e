// Opens a URL from a server that ignores Range (python3 -m http.server)
// and reads tensors from it, counting the bytes that arrive and this
// process's peak RSS (VmHWM), so that its growth is the package's alone.
//
//   node norange-child.mjs URL MODE TENSOR…   (MODE: stream | reject)
//
// Prints one line of JSON: { list: { bytes, requests, ms, names },
// reads: [{ name, values | error: { kind, message }, bytes, ms }],
// rssBefore, rssAfter, statuses }.

import { readFileSync } from 'node:fs';
import { SafeTensors, SafeTensorsError } from 'safetensors-nano';

const vmHWM = () => Number(/VmHWM:\s*(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
const [url, mode, ...names] = process.argv.slice(2);

let received = 0;
let requests = 0;
const statuses = [];
// fetch, with every body's bytes counted as they arrive.
async function counting(input, init) {
  const res = await fetch(input, init);
  requests++;
  statuses.push(res.status);
  if (res.body === null) return res;
  const body = res.body.pipeThrough(
    new TransformStream({
      transform(chunk, out) {
        received += chunk.byteLength;
        out.enqueue(chunk);
      },
    }),
  );
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}

// A warm-up of what the measured calls use (the module, fetch), off the books.
await fetch(url, { headers: { Range: 'bytes=0-7' } }).then((r) => r.body.cancel());
const rssBefore = vmHWM();
let t = performance.now();
const file = await SafeTensors.fromUrl(url, { fetch: counting, noRange: mode });
const list = { bytes: received, requests, ms: performance.now() - t, names: file.names() };
const reads = [];
for (const name of names) {
  const before = received;
  t = performance.now();
  const tensor = file.tensor(name);
  try {
    const values = tensor.dtype === 'U8' ? Array.from(await tensor.read()) : Array.from(await tensor.readFloat32());
    reads.push({ name, values, bytes: received - before, ms: performance.now() - t });
  } catch (e) {
    if (!(e instanceof SafeTensorsError)) throw e;
    reads.push({
      name,
      error: { kind: e.kind, message: e.message },
      bytes: received - before,
      ms: performance.now() - t,
    });
  }
}
console.log(JSON.stringify({ list, reads, rssBefore, rssAfter: vmHWM(), statuses }));
