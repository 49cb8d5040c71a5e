// A worker thread serving a generated Hub-scale model (lib/hub.js) through
// lib/server.js, so that the server's work does not share the event loop
// of the client being timed (as a real server would not). workerData:
// { deepSeek: true } or { tensors, shards }, { delay }, and { tls } (a
// certificate from lib/tls.js: HTTP/2 over TLS instead of HTTP/1.1). Posts
// { url, tensors, shards, least, indexBytes, shardHeaders } once listening
// (shardHeaders: each shard's file name and 8 + N header bytes); answers
// 'reset' (forget the requests so far) and 'stats' ({ requests, bytes,
// versions }: the HTTP versions the requests came in).
// End it with worker.terminate().

import { parentPort, workerData } from 'node:worker_threads';
import { tmpdir } from 'node:os';
import { startServer } from './server.js';
import { deepSeekLike, hubModel, minimumBytes, virtualFiles } from './hub.js';

const model = workerData.deepSeek ? deepSeekLike() : hubModel(workerData);
const { files, indexBytes } = virtualFiles(model);
const server = await startServer({
  root: tmpdir(),
  virtual: files,
  delay: workerData.delay ?? 0,
  tls: workerData.tls ?? null,
});
parentPort.on('message', (m) => {
  if (m === 'reset') {
    server.requests.length = 0;
    parentPort.postMessage('ok');
  } else if (m === 'stats') {
    const versions = [...new Set(server.requests.map((r) => r.httpVersion))].sort();
    parentPort.postMessage({
      requests: server.requests.length,
      bytes: server.requests.reduce((n, r) => n + r.bytes, 0),
      versions,
    });
  }
});
const shardHeaders = model.shards.map((s) => ({ name: s.name, bytes: s.header.length }));
parentPort.postMessage({
  url: server.url,
  tensors: model.tensors,
  shards: model.shards.length,
  least: minimumBytes(model),
  indexBytes,
  shardHeaders,
});
