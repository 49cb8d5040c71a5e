// Opening a model from the Hugging Face Hub by name: the page's ?hub=org/name (with revision,
// file and endpoint), and the "Open from the Hub" form. The access token, for gated and private
// models, lives in the form's field and in this page's memory only: it is never put in the
// address, in storage or in a cookie, and the package sends it to the Hub's endpoint alone.

import { openHubModel } from './model.js';

const $ = (id) => document.getElementById(id);
const DEFAULT_ENDPOINT = 'https://huggingface.co';

/**
 * What to open from the Hub, from the page's query (?hub=org/name&revision=…&file=…&endpoint=…),
 * or null when there is no ?hub=.
 */
export function hubFromQuery(params) {
  const repo = params.get('hub');
  if (!repo) return null;
  return {
    repo,
    revision: params.get('revision') || undefined,
    file: params.get('file') || undefined,
    endpoint: params.get('endpoint') || undefined,
  };
}

/** The query naming `what` (never the token), for the address bar: a shareable link. */
export function hubQuery({ repo, revision, file, endpoint }) {
  const q = new URLSearchParams({ hub: repo });
  if (revision) q.set('revision', revision);
  if (file) q.set('file', file);
  if (endpoint && endpoint !== DEFAULT_ENDPOINT) q.set('endpoint', endpoint);
  return `?${q}`;
}

/**
 * What the form's field names: `org/name`, optionally `@revision` after the name (a `/` in it
 * written %2F, as in hf:// paths) and a file path after that: `org/name@v1/unet/x.safetensors`.
 */
export function parseHubField(text) {
  const m = /^([\w.-]+\/[\w.-]+?)(?:@([^/]+))?(?:\/(.+))?$/.exec(text.trim());
  if (!m) return null;
  return { repo: m[1], revision: m[2] === undefined ? undefined : decodeURIComponent(m[2]), file: m[3] };
}

/** The form's field text for `what` (the inverse of parseHubField). */
function fieldText({ repo, revision, file }) {
  return `${repo}${revision ? `@${encodeURIComponent(revision)}` : ''}${file ? `/${file}` : ''}`;
}

/**
 * Wires the form. `open(fn, label, query)` runs an open the page's way. `endpoint` is the Hub the
 * page was pointed at (?endpoint=), shown beside the token field when it is not huggingface.co,
 * since the token goes there.
 */
export function wireHubForm({ open, endpoint }) {
  const where = $('hub-endpoint');
  if (endpoint && endpoint !== DEFAULT_ENDPOINT) {
    where.textContent = `Hub: ${endpoint}`;
    where.title = `The token is sent to ${endpoint} only`;
    where.hidden = false;
  }
  $('hub-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const what = parseHubField($('hub-repo').value);
    if (!what) {
      $('hub-repo').setCustomValidity('A Hub model is named org/name (optionally @revision and a file path after it)');
      $('hub-repo').reportValidity();
      return;
    }
    $('hub-repo').setCustomValidity('');
    openFromHub({ ...what, endpoint }, open);
  });
  $('hub-repo').addEventListener('input', () => $('hub-repo').setCustomValidity(''));
}

/** Opens `what` from the Hub, with the token the field holds now (if any). */
export function openFromHub(what, open) {
  $('hub-repo').value = fieldText(what);
  const token = $('hub-token').value.trim() || undefined;
  return open(() => openHubModel({ ...what, token }), fieldText(what), hubQuery(what));
}
