// A local static HTTP server for the tests, on 127.0.0.1 only (HTTP/1.1, or
// HTTP/2 over TLS when given a certificate, lib/tls.js): serves a folder, with single-range Range support (206/416) or without it (every
// answer a 200 with the whole body), plus "virtual" files whose bytes a
// function produces (for sizes no disk file should have). Logs requests
// (each with the body bytes it was answered with).

import { createServer } from 'node:http';
import { createSecureServer } from 'node:http2';
import { createReadStream, statSync } from 'node:fs';
import { join, normalize, extname } from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
};

function parseRange(header, size) {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header ?? '');
  if (!m || (m[1] === '' && m[2] === '')) return null;
  let start;
  let end; // inclusive
  if (m[1] === '') {
    start = size - BigInt(m[2]);
    end = size - 1n;
    if (start < 0n) start = 0n;
  } else {
    start = BigInt(m[1]);
    end = m[2] === '' ? size - 1n : BigInt(m[2]);
    if (end > size - 1n) end = size - 1n;
  }
  return { start, end };
}

/**
 * @param {object} o
 * @param {string} o.root folder to serve
 * @param {boolean} [o.range=true] honour Range requests
 * @param {Map<string, {size: bigint, read: (start: bigint, end: bigint) => Uint8Array}>} [o.virtual]
 * @param {Record<string, string>} [o.requireHeaders] headers every request under /auth/ must carry
 * @param {number} [o.delay=0] milliseconds each answer waits before it is sent
 *   (so that requests overlap; `stats.maxInFlight` counts how many did)
 * @param {{key: string, cert: string}} [o.tls] serve HTTP/2 over TLS (https://) with this
 *   key and certificate, instead of HTTP/1.1; each request's log entry has its `httpVersion`
 */
export async function startServer({
  root,
  range = true,
  virtual = new Map(),
  requireHeaders = {},
  delay = 0,
  tls = null,
}) {
  const requests = [];
  const stats = { inFlight: 0, maxInFlight: 0 };
  const handle = (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const entry = { path, range: req.headers.range ?? null, status: 0, bytes: 0, httpVersion: req.httpVersion };
    requests.push(entry);
    stats.maxInFlight = Math.max(stats.maxInFlight, ++stats.inFlight);
    res.on('close', () => stats.inFlight--);
    const send = (status, headers, body) => {
      entry.status = status;
      if (body !== undefined && req.method !== 'HEAD')
        entry.bytes = Number(headers['Content-Length'] ?? body.length ?? 0);
      if (delay > 0) {
        setTimeout(() => reply(status, headers, body), delay);
        return;
      }
      reply(status, headers, body);
    };
    const reply = (status, headers, body) => {
      res.writeHead(status, headers);
      if (body === undefined || req.method === 'HEAD') res.end();
      else if (typeof body.pipe === 'function') body.pipe(res);
      else res.end(body);
    };
    if (req.method === 'OPTIONS') {
      return send(204, {
        'Access-Control-Allow-Origin': '*',
        'Access-Control-Allow-Methods': 'GET, HEAD',
        'Access-Control-Allow-Headers': req.headers['access-control-request-headers'] ?? '*',
        'Access-Control-Max-Age': '600',
      });
    }
    if (path.startsWith('/auth/')) {
      for (const [k, v] of Object.entries(requireHeaders)) {
        if (req.headers[k.toLowerCase()] !== v) return send(401, { 'Content-Type': 'text/plain' }, 'unauthorized');
      }
    }
    const rel = path.replace(/^\/auth\//, '/');
    let size;
    let open;
    const v = virtual.get(rel);
    if (v) {
      size = v.size;
      open = (start, end) => Buffer.from(v.read(start, end + 1n));
    } else {
      const file = normalize(join(root, rel));
      if (!file.startsWith(normalize(root))) return send(403, {}, 'forbidden');
      let st;
      try {
        st = statSync(file);
      } catch {
        return send(404, { 'Content-Type': 'text/plain' }, 'not found');
      }
      if (!st.isFile()) return send(404, { 'Content-Type': 'text/plain' }, 'not found');
      size = BigInt(st.size);
      open = (start, end) =>
        end < start ? Buffer.alloc(0) : createReadStream(file, { start: Number(start), end: Number(end) });
    }
    const headers = {
      'Content-Type': TYPES[extname(rel)] ?? 'application/octet-stream',
      'Cache-Control': 'no-store',
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Expose-Headers': 'Content-Range, Content-Length, ETag, Accept-Ranges',
      // (So that a page's resource timings show when each request left and was answered.)
      'Timing-Allow-Origin': '*',
    };
    if (range) {
      headers['Accept-Ranges'] = 'bytes';
      headers.ETag = `"${size}"`;
      const r = req.headers.range ? parseRange(req.headers.range, size) : null;
      if (req.headers.range && (r === null || r.start >= size)) {
        return send(416, { ...headers, 'Content-Range': `bytes */${size}` });
      }
      if (r) {
        headers['Content-Range'] = `bytes ${r.start}-${r.end}/${size}`;
        headers['Content-Length'] = String(r.end - r.start + 1n);
        return send(206, headers, open(r.start, r.end));
      }
    }
    headers['Content-Length'] = String(size);
    return send(200, headers, open(0n, size - 1n));
  };
  // (An HTTP/2 server keeps its sessions open: close() ends them, as closeAllConnections does
  // for HTTP/1.1.)
  const sessions = new Set();
  const server = tls ? createSecureServer({ key: tls.key, cert: tls.cert }, handle) : createServer(handle);
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    stats,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        for (const s of sessions) s.destroy();
        server.close(() => resolve());
      }),
  };
}
