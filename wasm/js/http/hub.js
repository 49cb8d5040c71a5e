// Models on the Hugging Face Hub by name: the Hub's URL layout
// ({endpoint}/{repo}/resolve/{revision}/{file}), its redirect of large
// (LFS) files to a signed CDN URL, which is then pinned, its token, sent to
// the endpoint alone, and its refusals (X-Error-Code) as typed errors.

import { KIND, SafeTensorsError } from '../errors/safetensors-error.js';
import { SafeTensors } from '../read/safetensors-file.js';
import { ShardedModel, openSharded } from '../shards/sharded-model.js';

/** Where openHub looks by default: the index, then a single file. */
export const HUB_DEFAULT_FILES = Object.freeze(['model.safetensors.index.json', 'model.safetensors']);
/** openHub's default `endpoint` (huggingface_hub's HF_ENDPOINT default). */
export const HUB_ENDPOINT = 'https://huggingface.co';
// Redirects followed by hand (where fetch shows them) before giving up, as
// fetch's own limit does.
const MAX_REDIRECTS = 20;

// A repo id: `name` or `org/name`, of letters, digits, `-`, `_`, `.`.
const REPO = /^(?:[\w.-]+\/)?[\w.-]+$/;

function checkRepo(repo) {
  if (typeof repo !== 'string' || !REPO.test(repo) || repo.split('/').some((s) => s === '.' || s === '..')) {
    throw new TypeError(`repo: expected "org/name" (letters, digits, "-", "_", "."), got ${JSON.stringify(repo)}`);
  }
}

function checkFile(file) {
  if (typeof file !== 'string' || file === '' || file.split('/').some((s) => s === '' || s === '.' || s === '..')) {
    throw new TypeError(
      'file: expected a path inside the repository such as "unet/diffusion_pytorch_model.safetensors", got ' +
        `${JSON.stringify(file)}`,
    );
  }
}

/**
 * The resolve URL of `file` in `repo` at `revision`, as huggingface_hub's
 * hf_hub_url writes it: each path segment percent-encoded, the revision as
 * one segment (`refs/pr/1` → `refs%2Fpr%2F1`).
 */
export function hubUrl(endpoint, repo, revision, file) {
  const base = String(endpoint).replace(/\/+$/, '');
  const path = (s) => s.split('/').map(encodeURIComponent).join('/');
  return `${base}/${path(repo)}/resolve/${encodeURIComponent(revision)}/${path(file)}`;
}

// Whether fetch hides redirects from `redirect: 'manual'` (browsers give
// an opaque answer; Node, Deno and Bun give the 3xx itself).
const HIDES_REDIRECTS =
  typeof globalThis.document !== 'undefined' || typeof globalThis.WorkerGlobalScope !== 'undefined';

/**
 * A fetch for the files of one Hub endpoint. The token goes to the
 * endpoint's origin only: where fetch shows redirects, each one is followed
 * here and a request leaving that origin loses its Authorization header;
 * where it does not (browsers), fetch follows them and drops Authorization
 * on a cross-origin redirect, as the Fetch standard says. The URL an answer
 * finally came from is pinned: later requests for the same resolve URL go
 * there directly (so ETag checks compare one file's answers), until it
 * answers 403 (a signed URL that expired: it is resolved again). The Hub's
 * first refusal (401, 403, 404 from the endpoint) is kept in `refusal`.
 */
class HubFetch {
  constructor(endpoint, token, fetchFn) {
    this.origin = new URL(endpoint).origin;
    this.token = token;
    // (Called without a receiver: window.fetch insists.)
    this.fetchFn = (input, init) => fetchFn(input, init);
    this.pinned = new Map();
    this.refusal = null;
    this.hidesRedirects = HIDES_REDIRECTS;
    this.fetch = (input, init) => this.#fetch(String(input?.url ?? input), init ?? {});
  }

  /** Where the bytes of `url` come from: the URL it is pinned to, or itself. */
  urlOf(url) {
    return this.pinned.get(url) ?? url;
  }

  #headersFor(url, given) {
    const headers = new Headers(given);
    if (new URL(url).origin !== this.origin) headers.delete('Authorization');
    else if (this.token !== undefined) headers.set('Authorization', `Bearer ${this.token}`);
    return headers;
  }

  async #fetch(url, init) {
    const pin = this.pinned.get(url);
    if (pin !== undefined) {
      const res = await this.fetchFn(pin, { ...init, headers: this.#headersFor(pin, init.headers) });
      if (res.status !== 403) return res;
      await res.body?.cancel();
      this.pinned.delete(url);
    }
    let at = url;
    for (let hops = 0; hops <= MAX_REDIRECTS; hops++) {
      const headers = this.#headersFor(at, init.headers);
      const onEndpoint = new URL(at).origin === this.origin;
      const manual = onEndpoint && !this.hidesRedirects;
      const res = await this.fetchFn(at, { ...init, headers, redirect: manual ? 'manual' : 'follow' });
      if (res.type === 'opaqueredirect') {
        // (A browser after all: fetch follows from now on.)
        this.hidesRedirects = true;
        hops--;
        continue;
      }
      const location = res.status >= 300 && res.status < 400 ? res.headers.get('Location') : null;
      if (manual && location !== null) {
        await res.body?.cancel();
        at = new URL(location, at).href;
        continue;
      }
      const final = res.redirected && res.url ? res.url : at;
      if (onEndpoint && final === at) this.#noteRefusal(res, url);
      if (final !== url && res.status >= 200 && res.status < 300) this.pinned.set(url, final);
      return res;
    }
    // (http/request.js reads a redirect loop from the cause's message.)
    throw new TypeError('fetch failed', { cause: new Error(`more than ${MAX_REDIRECTS} redirects`) });
  }

  #noteRefusal(res, url) {
    if (this.refusal !== null || ![401, 403, 404].includes(res.status)) return;
    this.refusal = {
      status: res.status,
      code: res.headers.get('X-Error-Code'),
      message: res.headers.get('X-Error-Message'),
      url,
    };
  }
}

