// What every sample page does with the package: open a small file made by
// hand (fromBytes, the reader's module), write a changed copy (serialize,
// the writer's module, loaded then) and reopen it. The result goes to
// `window.result` for the test to read.

/** A safetensors file: its 8-byte header length, the JSON header, the data. */
function sampleFile() {
  const header = JSON.stringify({
    __metadata__: { made: 'by hand' },
    w: { dtype: 'F32', shape: [2, 2], data_offsets: [0, 16] },
  });
  const json = new TextEncoder().encode(header.padEnd(Math.ceil(header.length / 8) * 8));
  const bytes = new Uint8Array(8 + json.length + 16);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(json.length), true);
  bytes.set(json, 8);
  new Float32Array(bytes.buffer, 8 + json.length, 4).set([1, 2, 3, 4]);
  return bytes;
}

/** Runs the check with the package's API `stn`; `extra` joins the result. */
export async function report(stn, extra = {}) {
  try {
    const st = stn.SafeTensors.fromBytes(sampleFile());
    const w = st.tensor('w');
    const out = await stn.serialize(
      { w: { dtype: 'F32', shape: [4], data: w.toFloat32().map((x) => x * 10) } },
      st.metadata(),
    );
    const again = stn.SafeTensors.fromBytes(out).tensor('w');
    window.result = {
      ...extra,
      names: st.names(),
      metadata: st.metadata(),
      w: [...w.view()],
      shape: again.shape,
      written: [...again.view()],
    };
  } catch (e) {
    window.result = { ...extra, error: String(e?.stack ?? e), kind: e?.kind };
  }
}
