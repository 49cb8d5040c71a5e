// Debian's nginx (scripts/setup.sh nginx) serving a folder, as a real static
// host does: single ranges (206), ETag and Last-Modified, If-Range. It runs
// as one foreground process (no master, no workers, so no switch to another
// user who could not read the folder) on 127.0.0.1 and a free port, with its
// configuration, logs, pid and temporary folders in a folder of its own, so
// it needs no root and leaves the system's nginx alone. Its access log
// records each answer: status, Range, If-Range and body bytes.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { skipReason } from './env.js';
import { freePort } from './ports.js';

export const NGINX = process.env.NGINX ?? '/usr/sbin/nginx';

// What is asked while waiting for nginx to answer (left out of its answers).
const PROBE = '/.nginx-server-ready';

/** Why nginx cannot be used, or null when it can (see skipReason: under CI, thrown). */
export function nginxMissing() {
  return skipReason(existsSync(NGINX) ? null : `${NGINX} is missing: run scripts/setup.sh nginx`);
}

function config(home, root, port, { etag, directives }) {
  // Values inside double quotes: nginx's own escapes for the paths.
  const q = (path) => `"${path.replace(/["\\]/g, '\\$&')}"`;
  return `daemon off;
master_process off;
pid ${q(join(home, 'nginx.pid'))};
error_log ${q(join(home, 'error.log'))} warn;
events { worker_connections 64; }
http {
  default_type application/octet-stream;
  client_body_temp_path ${q(join(home, 'temp', 'body'))};
  proxy_temp_path ${q(join(home, 'temp', 'proxy'))};
  fastcgi_temp_path ${q(join(home, 'temp', 'fastcgi'))};
  uwsgi_temp_path ${q(join(home, 'temp', 'uwsgi'))};
  scgi_temp_path ${q(join(home, 'temp', 'scgi'))};
  log_format answers '$status $request_method $uri "$http_range" "$http_if_range" $body_bytes_sent';
  access_log ${q(join(home, 'access.log'))} answers;
  server {
    listen 127.0.0.1:${port};
    root ${q(root)};
    etag ${etag ? 'on' : 'off'};
${directives.map((d) => `    ${d}\n`).join('')}  }
}
`;
}

// One logged answer: { status, method, path, range, ifRange, bytes } (a
// header nginx did not get is null).
function parseLine(line) {
  const m = /^(\d{3}) (\S+) (\S+) "(.*)" "(.*)" (\d+)$/.exec(line);
  if (m === null) throw new Error(`unexpected nginx access log line: ${line}`);
  // (nginx writes a quote or backslash of a header as \x22 or \x5C.)
  const header = (v) =>
    v === '-' ? null : v.replace(/\\x([0-9A-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
  return {
    status: Number(m[1]),
    method: m[2],
    path: m[3],
    range: header(m[4]),
    ifRange: header(m[5]),
    bytes: Number(m[6]),
  };
}

// Starts nginx on `port`; resolves once it answers, rejects when it exits first.
function launch(home, root, port, options) {
  const conf = join(home, 'nginx.conf');
  writeFileSync(conf, config(home, root, port, options));
  const child = spawn(NGINX, ['-p', `${home}/`, '-c', conf, '-e', join(home, 'error.log')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const failed = new Promise((_, reject) => {
    child.once('error', (e) => reject(new Error(`could not run ${NGINX}: ${e.message}`)));
    exited.then(({ code, signal }) => {
      const log = existsSync(join(home, 'error.log')) ? readFileSync(join(home, 'error.log'), 'utf8') : '';
      reject(
        Object.assign(new Error(`nginx exited (${code ?? signal}): ${stderr}${log}`), { clash: /in use/.test(log) }),
      );
    });
  });
  let gone = false;
  exited.then(() => {
    gone = true;
  });
  const answers = (async () => {
    while (!gone) {
      try {
        await fetch(`http://127.0.0.1:${port}${PROBE}`, { method: 'HEAD' });
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  })();
  return Promise.race([answers, failed]).then(
    () => ({ child, exited }),
    (e) => {
      child.kill();
      throw e;
    },
  );
}

/**
 * Serves `dir` with nginx; resolves to { base, requests(count), close() }
 * once it answers. `requests(count)` resolves to the answers logged since
 * the last call, once there are at least `count` of them (nginx logs a
 * request when it is done with it, which can be after the client has its
 * answer) or after 5 s.
 * `etag: false` serves without ETags (Last-Modified only); `directives` go
 * into the server block as they are (e.g. 'max_ranges 0;').
 */
export async function startNginx(dir, { etag = true, directives = [] } = {}) {
  const why = nginxMissing();
  if (why !== null) throw new Error(why);
  const home = mkdtempSync(join(tmpdir(), 'stn-nginx-'));
  for (const t of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(home, 'temp', t), { recursive: true });
  const remove = () => rmSync(home, { recursive: true, force: true });
  process.on('exit', remove);
  let started;
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    try {
      started = { port, ...(await launch(home, dir, port, { etag, directives })) };
      break;
    } catch (e) {
      if (!e.clash || attempt === 4) throw e;
    }
  }
  const log = join(home, 'access.log');
  const lines = () => (existsSync(log) ? readFileSync(log, 'utf8') : '').split('\n').filter((l) => l !== '');
  let seen = 0;
  return {
    base: `http://127.0.0.1:${started.port}/`,
    async requests(count = 0) {
      const fresh = () => lines().filter((l) => !l.includes(` ${PROBE} `));
      for (const until = Date.now() + 5000; fresh().length - seen < count && Date.now() < until; )
        await new Promise((r) => setTimeout(r, 10));
      const all = fresh();
      const answers = all.slice(seen).map(parseLine);
      seen = all.length;
      return answers;
    },
    async close() {
      started.child.kill();
      await started.exited;
      remove();
    },
  };
}
