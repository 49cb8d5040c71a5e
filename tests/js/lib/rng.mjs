// Seeded pseudo-random numbers (mulberry32), shared by the demo's sample
// builder (scripts/make-sample.mjs) and the viewer's test fixtures
// (tests/viewer/fixtures.mjs), so both draw the same sequences.

/** Seeded uniform numbers in [0, 1) (`next`) and standard normal ones (`gauss`). */
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, gauss: () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next()) };
}
