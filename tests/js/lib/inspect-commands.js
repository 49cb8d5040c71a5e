// The native commands the boundary fuzzing compares with: INSPECT_JSON, the
// inspect command's words (default: the core's `inspect` example; the CLI's
// `safetensors-nano inspect` takes the same FILE --json --no-hash), and
// INSPECT_MANY, the many-files-per-process twin (tests/support's
// `inspect_many` example). The Makefile builds both.

import { join } from 'node:path';

export function inspectCommands(repo) {
  const examples = join(repo, 'target', 'release', 'examples');
  return {
    inspectCmd: (process.env.INSPECT_JSON ?? join(examples, 'inspect')).split(' ').filter((w) => w !== ''),
    inspectMany: process.env.INSPECT_MANY ?? join(examples, 'inspect_many'),
  };
}