/** The file a resolve URL names (its path after the revision), decoded. */
function fileOf(url, prefix) {
  return url.startsWith(prefix) ? url.slice(prefix.length).split('/').map(decodeURIComponent).join('/') : url;
}

/**
 * The typed error for the Hub's refusal `r` of a request for `repo`'s
 * files: HubUnauthorized (401/403) or HubNotFound (404), naming the files
 * tried.
 */
function hubError(r, { repo, revision, endpoint, token, tried, via, cause }) {
  const answer = `${r.status}${r.code ? ` ${r.code}` : ''}${r.message ? `: ${r.message}` : ''}`;
  const where = `${repo} at revision ${JSON.stringify(revision)} on ${endpoint}`;
  if (r.status === 401 || r.status === 403) {
    const why = r.code === 'RepoNotFound' ? 'does not exist or is private' : 'is gated or private';
    const next =
      token === undefined
        ? 'pass { token } of an account with access (for a gated model, accept its terms on its page first)'
        : "the token given has no access: accept the model's terms on its page, or pass a token of an account that " +
          'has access';
    return new SafeTensorsError(
      KIND.HubUnauthorized,
      `${where} ${why} (the Hub answered ${answer} for ${tried.at(-1)}): ${next}`,
      { cause },
    );
  }
  if (r.code === 'RepoNotFound') {
    return new SafeTensorsError(
      KIND.HubNotFound,
      `${repo} is not a repository on ${endpoint} (404 RepoNotFound, looking for ${tried.join(', ')}): check the ` +
        'name ("org/name")',
      { cause },
    );
  }
  if (r.code === 'RevisionNotFound') {
    return new SafeTensorsError(
      KIND.HubNotFound,
      `${repo} has no revision ${JSON.stringify(revision)} on ${endpoint} (404 RevisionNotFound, looking for ` +
        `${tried.join(', ')}): check the branch, tag or commit`,
      { cause },
    );
  }
  if (via !== undefined) {
    return new SafeTensorsError(
      KIND.HubNotFound,
      `${where} has no ${tried.at(-1)}, which its index ${via} names (the Hub answered ${answer})`,
      { cause },
    );
  }
  return new SafeTensorsError(
    KIND.HubNotFound,
    `${where} has none of the files tried: ${tried.join(', ')} (the Hub answered ${answer}); pass { file } to name ` +
      `the model's file or index (e.g. "unet/diffusion_pytorch_model.safetensors")`,
    { cause },
  );
}

/** A single file as a one-shard model, under an index made from its header. */
function oneShard(file, name) {
  const weight_map = Object.fromEntries(file.names().map((n) => [n, name]));
  const index = { metadata: { total_size: file.fileSize - file.dataOffset }, weight_map };
  return new ShardedModel(index, [{ name, file }]);
}

/**
 * Opens a model on the Hub by its name (see index.d.ts): its index (a
 * `.json` file: its shards are fetched from beside it) or its single file,
 * `model.safetensors.index.json` then `model.safetensors` by default.
 */
export async function openHub(
  repo,
  { revision = 'main', file, endpoint = HUB_ENDPOINT, token, fetch: fetchFn = globalThis.fetch, ...options } = {},
) {
  checkRepo(repo);
  if (typeof revision !== 'string' || revision === '')
    throw new TypeError('revision: expected a branch, tag or commit name');
  if (file !== undefined) checkFile(file);
  if (token !== undefined && (typeof token !== 'string' || token === '' || /[\r\n]/.test(token))) {
    throw new TypeError('token: expected a Hub access token (a non-empty string)');
  }
  let base;
  try {
    base = new URL(String(endpoint));
  } catch (e) {
    throw new TypeError(`endpoint: expected an http(s) URL, got ${JSON.stringify(String(endpoint))}`, { cause: e });
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw new TypeError(`endpoint: expected an http(s) URL, got ${JSON.stringify(String(endpoint))}`);
  const shown = String(endpoint).replace(/\/+$/, '');
  const prefix = hubUrl(shown, repo, revision, '');
  const candidates = file === undefined ? HUB_DEFAULT_FILES : [file];
  const tried = [];
  for (const name of candidates) {
    const hub = new HubFetch(shown, token, fetchFn);
    const url = hubUrl(shown, repo, revision, name);
    tried.push(name);
    try {
      const model = name.endsWith('.json')
        ? await openSharded(url, [], { ...options, fetch: hub.fetch })
        : oneShard(
            await SafeTensors.fromUrl(url, { ...options, fetch: hub.fetch }),
            name.slice(name.lastIndexOf('/') + 1),
          );
      const shards = model.shards.map((shard) => Object.assign(shard, { url: hub.urlOf(shard.file._source.url) }));
      return Object.assign(model, { file: name, shards });
    } catch (e) {
      const r = hub.refusal;
      if (r === null) throw e;
      const refused = fileOf(r.url, prefix);
      if (refused !== name) tried.push(refused);
      const another =
        r.status === 404 && r.code !== 'RepoNotFound' && r.code !== 'RevisionNotFound' && refused === name;
      if (another && name !== candidates.at(-1)) continue;
      throw hubError(r, {
        repo,
        revision,
        endpoint: shown,
        token,
        tried,
        via: refused === name ? undefined : name,
        cause: e,
      });
    }
  }
}
