// Canvas drawings: the histogram and the heatmap, sized for the device pixel ratio and coloured
// from the page's CSS variables (so they follow the light/dark theme).

import { fmtNum } from './format.js';

function css(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

function setup(canvas, cssWidth, cssHeight) {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(cssWidth * dpr);
  canvas.height = Math.round(cssHeight * dpr);
  canvas.style.width = `${cssWidth}px`;
  canvas.style.height = `${cssHeight}px`;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

/** Bars of `hist` ({lo, hi, counts}); `log` draws counts on a log scale. */
export function drawHistogram(canvas, hist, { width = 420, height = 150, log = false, label = '' } = {}) {
  const ctx = setup(canvas, width, height);
  canvas.dataset.total = String(hist.counts.reduce((a, b) => a + b, 0));
  const pad = { l: 8, r: 8, t: 8, b: 22 };
  const w = width - pad.l - pad.r;
  const h = height - pad.t - pad.b;
  const counts = hist.counts;
  const f = log ? (c) => Math.log10(1 + c) : (c) => c;
  const peak = Math.max(1, ...counts.map(f));
  ctx.clearRect(0, 0, width, height);
  ctx.fillStyle = css('--accent');
  const bw = w / counts.length;
  counts.forEach((c, i) => {
    if (c <= 0) return;
    const bh = Math.max(1, (f(c) / peak) * h);
    ctx.fillRect(pad.l + i * bw, pad.t + h - bh, Math.max(1, bw - (bw > 3 ? 1 : 0)), bh);
  });
  ctx.strokeStyle = css('--border');
  ctx.beginPath();
  ctx.moveTo(pad.l, pad.t + h + 0.5);
  ctx.lineTo(pad.l + w, pad.t + h + 0.5);
  ctx.stroke();
  if (hist.lo < 0 && hist.hi > 0) {
    const x = pad.l + ((0 - hist.lo) / (hist.hi - hist.lo)) * w;
    ctx.strokeStyle = css('--muted');
    ctx.setLineDash([3, 3]);
    ctx.beginPath();
    ctx.moveTo(x + 0.5, pad.t);
    ctx.lineTo(x + 0.5, pad.t + h);
    ctx.stroke();
    ctx.setLineDash([]);
  }
  ctx.fillStyle = css('--muted');
  ctx.font = `11px ${css('--font-mono')}`;
  ctx.textBaseline = 'bottom';
  ctx.textAlign = 'left';
  ctx.fillText(fmtNum(hist.lo), pad.l, height - 4);
  ctx.textAlign = 'right';
  ctx.fillText(fmtNum(hist.hi), pad.l + w, height - 4);
  if (label) {
    ctx.textAlign = 'center';
    ctx.fillText(label, pad.l + w / 2, height - 4);
  }
}

const VIRIDIS = [
  [68, 1, 84],
  [71, 44, 122],
  [59, 81, 139],
  [44, 113, 142],
  [33, 144, 141],
  [39, 173, 129],
  [92, 200, 99],
  [170, 220, 50],
  [253, 231, 37],
];
const DIVERGING = [
  [33, 102, 172],
  [103, 169, 207],
  [209, 229, 240],
  [247, 247, 247],
  [253, 219, 199],
  [239, 138, 98],
  [178, 24, 43],
];

function ramp(stops, t) {
  const x = Math.min(1, Math.max(0, t)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  const a = stops[i];
  const b = stops[i + 1];
  return [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f, a[2] + (b[2] - a[2]) * f];
}

/**
 * The colour scale of a heatmap: diverging around 0 when the clipped range spans both signs,
 * else sequential from lo to hi. Values outside [lo, hi] (1st/99th percentile) are clipped.
 */
export function heatScale(hm) {
  if (hm.lo < 0 && hm.hi > 0) {
    const m = Math.max(-hm.lo, hm.hi);
    return { kind: 'diverging', lo: -m, hi: m, color: (v) => ramp(DIVERGING, (v / m + 1) / 2), stops: DIVERGING };
  }
  const span = hm.hi - hm.lo || 1;
  return { kind: 'sequential', lo: hm.lo, hi: hm.hi, color: (v) => ramp(VIRIDIS, (v - hm.lo) / span), stops: VIRIDIS };
}

/** Paints the block means into `canvas` (one pixel per block, scaled up by CSS) and a legend. */
export function drawHeatmap(canvas, legend, hm, { maxCss = 420 } = {}) {
  canvas.width = hm.width;
  canvas.height = hm.height;
  const scale = heatScale(hm);
  const ctx = canvas.getContext('2d');
  const img = ctx.createImageData(hm.width, hm.height);
  const nan = [128, 128, 128];
  for (let i = 0; i < hm.values.length; i++) {
    const v = hm.values[i];
    const [r, g, b] = Number.isNaN(v) ? nan : scale.color(v);
    img.data[4 * i] = r;
    img.data[4 * i + 1] = g;
    img.data[4 * i + 2] = b;
    img.data[4 * i + 3] = 255;
  }
  ctx.putImageData(img, 0, 0);
  canvas.dataset.drawn = '1';
  const aspect = hm.height / hm.width;
  const cssW = maxCss;
  const cssH = Math.round(Math.min(maxCss * 1.25, Math.max(24, cssW * aspect)));
  canvas.style.width = `${cssW}px`;
  canvas.style.height = `${cssH}px`;
  if (legend) {
    const grad = scale.stops.map((c, i) => `rgb(${c.join(',')}) ${(i / (scale.stops.length - 1)) * 100}%`).join(', ');
    legend.querySelector('.legend-bar').style.background = `linear-gradient(to right, ${grad})`;
    legend.querySelector('.legend-lo').textContent = fmtNum(scale.lo);
    legend.querySelector('.legend-hi').textContent = fmtNum(scale.hi);
  }
  return scale;
}
