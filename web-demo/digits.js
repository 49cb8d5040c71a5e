// The digits page: the firmware's model (built by scripts/train_digits.py
// into vendor/digits/ by scripts/build-demo.sh) on the GPU through
// safetensors-nano/webgpu, or on the CPU (wasm decode + JS) where the
// browser has no WebGPU, or with ?backend=cpu. The page states which.
//
// For tests, <body> carries data-state ("loading", "ready", "failed") and
// data-backend ("gpu", "cpu"); #samples-result carries data-predictions
// (one digit per sample) once the samples ran.

import { SafeTensors } from './vendor/safetensors-nano/index.js';
import { CLASSES, GpuMlp, PIXELS, argmax, cpuLogits, loadCpuWeights } from './mlp.js';

const $ = (id) => document.getElementById(id);
const MODEL_URL = new URL('vendor/digits/model.safetensors', location.href);
const SAMPLES_URL = new URL('vendor/digits/samples.safetensors', location.href);

/** A classifier: logits of n images of 64 pixels (Uint8Array). */
async function gpuClassifier(model) {
  if (!navigator.gpu) throw new Error('this browser has no navigator.gpu');
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw new Error('no WebGPU adapter');
  const device = await adapter.requestDevice();
  const mlp = await GpuMlp.load(device, model);
  return {
    backend: 'gpu',
    label:
      `WebGPU (${adapter.info?.architecture || adapter.info?.vendor || 'adapter'}): ` +
      'weights streamed to GPU buffers and decoded there, MLP in WGSL',
    async logits(pixels, n) {
      const b = mlp.pixelBuffer(pixels);
      try {
        return await mlp.logits(b, n);
      } finally {
        b.destroy();
      }
    },
  };
}

async function cpuClassifier(model, why) {
  const weights = await loadCpuWeights(model);
  return {
    backend: 'cpu',
    label: `${why}: running on the CPU (weights decoded by the package's wasm, MLP in JavaScript)`,
    logits: async (pixels, n) => cpuLogits(weights, pixels, n),
  };
}

// ---- Drawing: strokes on a 256 × 256 pad, scaled to the model's 8 × 8 input.

/**
 * The 8 × 8 pixels (0..16) of what is drawn on `pad`: the ink's bounding
 * square (digits in the training set fill their box) averaged over 8 × 8
 * blocks; null when nothing is drawn.
 */
function padPixels(pad) {
  const { width, height } = pad;
  const ink = pad.getContext('2d').getImageData(0, 0, width, height).data;
  let [x0, y0, x1, y1] = [width, height, -1, -1];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (ink[4 * (y * width + x)] > 0) {
        x0 = Math.min(x0, x);
        x1 = Math.max(x1, x);
        y0 = Math.min(y0, y);
        y1 = Math.max(y1, y);
      }
    }
  }
  if (x1 < 0) return null;
  const side = Math.max(x1 - x0, y1 - y0) + 1;
  const left = (x0 + x1 + 1) / 2 - side / 2;
  const top = (y0 + y1 + 1) / 2 - side / 2;
  const out = new Uint8Array(PIXELS);
  const sums = new Float64Array(PIXELS);
  const counts = new Float64Array(PIXELS);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const gx = Math.floor(((x - left) / side) * 8);
      const gy = Math.floor(((y - top) / side) * 8);
      if (gx < 0 || gx > 7 || gy < 0 || gy > 7) continue;
      sums[gy * 8 + gx] += ink[4 * (y * width + x)] / 255;
      counts[gy * 8 + gx]++;
    }
  }
  for (let i = 0; i < PIXELS; i++) out[i] = counts[i] === 0 ? 0 : Math.round((16 * sums[i]) / counts[i]);
  return out;
}

function drawPixels(canvas, pixels, at = 0) {
  const img = new ImageData(8, 8);
  for (let i = 0; i < PIXELS; i++) {
    const v = Math.round((pixels[at + i] / 16) * 255);
    img.data.set([v, v, v, 255], 4 * i);
  }
  canvas.getContext('2d').putImageData(img, 0, 0);
}

function showScores(logits) {
  const max = Math.max(...logits);
  const exp = [...logits].map((v) => Math.exp(v - max));
  const sum = exp.reduce((a, b) => a + b, 0);
  $('scores').replaceChildren(
    ...exp.map((e, j) => {
      const li = document.createElement('li');
      const bar = document.createElement('span');
      bar.className = 'bar';
      bar.style.width = `${(100 * e) / sum}%`;
      li.append(String(j), bar);
      li.title = `logit ${logits[j].toFixed(3)}`;
      return li;
    }),
  );
}

