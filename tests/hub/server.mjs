// A local stand-in for the Hugging Face Hub, for tests: two origins on
// 127.0.0.1 (ephemeral ports), the API `endpoint` and the `cdn`, answering
// as the real Hub does (learned from huggingface_hub's file_download.py,
// utils/_http.py and the Hub's docs). Node built-ins only.
//
// Repositories are folders under ROOT:
//   ROOT/<org>/<name>/<path…>        file <path> of repo org/name at revision `main`
//   ROOT/<org>/<name>@<rev>/<path…>  the same at revision <rev>; a `/` in <rev> is
//                                    written %2F (encodeURIComponent), e.g.
//                                    `name@refs%2Fpr%2F1` for refs/pr/1
// Each revision has a made-up commit hash (sent as X-Repo-Commit); that hash
// is accepted as a revision too.
//
// Endpoint, `GET|HEAD /<org>/<name>/resolve/<revision>/<path…>` (revision as
// one segment, its `/` encoded, as hf_hub_url writes it):
// - a "regular" file (git, not LFS: under 10 MiB and not a weights file) is
//   served directly: 200/206/416 with Range, ETag = its git blob sha1;
// - an "LFS" file (≥ 10 MiB, or *.safetensors, *.bin, *.gguf, …) answers
//   302 to a signed CDN URL (`?Expires=…&Signature=…`, valid one hour), with
//   Location, X-Linked-Size, X-Linked-Etag and ETag (its sha256, quoted);
// - both carry X-Repo-Commit.
// Errors are JSON `{"error": …}` with X-Error-Code (and X-Error-Message):
// - 404 RepoNotFound (no such repo), RevisionNotFound, EntryNotFound;
// - a gated repo (`gated`: "org/name" → token) without `Authorization:
//   Bearer <token>`: 401 GatedRepo; with another token: 403 GatedRepo;
// - a private repo (`private`: "org/name" → token) without the right token:
//   401 RepoNotFound, as the Hub answers so as not to tell it exists.
// (The real Hub also answers 401 RepoNotFound to an anonymous request for a
// repo that does not exist; here that is a 404, so tests can tell them apart.)
//
// CDN: `GET|HEAD` of a signed URL serves the file's current bytes (the URL
// names the repo path, not a content hash, so a test can replace a file and
// see a client notice: ETag = sha256, quoted). Range (206, Content-Range),
// If-Range, 416, Accept-Ranges. It needs no token; a request that brings an
// Authorization header anyway gets 400, as S3 answers a request with two
// kinds of authentication (so a leaked token fails loudly). A bad or expired
// signature gets 403.
//
// Both origins answer CORS: `Access-Control-Allow-Origin: *`, the Hub's
// headers exposed, and OPTIONS preflights allowing Range, Authorization and
// If-Range.
//
// As a program: `node tests/hub/server.mjs ROOT [--gated org/name=TOKEN]…
// [--private org/name=TOKEN]… [--delay MS]` prints one line of JSON,
// {"endpoint": …, "cdn": …}, then serves until SIGTERM/SIGINT, or until its
// stdin closes when stdin is a pipe (so a parent that dies takes it along).

import { createServer } from 'node:http';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createReadStream, readdirSync, statSync, fstatSync } from 'node:fs';
import { join, resolve, sep, extname } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Files larger than this are stored by git LFS (redirected to the CDN). */
export const LFS_THRESHOLD = 10 * 1024 * 1024;
const LFS_EXTENSIONS = new Set(['.safetensors', '.bin', '.pt', '.pth', '.gguf', '.onnx', '.h5', '.msgpack', '.ckpt']);
/** Seconds a signed CDN URL stays valid. */
export const SIGNED_URL_LIFETIME = 3600;

