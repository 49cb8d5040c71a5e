// What harness.mjs gives the README JavaScript blocks, as a page would have it (tsc --strict).
/** README.md: a File, e.g. from a drop or an `<input type="file">`. */
declare const file: File;
/** wasm/README.md: an `<input type="file">` the user has picked a file with. */
declare const input: HTMLInputElement & { readonly files: FileList };
/** wasm/README.md: a file's URL and a bearer token for it. */
declare const url: string;
declare const token: string;
/** wasm/README.md's esbuild block: esbuild's `file` loader turns an imported .wasm file into its URL. */
declare module '*.wasm' {
  const url: string;
  export default url;
}
