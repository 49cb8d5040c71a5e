// A local HTTP server (127.0.0.1 only) that misbehaves on purpose, for the
// tests of fromUrl, read() and openSharded against real sockets. It speaks
// HTTP/1.1 by hand over node:net, so that it can lie in ways node:http
// refuses to (a Content-Length that disagrees with the body, a body cut
// off, a stall after the headers).
//
// Paths are /<fault>@<from>[~<tag>]/<file>: requests for that path get the
// fault from their <from>-th (0-based) on, and are served honestly before
// (a tag makes a path with a count of its own); files are looked up by
// <file>; the fault "none" is no fault. One server serves every fault at once, so the
// cases can run side by side. Faults (FAULTS lists them):
//   wrong-range     206 whose Content-Range starts one byte later than asked
//   no-range        206 without Content-Range
//   ignore-range    200 with the whole file, the same validators
//   not-satisfiable 416 "bytes */size" for a range inside the file
//   short           the body cut in half, then the connection closed
//   length-long     Content-Length 100 bytes over the body, then closed
//   length-short    Content-Length half the body's, the whole body sent
//   gzip            the body gzipped, with Content-Encoding: gzip
//   redirect-loop   302 to itself
//   cross-origin    302 to the same path on a second server (another port)
//   stall           headers and half the body, then nothing
//   no-answer       the request read, no answer
//   trickle         headers, then one byte every 50 ms
//   unavailable     503 every time
//   unavailable-once 503 the first time the fault applies, then honest
//   reset           the connection closed without an answer
//   endless         206 with a body that never ends
//   change          a new version (other bytes, ETag, Last-Modified), If-Range honoured (200 with it)
//   change-206      a new version, If-Range ignored: 206 with the new ETag
//   change-lm       a new version; validators: Last-Modified only
//   change-noval    a new version of the same size; no validators, ranges dropped (200)
//   change-size     a new version of another size; no validators

import { createServer } from 'node:net';
import { gzipSync } from 'node:zlib';

export const FAULTS = [
  'wrong-range',
  'no-range',
  'ignore-range',
  'not-satisfiable',
  'short',
  'length-long',
  'length-short',
  'gzip',
  'redirect-loop',
  'cross-origin',
  'stall',
  'no-answer',
  'trickle',
  'unavailable',
  'unavailable-once',
  'reset',
  'endless',
  'change',
  'change-206',
  'change-lm',
  'change-noval',
  'change-size',
];

// Every answer may be read by a page of another origin (the browser tests),
// headers included, and none is cached (a browser would serve later ranges
// from its cache, where the faults cannot reach them).
const CORS = {
  'Cache-Control': 'no-store',
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'Content-Range, Content-Length, Content-Encoding, ETag, Last-Modified',
};

function parseRange(header, size) {
  const m = /^bytes=(\d+)-(\d*)$/.exec(header ?? '');
  if (!m) return null;
  const start = Number(m[1]);
  const end = m[2] === '' ? size : Math.min(size, Number(m[2]) + 1);
  return { start, end };
}

function head(status, text, headers) {
  let s = `HTTP/1.1 ${status} ${text}\r\n`;
  for (const [k, v] of Object.entries(headers)) s += `${k}: ${v}\r\n`;
  return `${s}\r\n`;
}

/**
 * @param {object} o
 * @param {Map<string, Uint8Array>} o.files  file name → bytes (version 1)
 * @param {Map<string, Uint8Array>} [o.changed]  file name → bytes of the version the change faults switch to
 * @param {string} [o.redirectTo]  origin the cross-origin fault redirects to
 */
