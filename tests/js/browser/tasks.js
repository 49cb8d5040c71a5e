// The concurrency tasks a page and its Workers run (concurrency.test.js):
// task i opens mixed file i % count the (i / count % 3)-th way (bytes, a
// Blob, its URL under /tmp/fixtures/mixed/) and summarizes it. Tasks with
// an abort time are aborted then; an aborted task reports the abort.

import { mixedFiles, summarize } from '/lib/mixed-files.js';

export async function runTasks(stn, { count, indices, abortAfter = null }) {
  const files = mixedFiles(count);
  const ctrl = new AbortController();
  if (abortAfter !== null) setTimeout(() => ctrl.abort(), abortAfter);
  const { signal } = ctrl;
  return Promise.all(
    indices.map(async (i) => {
      const { name, bytes } = files[i % count];
      const way = Math.floor(i / count) % 3;
      const open =
        way === 0
          ? async () => stn.SafeTensors.fromBytes(bytes)
          : way === 1
            ? () => stn.SafeTensors.fromBlob(new Blob([bytes]), { signal })
            : () => stn.SafeTensors.fromUrl(`/tmp/fixtures/mixed/${name}`, { signal, prefetch: 64 });
      try {
        return { i, result: await summarize(stn, open, signal) };
      } catch (e) {
        return { i, aborted: e?.name ?? String(e) };
      }
    }),
  );
}
