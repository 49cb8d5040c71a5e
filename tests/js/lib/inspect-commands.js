// The native command the boundary fuzzing compares with: INSPECT_JSON, the
// inspect command's words (default: the CLI's release build,
// `safetensors-nano inspect`, which takes --json --no-hash FILE...). The
// Makefile builds it.

import { join } from 'node:path';

export function inspectCommands(repo) {
  const cli = join(repo, 'target', 'release', 'safetensors-nano');
  return {
    inspectCmd: (process.env.INSPECT_JSON ?? `${cli} inspect`).split(' ').filter((w) => w !== ''),
  };
}