export async function startHostileServer({ files, changed = new Map(), redirectTo = null }) {
  const counts = new Map();
  const requests = [];
  const sockets = new Set();
  const timers = new Set();
  const later = (fn, ms) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  function answer(socket, req) {
    const m = /^\/([a-z0-9-]+)@(\d+)(?:~[\w-]*)?\/(.+)$/.exec(req.path);
    const [fault, from, name] = m ? [m[1], Number(m[2]), m[3]] : ['none', 0, req.path.slice(1)];
    const n = counts.get(req.path) ?? 0;
    counts.set(req.path, n + 1);
    const active = n >= from && fault !== 'none';
    requests.push({ ...req, fault: active ? fault : null });
    const changes = fault.startsWith('change');
    const v2 = active && changes;
    const bytes = (v2 ? (changed.get(`${fault}/${name}`) ?? changed.get(name)) : null) ?? files.get(name);
    const send = (status, text, headers, body = new Uint8Array(0), close = true) => {
      socket.write(head(status, text, { Connection: 'close', ...CORS, ...headers }));
      if (body.byteLength > 0) socket.write(body);
      if (close) socket.end();
    };
    if (bytes === undefined) return send(404, 'Not Found', { 'Content-Length': 0 });
    const size = bytes.byteLength;
    const validators = {};
    const noValidators = fault === 'change-noval' || fault === 'change-size';
    if (!noValidators) {
      if (fault !== 'change-lm') validators.ETag = v2 ? '"v2"' : '"v1"';
      validators['Last-Modified'] = v2 ? 'Tue, 01 Dec 2026 12:00:00 GMT' : 'Mon, 30 Nov 2026 12:00:00 GMT';
    }
    const base = { 'Content-Type': 'application/octet-stream', 'Accept-Ranges': 'bytes', ...validators };
    if (active) {
      if (fault === 'redirect-loop') return send(302, 'Found', { Location: req.path, 'Content-Length': 0 });
      if (fault === 'cross-origin')
        return send(302, 'Found', { Location: `${redirectTo}/${name}`, 'Content-Length': 0 });
      if (fault === 'no-answer') return;
      if (fault === 'reset') return socket.destroy();
      if (fault === 'unavailable' || (fault === 'unavailable-once' && n === from)) {
        return send(503, 'Service Unavailable', { 'Content-Length': 0 });
      }
    }
    let range = parseRange(req.headers.range, size);
    const ifRange = req.headers['if-range'];
    const current = validators.ETag ?? validators['Last-Modified'];
    // If-Range honoured (RFC 9110 13.1.5), except where the fault ignores it.
    if (range !== null && ifRange !== undefined && ifRange !== current && !(active && fault === 'change-206'))
      range = null;
    if (active && (fault === 'ignore-range' || fault === 'change-noval')) range = null;
    if (range !== null && range.start >= size) {
      return send(416, 'Range Not Satisfiable', { ...base, 'Content-Range': `bytes */${size}`, 'Content-Length': 0 });
    }
    if (range === null) {
      const body = bytes;
      if (active && fault === 'gzip') {
        const z = gzipSync(body);
        return send(200, 'OK', { ...base, 'Content-Encoding': 'gzip', 'Content-Length': z.byteLength }, z);
      }
      return sendBody(200, 'OK', base, body);
    }
    const body = bytes.subarray(range.start, range.end);
    const headers = { ...base, 'Content-Range': `bytes ${range.start}-${range.end - 1}/${size}` };
    if (active) {
      if (fault === 'wrong-range') headers['Content-Range'] = `bytes ${range.start + 1}-${range.end}/${size}`;
      if (fault === 'no-range') delete headers['Content-Range'];
      if (fault === 'not-satisfiable') {
        return send(416, 'Range Not Satisfiable', { ...base, 'Content-Range': `bytes */${size}`, 'Content-Length': 0 });
      }
      if (fault === 'gzip') {
        const z = gzipSync(body);
        return send(
          206,
          'Partial Content',
          { ...headers, 'Content-Encoding': 'gzip', 'Content-Length': z.byteLength },
          z,
        );
      }
      if (fault === 'endless') {
        socket.write(head(206, 'Partial Content', { Connection: 'close', ...CORS, ...headers }));
        const chunk = new Uint8Array(65536);
        const pump = () => {
          if (socket.destroyed) return;
          if (socket.write(chunk)) later(pump, 0);
          else socket.once('drain', pump);
        };
        return pump();
      }
    }
    return sendBody(206, 'Partial Content', headers, body);

    function sendBody(status, text, headers, body) {
      if (!active) return send(status, text, { ...headers, 'Content-Length': body.byteLength }, body);
      const half = body.subarray(0, body.byteLength >> 1);
      if (fault === 'short') {
        send(status, text, { ...headers, 'Content-Length': body.byteLength }, half, false);
        return later(() => socket.destroy(), 20);
      }
      if (fault === 'length-long') {
        send(status, text, { ...headers, 'Content-Length': body.byteLength + 100 }, body, false);
        return later(() => socket.destroy(), 20);
      }
      if (fault === 'length-short') return send(status, text, { ...headers, 'Content-Length': half.byteLength }, body);
      if (fault === 'stall') return send(status, text, { ...headers, 'Content-Length': body.byteLength }, half, false);
      if (fault === 'trickle') {
        socket.write(
          head(status, text, { Connection: 'close', ...CORS, ...headers, 'Content-Length': body.byteLength }),
        );
        let i = 0;
        const drip = () => {
          if (socket.destroyed) return;
          if (i >= body.byteLength) return socket.end();
          socket.write(body.subarray(i, ++i));
          later(drip, 50);
        };
        return drip();
      }
      return send(status, text, { ...headers, 'Content-Length': body.byteLength }, body);
    }
  }

  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buf = '';
    socket.on('data', (d) => {
      if (buf === null) return;
      buf += d.toString('latin1');
      const endOfHead = buf.indexOf('\r\n\r\n');
      if (endOfHead < 0) return;
      const [line, ...lines] = buf.slice(0, endOfHead).split('\r\n');
      buf = null;
      const [method, target] = line.split(' ');
      const headers = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      socket.request = target;
      answer(socket, { method, path: decodeURIComponent(target.split('?')[0]), headers });
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    /**
     * Connections still open that carried a request (a client that gave up
     * must have closed its own; idle ones its pool opened do not count).
     */
    get openSockets() {
      return [...sockets].filter((s) => s.request !== undefined).length;
    },
    close: () =>
      new Promise((resolve) => {
        for (const t of timers) clearTimeout(t);
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
