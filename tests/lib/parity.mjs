// parity.mjs — figures that compare our tensors with Hugging Face references,
// shared by tests/encoder.test.mjs and tests/shapes.test.mjs.

/** Running max / mean of |a - b| over any number of array pairs; refMax is
 *  the largest |reference| seen (for relative errors). NaN counts as Infinity. */
export class Diff {
  constructor() { this.max = 0; this.sum = 0; this.n = 0; this.refMax = 0; }
  add(a, b) {
    if (a.length !== b.length) throw new Error(`length ${a.length} vs reference ${b.length}`);
    for (let i = 0; i < a.length; i++) {
      const d = Math.abs(a[i] - b[i]);
      if (!(d <= this.max)) this.max = Number.isNaN(d) ? Infinity : d;
      this.sum += d;
      const r = Math.abs(b[i]);
      if (r > this.refMax) this.refMax = r;
    }
    this.n += a.length;
  }
  merge(o) {
    this.max = Math.max(this.max, o.max);
    this.sum += o.sum;
    this.n += o.n;
    this.refMax = Math.max(this.refMax, o.refMax);
  }
  get mean() { return this.n ? this.sum / this.n : 0; }
  get rel() { return this.max / Math.max(this.refMax, 1e-30); }
}

/** Index of the largest entry of each row of a [rows][cols] flat array. */
export function argmaxRows(a, rows, cols) {
  const out = new Int32Array(rows);
  for (let i = 0; i < rows; i++) {
    let best = 0;
    for (let j = 1; j < cols; j++) if (a[i * cols + j] > a[i * cols + best]) best = j;
    out[i] = best;
  }
  return out;
}

export function cosine(a, b) {
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) { ab += a[i] * b[i]; aa += a[i] * a[i]; bb += b[i] * b[i]; }
  return ab / Math.sqrt(aa * bb);
}