const EXPOSED = [
  'Content-Range',
  'Content-Length',
  'Content-Type',
  'Accept-Ranges',
  'ETag',
  'Location',
  'X-Linked-Size',
  'X-Linked-Etag',
  'X-Repo-Commit',
  'X-Error-Code',
  'X-Error-Message',
].join(', ');
const CORS = { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': EXPOSED };

// Digests by file, kept while the file's size and mtime stay the same.
const digests = new Map();

async function digest(file, st, algorithm) {
  const key = `${algorithm}:${file}`;
  const stamp = `${st.size}:${st.mtimeMs}`;
  const known = digests.get(key);
  if (known?.stamp === stamp) return known.hex;
  const hash = createHash(algorithm);
  if (algorithm === 'sha1') hash.update(`blob ${st.size}\0`); // git's blob id
  for await (const chunk of createReadStream(file)) hash.update(chunk);
  const hex = hash.digest('hex');
  digests.set(key, { stamp, hex });
  return hex;
}

function parseRange(header, size) {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    return suffix === 0 ? null : { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return null;
  return { start, end };
}

/** The made-up commit hash of a repo's revision. */
const commitOf = (repo, revision) => createHash('sha1').update(`${repo}@${revision}`).digest('hex');

const readDir = (dir) => {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
};

/**
 * Starts the two origins.
 * @param {object} o
 * @param {string} o.root the folder of repositories (layout above)
 * @param {Record<string, string>} [o.gated] "org/name" → the token that opens it
 * @param {Record<string, string>} [o.private] "org/name" → the token that opens it
 * @param {number} [o.delay=0] ms every answer waits before it is sent
 * @returns {Promise<{endpoint: string, cdn: string, requests: object[], close: () => Promise<void>}>}
 *   `requests` logs each request as { method, origin: 'endpoint'|'cdn', path
 *   (with its query), headers (lower-case names, incl. authorization and
 *   range), status, bytes (body bytes sent) }.
 */
export async function startHub({ root, gated = {}, private: hidden = {}, delay = 0 }) {
  const base = resolve(root);
  const secret = randomBytes(32);
  const requests = [];
  let cdnOrigin = '';

  const sign = (path, expires) => createHmac('sha256', secret).update(`${path}\n${expires}`).digest('hex');

  /** The folder of `repo` at `revision`, or an error code. */
  const locate = (repo, revision) => {
    const [org, name] = repo.split('/');
    const main = join(base, org, name);
    const atRev = join(base, org, `${name}@${encodeURIComponent(revision)}`);
    if (revision === 'main' && readDir(main)) return { dir: main, revision };
    if (readDir(atRev)) return { dir: atRev, revision };
    // A commit hash names the revision it was made up for.
    if (/^[0-9a-f]{40}$/.test(revision)) {
      if (readDir(main) && commitOf(repo, 'main') === revision) return { dir: main, revision: 'main' };
      for (const candidate of revisionsOf(org, name)) {
        if (commitOf(repo, candidate) === revision)
          return { dir: join(base, org, `${name}@${encodeURIComponent(candidate)}`), revision: candidate };
      }
    }
    const exists = readDir(main) || revisionsOf(org, name).length > 0;
    return { error: exists ? 'RevisionNotFound' : 'RepoNotFound' };
  };

  const revisionsOf = (org, name) => {
    try {
      return readdirSync(join(base, org))
        .filter((n) => n.startsWith(`${name}@`))
        .map((n) => decodeURIComponent(n.slice(name.length + 1)));
    } catch {
      return [];
    }
  };

  /** The file at `rel` inside `dir`, if it is one (and stays inside). */
  const fileIn = (dir, rel) => {
    const file = resolve(dir, rel);
    if (!file.startsWith(dir + sep)) return null;
    try {
      const st = statSync(file);
      return st.isFile() ? { file, st } : null;
    } catch {
      return null;
    }
  };

  const handler = (origin) => (req, res) => {
    const url = new URL(req.url, 'http://stand-in');
    const entry = { method: req.method, origin, path: req.url, headers: { ...req.headers }, status: 0, bytes: 0 };
    requests.push(entry);
    const send = (status, headers, body) => {
      entry.status = status;
      const go = () => {
        if (typeof body === 'string') headers['Content-Length'] = String(Buffer.byteLength(body));
        res.writeHead(status, { ...CORS, ...headers });
        if (body === undefined || req.method === 'HEAD') res.end();
        else if (typeof body.pipe === 'function') {
          body.on('data', (c) => (entry.bytes += c.length));
          body.pipe(res);
        } else {
          entry.bytes = Buffer.byteLength(body);
          res.end(body);
        }
      };
      if (delay > 0) setTimeout(go, delay);
      else go();
    };
    const error = (status, code, message) => {
      send(
        status,
        { 'Content-Type': 'application/json', 'X-Error-Code': code, 'X-Error-Message': message },
        JSON.stringify({ error: message }),
      );
    };
    if (req.method === 'OPTIONS') {
      return send(204, {
        'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
        'Access-Control-Allow-Headers': 'Range, Authorization, If-Range, If-None-Match, Content-Type',
        'Access-Control-Max-Age': '600',
      });
    }
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return error(405, 'MethodNotAllowed', `${req.method} is not allowed`);
    Promise.resolve(origin === 'endpoint' ? resolveFile(req, url, send, error) : serveCdn(req, url, send, error)).catch(
      (e) => {
        if (!res.headersSent) error(500, 'Internal', String(e?.message ?? e));
      },
    );
  };

  /** Serves `file`'s bytes with Range and If-Range (ETag `etag`). */
  const serveBytes = (req, send, { file, st }, etag, extra) => {
    const size = st.size;
    const headers = {
      ...extra,
      'Content-Type': extname(file) === '.json' ? 'application/json' : 'application/octet-stream',
      'Accept-Ranges': 'bytes',
      ETag: etag,
      'Cache-Control': 'no-store',
    };
    const ifRange = req.headers['if-range'];
    const rangeHeader =
      req.headers.range && (ifRange === undefined || ifRange === etag) ? req.headers.range : undefined;
    if (rangeHeader !== undefined) {
      const r = parseRange(rangeHeader, size);
      if (r === null) return send(416, { ...headers, 'Content-Range': `bytes */${size}` });
      headers['Content-Range'] = `bytes ${r.start}-${r.end}/${size}`;
      headers['Content-Length'] = String(r.end - r.start + 1);
      return send(206, headers, createReadStream(file, { start: r.start, end: r.end }));
    }
    headers['Content-Length'] = String(size);
    return send(200, headers, size === 0 ? '' : createReadStream(file));
  };

  const resolveFile = async (req, url, send, error) => {
    // /<org>/<name>/resolve/<revision>/<path…>, each segment percent-encoded.
    const parts = url.pathname.split('/').slice(1);
    if (parts.length < 5 || parts[2] !== 'resolve') return error(404, 'EntryNotFound', 'Not found');
    let org, name, revision, rel;
    try {
      [org, name, revision] = parts
        .slice(0, 4)
        .filter((_, i) => i !== 2)
        .map(decodeURIComponent);
      rel = parts.slice(4).map(decodeURIComponent).join('/');
    } catch {
      return error(400, 'BadRequest', 'Malformed percent-encoding in the path');
    }
    const repo = `${org}/${name}`;
    const auth = req.headers.authorization;
    if (Object.hasOwn(gated, repo) && auth !== `Bearer ${gated[repo]}`) {
      const message = `Access to model ${repo} is restricted. You must have access to it and be authenticated to access it. Please log in.`;
      return error(auth === undefined ? 401 : 403, 'GatedRepo', message);
    }
    if (Object.hasOwn(hidden, repo) && auth !== `Bearer ${hidden[repo]}`) {
      return error(401, 'RepoNotFound', 'Repository not found');
    }
    const where = locate(repo, revision);
    if (where.error === 'RepoNotFound') return error(404, 'RepoNotFound', 'Repository not found');
    if (where.error) return error(404, 'RevisionNotFound', `Invalid rev id: ${revision}`);
    const found = rel === '' ? null : fileIn(where.dir, rel);
    if (!found) return error(404, 'EntryNotFound', 'Entry not found');
    const commit = commitOf(repo, where.revision);
    const lfs = found.st.size >= LFS_THRESHOLD || LFS_EXTENSIONS.has(extname(rel));
    if (!lfs) {
      const etag = `"${await digest(found.file, found.st, 'sha1')}"`;
      return serveBytes(req, send, found, etag, { 'X-Repo-Commit': commit });
    }
    const sha = await digest(found.file, found.st, 'sha256');
    const path = `/repos/${[org, name, where.revision].map(encodeURIComponent).join('/')}/${rel.split('/').map(encodeURIComponent).join('/')}`;
    const expires = Math.floor(Date.now() / 1000) + SIGNED_URL_LIFETIME;
    const location = `${cdnOrigin}${path}?Expires=${expires}&Signature=${sign(path, expires)}`;
    return send(
      302,
      {
        Location: location,
        'Content-Type': 'text/plain; charset=utf-8',
        'X-Linked-Size': String(found.st.size),
        'X-Linked-Etag': `"${sha}"`,
        ETag: `"${sha}"`,
        'X-Repo-Commit': commit,
      },
      `Found. Redirecting to ${location}`,
    );
  };

  const serveCdn = async (req, url, send) => {
    const deny = (status, code, message) =>
      send(
        status,
        { 'Content-Type': 'application/xml' },
        `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`,
      );
    if (req.headers.authorization !== undefined) {
      return deny(
        400,
        'InvalidArgument',
        'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified',
      );
    }
    const expires = Number(url.searchParams.get('Expires'));
    const signature = url.searchParams.get('Signature') ?? '';
    if (!Number.isInteger(expires) || signature !== sign(url.pathname, expires))
      return deny(403, 'AccessDenied', 'Invalid signature');
    if (expires < Date.now() / 1000) return deny(403, 'AccessDenied', 'Request has expired');
    const parts = url.pathname.split('/').slice(2).map(decodeURIComponent); // after /repos/
    const [org, name, revision] = parts;
    const where = locate(`${org}/${name}`, revision);
    const found = where.error ? null : fileIn(where.dir, parts.slice(3).join('/'));
    if (!found) return deny(404, 'NoSuchKey', 'The specified key does not exist.');
    const sha = await digest(found.file, found.st, 'sha256');
    return serveBytes(req, send, found, `"${sha}"`, {});
  };

  const listen = async (origin) => {
    const server = createServer(handler(origin));
    server.keepAliveTimeout = 1000;
    await new Promise((done) => server.listen(0, '127.0.0.1', done));
    return server;
  };
  const api = await listen('endpoint');
  const cdn = await listen('cdn');
  cdnOrigin = `http://127.0.0.1:${cdn.address().port}`;
  const stop = (server) =>
    new Promise((done) => {
      server.closeAllConnections();
      server.close(() => done());
    });
  return {
    endpoint: `http://127.0.0.1:${api.address().port}`,
    cdn: cdnOrigin,
    requests,
    close: () => Promise.all([stop(api), stop(cdn)]).then(() => undefined),
  };
}

/** Parses `ROOT [--gated org/name=TOKEN]… [--private org/name=TOKEN]… [--delay MS]`. */
function parseArgs(argv) {
  const o = { root: undefined, gated: {}, private: {}, delay: 0 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--gated' || arg === '--private') {
      const m = /^([^/=]+\/[^/=]+)=(.+)$/.exec(argv[++i] ?? '');
      if (!m) throw new Error(`${arg} expects org/name=TOKEN`);
      o[arg.slice(2)][m[1]] = m[2];
    } else if (arg === '--delay') {
      o.delay = Number(argv[++i]);
      if (!(o.delay >= 0)) throw new Error('--delay expects milliseconds');
    } else if (o.root === undefined && !arg.startsWith('--')) {
      o.root = arg;
    } else {
      throw new Error(`unexpected argument ${arg}`);
    }
  }
  if (o.root === undefined)
    throw new Error('usage: server.mjs ROOT [--gated org/name=TOKEN]… [--private org/name=TOKEN]… [--delay MS]');
  return o;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${e.message}\n`);
    process.exit(2);
  }
  const hub = await startHub(options);
  process.stdout.write(`${JSON.stringify({ endpoint: hub.endpoint, cdn: hub.cdn })}\n`);
  const quit = () => hub.close().then(() => process.exit(0));
  process.on('SIGTERM', quit);
  process.on('SIGINT', quit);
  const stdin = fstatSync(0);
  if (stdin.isFIFO() || stdin.isSocket()) {
    process.stdin.on('end', quit);
    process.stdin.on('close', quit);
    process.stdin.resume();
  }
}
