// Preloaded (node --import) before each README JavaScript block, which runs unchanged: what a
// page would give it. The names are declared for tsc in globals.d.ts.
//   file, input.files[0]  a File of the fixture model.safetensors (as from a drop or a file input)
//   url, token            the fixture served over HTTP with Range support, and a bearer token
//   fetch                 the page's fetch: a relative URL is resolved against the page
//                         (the test server; for a bundled block, the folder the bundler wrote),
//                         and https://host/ (the README's example host) is that server too;
//                         https://huggingface.co/ is the Hub stand-in, where acme/tiny-llama
//                         is the same sharded model, gated behind `token`
import { readFileSync } from 'node:fs';

const base = process.env.SNIPPET_BASE;
const fixture = process.env.SNIPPET_FIXTURE;
// The Hub stand-in (tests/hub/server.mjs) that stands for https://huggingface.co/.
const hub = process.env.SNIPPET_HUB ? `${process.env.SNIPPET_HUB}/` : null;
if (!base || !fixture) throw new Error('harness.mjs: SNIPPET_BASE and SNIPPET_FIXTURE are set by snippets.mjs');

const model = new File([readFileSync(fixture)], 'model.safetensors');
globalThis.file = model;
globalThis.input = { type: 'file', files: [model] };
globalThis.url = new URL('model.safetensors', base).href;
globalThis.token = 'token';

const nodeFetch = globalThis.fetch;
globalThis.fetch = (resource, init) => {
  let href = resource instanceof Request ? resource.url : String(resource);
  href = new URL(href, base).href.replace(/^https:\/\/host\//, base);
  if (hub) href = href.replace(/^https:\/\/huggingface\.co\//, hub);
  return nodeFetch(resource instanceof Request ? new Request(href, resource) : href, init);
};
