#!/usr/bin/env node
// A small static file server with HTTP Range support, for the web demo and its tests.
//
//   node scripts/serve.mjs [--root dist/demo] [--port 8080] [--host 127.0.0.1]
//
// As a module: `startServer({root, port: 0, mounts: {'/fixtures/': dir}})` resolves to
// {url, port, served, close}; `served` counts the body bytes sent per path, so a test can check
// that opening a file read only its header.

import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.md': 'text/markdown; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
};

/** Parses one `bytes=` range against a size: [start, end] inclusive, null (no range), or 'bad'. */
export function parseRange(header, size) {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return 'bad';
  let start;
  let end;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) return 'bad';
    start = Math.max(0, size - n);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || end < start) return 'bad';
  return [start, end];
}

/** Maps a URL path to a file under root or a mount; null when it would escape them. */
function locate(path, root, mounts) {
  for (const [prefix, dir] of Object.entries(mounts)) {
    if (path.startsWith(prefix)) return inside(dir, path.slice(prefix.length));
  }
  return inside(root, path);
}

function inside(dir, rel) {
  const base = resolve(dir);
  const full = resolve(join(base, rel));
  return full === base || full.startsWith(base + sep) ? full : null;
}

export function startServer({ root, port = 8080, host = '127.0.0.1', mounts = {}, quiet = true } = {}) {
  const served = new Map();
  const server = createServer(async (req, res) => {
    const cors = {
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Allow-Headers': 'Range',
      'Access-Control-Expose-Headers': 'Content-Range, Content-Length, Accept-Ranges',
    };
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...cors, 'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS' });
      res.end();
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD, OPTIONS' });
      res.end();
      return;
    }
    let path;
    try {
      path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    } catch {
      res.writeHead(400);
      res.end('bad path');
      return;
    }
    let file = locate(path, root, mounts);
    let info = null;
    try {
      if (file) info = await stat(file);
      if (info?.isDirectory()) {
        file = join(file, 'index.html');
        info = await stat(file);
      }
    } catch {
      info = null;
    }
    if (!file || !info?.isFile()) {
      res.writeHead(404, { 'Content-Type': 'text/plain', ...cors });
      res.end('not found');
      if (!quiet) console.log(`404 ${req.method} ${path}`);
      return;
    }
    const size = info.size;
    const headers = {
      ...cors,
      'Content-Type': TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
      'Accept-Ranges': 'bytes',
      'Cache-Control': 'no-cache',
      'Last-Modified': info.mtime.toUTCString(),
    };
    const range = parseRange(req.headers.range, size);
    if (range === 'bad') {
      res.writeHead(416, { ...headers, 'Content-Range': `bytes */${size}` });
      res.end();
      return;
    }
    const [start, end] = range ?? [0, size - 1];
    const length = size === 0 ? 0 : end - start + 1;
    res.writeHead(range ? 206 : 200, {
      ...headers,
      'Content-Length': String(length),
      ...(range ? { 'Content-Range': `bytes ${start}-${end}/${size}` } : {}),
    });
    if (!quiet) console.log(`${range ? 206 : 200} ${req.method} ${path} ${range ? `${start}-${end}` : ''}`);
    if (req.method === 'HEAD' || length === 0) {
      res.end();
      return;
    }
    served.set(path, (served.get(path) ?? 0) + length);
    const stream = createReadStream(file, { start, end });
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => {
      const actual = server.address().port;
      ok({
        server,
        port: actual,
        url: `http://${host.includes(':') ? `[${host}]` : host}:${actual}/`,
        served,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections?.();
            server.close(done);
          }),
      });
    });
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opt = (name, fallback) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
  };
  const root = resolve(opt('root', 'dist/demo'));
  const { url } = await startServer({
    root,
    port: Number(opt('port', process.env.PORT ?? 8080)),
    host: opt('host', '127.0.0.1'),
    quiet: !args.includes('--verbose'),
  });
  console.log(`Serving ${root} at ${url.replace('127.0.0.1', 'localhost')} (HTTP Range supported). Ctrl-C stops.`);
}
