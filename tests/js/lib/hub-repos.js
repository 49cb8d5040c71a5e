// Repositories for the Hub stand-in (tests/hub/server.mjs) and a way to
// start it over them: the tests of openHub (Node and Chromium) and of the
// viewer's ?hub= use the same ones.

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tensorFile } from './format.js';
import { repo, scratch } from './env.js';

/** The token that opens org/gated. */
export const GATED_TOKEN = 'hf_standin_gated_token';

const f32 = (...v) => new Float32Array(v);
const shardNames = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];

/** A two-shard model (index + shards) whose tensors' values are `k` + i. */
function sharded(k) {
  const one = tensorFile([
    ['embed.weight', 'F32', [2, 2], f32(k, k + 1, k + 2, k + 3)],
    ['layers.0.w', 'F32', [2], f32(k + 4, k + 5)],
  ]);
  const two = tensorFile([
    ['layers.1.w', 'F32', [2], f32(k + 6, k + 7)],
    ['lm_head.weight', 'F32', [1], f32(k + 8)],
  ]);
  const index = {
    metadata: { total_size: 16 + 8 + 8 + 4 },
    weight_map: {
      'embed.weight': shardNames[0],
      'layers.0.w': shardNames[0],
      'layers.1.w': shardNames[1],
      'lm_head.weight': shardNames[1],
    },
  };
  return { 'model.safetensors.index.json': JSON.stringify(index, null, 2), [shardNames[0]]: one, [shardNames[1]]: two };
}

const single = (name, values) =>
  tensorFile([[name, 'F32', [values.length], f32(...values)]], { metadata: { format: 'pt' } });

/**
 * The repositories, as { "org/name[@rev]": { path: bytes or text } }:
 * - org/sharded: an index and two shards; at refs/pr/1 the same model with other values;
 * - org/single: model.safetensors alone;
 * - org/diffusion: no top-level model, unet/diffusion_pytorch_model.safetensors
 *   and text_encoder/ with an index and its shards;
 * - org/gated: a single file behind GATED_TOKEN;
 * - org/docs: a repository without any model file;
 * - org/broken: an index naming a shard that is not there.
 */
export const REPOS = {
  'org/sharded': sharded(0),
  'org/sharded@refs/pr/1': sharded(100),
  'org/single': { 'model.safetensors': single('w', [1, 2, 3]), 'config.json': '{}' },
  'org/diffusion': {
    'unet/diffusion_pytorch_model.safetensors': single('conv_in.weight', [7, 8]),
    ...Object.fromEntries(Object.entries(sharded(50)).map(([k, v]) => [`text_encoder/${k}`, v])),
  },
  'org/gated': { 'model.safetensors': single('secret', [42]) },
  'org/docs': { 'README.md': '# nothing to see' },
  'org/broken': {
    'model.safetensors.index.json': sharded(0)['model.safetensors.index.json'],
    [shardNames[0]]: sharded(0)[shardNames[0]],
  },
};

/** Writes `repos` under a new scratch folder (the stand-in's layout); returns the folder. */
export function writeRepos(repos = REPOS) {
  const root = scratch('stn-hub-');
  for (const [id, files] of Object.entries(repos)) {
    const [name, rev] = id.split('@');
    const dir = join(root, rev === undefined ? name : `${name}@${encodeURIComponent(rev)}`);
    for (const [path, bytes] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), bytes);
    }
  }
  return root;
}

/**
 * Starts the stand-in over REPOS (org/gated behind GATED_TOKEN); resolves
 * to its { endpoint, cdn, requests, close } and the `root` folder.
 */
export async function startHubStandIn(options = {}) {
  const { startHub } = await import(pathToFileURL(join(repo, 'tests', 'hub', 'server.mjs')).href);
  const root = writeRepos();
  const hub = await startHub({ root, gated: { 'org/gated': GATED_TOKEN }, ...options });
  return { ...hub, root };
}