function setupPad(classify) {
  const pad = $('pad');
  const ctx = pad.getContext('2d');
  // Each drawing is numbered, and only the latest one's classification is
  // shown: a stroke's result can arrive after a later stroke's (or a clear).
  // `data-busy` marks the pad while the latest is being classified.
  let drawing = 0;
  const clear = () => {
    drawing++;
    delete pad.dataset.busy;
    ctx.fillStyle = '#000';
    ctx.fillRect(0, 0, pad.width, pad.height);
    $('prediction').textContent = '–';
    $('scores').replaceChildren();
  };
  clear();
  let last = null;
  const at = (e) => {
    const r = pad.getBoundingClientRect();
    return [((e.clientX - r.left) * pad.width) / r.width, ((e.clientY - r.top) * pad.height) / r.height];
  };
  pad.addEventListener('pointerdown', (e) => {
    last = at(e);
    pad.setPointerCapture?.(e.pointerId);
  });
  pad.addEventListener('pointermove', (e) => {
    if (last === null) return;
    const p = at(e);
    ctx.strokeStyle = '#fff';
    ctx.lineWidth = 22;
    ctx.lineCap = 'round';
    ctx.beginPath();
    ctx.moveTo(...last);
    ctx.lineTo(...p);
    ctx.stroke();
    last = p;
  });
  const end = async () => {
    if (last === null) return;
    last = null;
    const pixels = padPixels(pad);
    if (pixels === null) return;
    drawPixels($('preview'), pixels);
    const mine = ++drawing;
    pad.dataset.busy = 'true';
    const logits = await classify(pixels, 1);
    if (mine !== drawing) return;
    $('prediction').textContent = String(argmax(logits));
    showScores(logits);
    delete pad.dataset.busy;
  };
  pad.addEventListener('pointerup', end);
  pad.addEventListener('pointerleave', end);
  $('clear').addEventListener('click', clear);
}

async function runSamples(classifier, samples) {
  const x = await samples.tensor('x').read();
  const y = await samples.tensor('y').read();
  const n = samples.tensor('y').elementCount;
  const t0 = performance.now();
  const logits = await classifier.logits(x, n);
  const ms = performance.now() - t0;
  let predictions = '';
  let correct = 0;
  const grid = $('samples-grid');
  grid.replaceChildren();
  for (let s = 0; s < n; s++) {
    const p = argmax(logits, s, CLASSES);
    predictions += p;
    if (p === y[s]) correct++;
    const c = document.createElement('canvas');
    c.width = c.height = 8;
    drawPixels(c, x, s * PIXELS);
    c.title = `label ${y[s]}, predicted ${p}`;
    if (p !== y[s]) c.className = 'wrong';
    grid.append(c);
  }
  const result = $('samples-result');
  result.textContent = `${correct} / ${n} correct (${ms.toFixed(1)} ms); misclassified samples are outlined.`;
  result.dataset.predictions = predictions;
  result.dataset.correct = String(correct);
}

async function main() {
  const [model, samples] = await Promise.all([SafeTensors.fromUrl(MODEL_URL), SafeTensors.fromUrl(SAMPLES_URL)]);
  let classifier;
  if (new URLSearchParams(location.search).get('backend') === 'cpu') {
    classifier = await cpuClassifier(model, 'CPU chosen (?backend=cpu)');
  } else {
    try {
      classifier = await gpuClassifier(model);
    } catch (e) {
      classifier = await cpuClassifier(model, `WebGPU is not available (${e.message})`);
    }
  }
  $('backend').textContent = classifier.label;
  $('backend').dataset.backend = classifier.backend;
  document.body.dataset.backend = classifier.backend;
  setupPad((pixels, n) => classifier.logits(pixels, n));
  const button = $('run-samples');
  button.disabled = false;
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      await runSamples(classifier, samples);
    } finally {
      button.disabled = false;
    }
  });
  document.body.dataset.state = 'ready';
}

main().catch((e) => {
  document.body.dataset.state = 'failed';
  $('backend').textContent = `Could not load the model: ${e.message}`;
  throw e;
});
