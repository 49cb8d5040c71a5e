// `make fuzz`'s run of the differential fuzzing across the JS boundary
// (lib/boundary.js): the seeds and a million generated files (or the count
// given) through the packed package's fromBytes and the native inspect.
//
//   node run.mjs fuzz [COUNT] [SEED]     (from tests/js, via run.mjs)

import * as stn from 'safetensors-nano';
import { join } from 'node:path';
import { runBoundary } from './lib/boundary.js';
import { repo } from './lib/env.js';
import { inspectCommands } from './lib/inspect-commands.js';

const count = Number(process.argv[2] ?? 1_000_000);
const seed = Number(process.argv[3] ?? Date.now() % 1e9);
const t0 = performance.now();
const stats = await runBoundary({
  stn,
  repo,
  count,
  seed,
  ...inspectCommands(repo),
  crossEvery: 5000,
  outDir: join(repo, 'test-output', 'boundary'),
  log: (line) => console.log(`boundary-fuzz: ${line}`),
});
const s = ((performance.now() - t0) / 1000).toFixed(0);
console.log(
  `boundary-fuzz: seed ${seed}: ${stats.cases} cases (${stats.seeds} seeds) in ${s} s: ${stats.agreed} identical, ${stats.allowed} refused above 2^53 by JS only, ${stats.crossChecked} checked against the inspect command, ${stats.disagreements.length} disagreements`,
);
for (const d of stats.disagreements.slice(0, 20)) console.log(`  ${d.case}: ${d.what}${d.file ? ` (${d.file})` : ''}`);
process.exit(stats.disagreements.length === 0 ? 0 : 1);
