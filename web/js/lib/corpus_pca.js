// corpus_pca.js — the joint query/key map's projection (issue 25 item 2):
// PCA of the points (every token's query and key of one head, together) to
// 2-D. The covariance (d x d, d = the head width) is built once, its top two
// eigenvectors found by power iteration with deflation from a fixed start,
// so the map is the same on every run. Each axis's sign is fixed so that its
// largest component (by magnitude) is positive. No DOM. The page runs
// pca2Sliced on its main thread in slices (a few ms each), Node tests pca2
// (tests/web/corpus_pca.test.mjs, against numpy's SVD).
//
//   pca2(points Float32Array [n][d], n, d) -> {xy Float32Array [n][2], axes [[d],[d]], variance [2], total}
//   pca2Sliced(points, n, d) -> Promise of the same

const SLICE = 4096; // rows per slice of pca2Sliced

function covariance(points, n, d) {
  const mean = new Float64Array(d);
  const C = new Float64Array(d * d); // covariance [d][d] (divided by n - 1, as numpy)
  return { mean, C, n, d, points, row: new Float64Array(d) };
}
function addMean(st, from, to) {
  const { points, d, mean } = st;
  for (let i = from; i < to; i++) for (let j = 0; j < d; j++) mean[j] += points[i * d + j];
}
function addRows(st, from, to) {
  const { points, d, mean, C, row } = st;
  for (let i = from; i < to; i++) {
    for (let j = 0; j < d; j++) row[j] = points[i * d + j] - mean[j];
    for (let a = 0; a < d; a++) { const ra = row[a]; if (ra) for (let b = a; b < d; b++) C[a * d + b] += ra * row[b]; }
  }
}

/** The top two eigenvectors of st.C by power iteration with deflation. */
function eigen2(st, iterations, tol) {
  const { C, d, n } = st;
  const div = Math.max(1, n - 1);
  let total = 0;
  for (let a = 0; a < d; a++) for (let b = a; b < d; b++) { C[a * d + b] /= div; C[b * d + a] = C[a * d + b]; }
  for (let a = 0; a < d; a++) total += C[a * d + a];
  const axes = [], variance = [];
  for (let k = 0; k < 2; k++) {
    let v = new Float64Array(d);
    for (let j = 0; j < d; j++) v[j] = 1 + ((j * 7 + k * 3) % 11) / 11; // fixed start
    let lambda = 0;
    for (let it = 0; it < iterations; it++) {
      const w = new Float64Array(d);
      for (let a = 0; a < d; a++) { let s = 0; for (let b = 0; b < d; b++) s += C[a * d + b] * v[b]; w[a] = s; }
      for (const u of axes) { let p = 0; for (let j = 0; j < d; j++) p += w[j] * u[j]; for (let j = 0; j < d; j++) w[j] -= p * u[j]; }
      const norm = Math.hypot(...w);
      if (!(norm > 0)) break;
      for (let j = 0; j < d; j++) w[j] /= norm;
      let diff = 0;
      for (let j = 0; j < d; j++) diff = Math.max(diff, Math.abs(w[j] - v[j]));
      v = w;
      const done = Math.abs(norm - lambda) <= tol * Math.max(1, norm) && diff <= 1e-10;
      lambda = norm;
      if (done) break;
    }
    let big = 0;
    for (let j = 0; j < d; j++) if (Math.abs(v[j]) > Math.abs(v[big])) big = j;
    if (v[big] < 0) for (let j = 0; j < d; j++) v[j] = -v[j];
    axes.push(v);
    variance.push(lambda);
  }
  return { axes, variance, total };
}

function project(st, e, xy, from, to) {
  const { points, d, mean } = st;
  for (let i = from; i < to; i++) {
    for (let k = 0; k < 2; k++) {
      let s = 0;
      for (let j = 0; j < d; j++) s += (points[i * d + j] - mean[j]) * e.axes[k][j];
      xy[i * 2 + k] = s;
    }
  }
}

export function pca2(points, n, d, { iterations = 500, tol = 1e-12 } = {}) {
  const st = covariance(points, n, d);
  addMean(st, 0, n);
  for (let j = 0; j < d; j++) st.mean[j] /= Math.max(1, n);
  addRows(st, 0, n);
  const e = eigen2(st, iterations, tol);
  const xy = new Float32Array(n * 2);
  project(st, e, xy, 0, n);
  return { xy, ...e };
}

/** pca2 in slices of SLICE rows with a pause (pause(): a Promise) between
 *  them, so the page's main thread is never held long; the same numbers. */
export async function pca2Sliced(points, n, d, pause = () => new Promise((r) => setTimeout(r, 0))) {
  const st = covariance(points, n, d);
  for (let i = 0; i < n; i += SLICE) { addMean(st, i, Math.min(n, i + SLICE)); await pause(); }
  for (let j = 0; j < d; j++) st.mean[j] /= Math.max(1, n);
  for (let i = 0; i < n; i += SLICE / 2) { addRows(st, i, Math.min(n, i + SLICE / 2)); await pause(); }
  const e = eigen2(st, 500, 1e-12);
  const xy = new Float32Array(n * 2);
  for (let i = 0; i < n; i += SLICE) { project(st, e, xy, i, Math.min(n, i + SLICE)); await pause(); }
  return { xy, ...e };
}
