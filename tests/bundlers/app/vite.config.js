// Vite 6: top-level await needs an es2022 target (Vite 6 builds for
// es2020 by default), and the dev server must not pre-bundle the package,
// which would move its code away from its .wasm files.
export default { build: { target: 'es2022' }, optimizeDeps: { exclude: ['safetensors-nano'] } };
