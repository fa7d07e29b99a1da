// corpus_pca.js — the joint query/key map's projection (issue 25 item 2):
// PCA of the points (every token's query and key of one head, together) to
// 2-D. The covariance (d x d, d = the head width) is built once, its top two
// eigenvectors found by power iteration with deflation from a fixed start,
// so the map is the same on every run. Each axis's sign is fixed so that its
// largest component (by magnitude) is positive. No DOM; runs in a worker
// (engine/corpus_pca_worker.js) or in Node (tests/web/corpus_pca.test.mjs,
// against numpy's SVD).
//
//   pca2(points Float32Array [n][d], n, d) -> {xy Float32Array [n][2], axes [[d],[d]], variance [2], total}

export function pca2(points, n, d, { iterations = 500, tol = 1e-12 } = {}) {
  const mean = new Float64Array(d);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) mean[j] += points[i * d + j];
  for (let j = 0; j < d; j++) mean[j] /= Math.max(1, n);
  const C = new Float64Array(d * d); // covariance [d][d] (divided by n - 1, as numpy)
  const row = new Float64Array(d);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < d; j++) row[j] = points[i * d + j] - mean[j];
    for (let a = 0; a < d; a++) { const ra = row[a]; if (ra) for (let b = a; b < d; b++) C[a * d + b] += ra * row[b]; }
  }
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
  const xy = new Float32Array(n * 2);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < 2; k++) {
      let s = 0;
      for (let j = 0; j < d; j++) s += (points[i * d + j] - mean[j]) * axes[k][j];
      xy[i * 2 + k] = s;
    }
  }
  return { xy, axes, variance, total };
}
