// The hand-written declarations of the npm package (wasm/js/index.d.ts, facts.d.ts,
// webgpu/index.d.ts) against the code they declare. tsc cannot see an entry's JS while a .d.ts
// sits beside it, so the ES layer is copied without its hand-written .d.ts files into
// target/declarations/code/, and tests/js/types/declarations.ts, compiled with allowJs, fails
// when the two disagree: a value or class member on one side only, a parameter count, or a
// return type tsc can see in the code (see that file for what it cannot).
//
// Usage: node scripts/check-declarations.mjs        (make lint; needs tests/js's typescript)

import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(repo, 'target', 'declarations');
const code = join(out, 'code');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
// The generated .d.ts files stay: the code imports their modules, which xtask writes with both.
cpSync(join(repo, 'wasm', 'js'), code, {
  recursive: true,
  filter: (f) => !f.endsWith('.d.ts') || relative(join(repo, 'wasm', 'js'), f).startsWith('generated'),
});
// The wasm-bindgen glue the package adds beside the entries: only its exports' names matter here.
for (const name of ['safetensors_nano_wasm', 'safetensors_nano_writer']) {
  writeFileSync(
    join(code, `${name}.d.ts`),
    'export default function init(input?: unknown): Promise<unknown>;\nexport function initSync(module: unknown): unknown;\n',
  );
}
const config = {
  compilerOptions: {
    strict: false,
    allowJs: true,
    checkJs: false,
    noEmit: true,
    skipLibCheck: true,
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    lib: ['es2023', 'dom', 'dom.iterable'],
    // The WebGPU types, for webgpu/index.d.ts and the code's JSDoc (both outside tests/js).
    types: ['@webgpu/types'],
    typeRoots: [join(repo, 'tests', 'js', 'node_modules')],
  },
  files: [join(repo, 'tests', 'js', 'types', 'declarations.ts')],
};
writeFileSync(join(out, 'tsconfig.json'), JSON.stringify(config, null, 2));
const tsc = createRequire(join(repo, 'tests', 'js', 'package.json')).resolve('typescript/bin/tsc');
const run = spawnSync(process.execPath, [tsc, '-p', join(out, 'tsconfig.json')], { stdio: 'inherit' });
process.exit(run.status ?? 1);
