// corpus_pca.test.mjs — web/js/lib/corpus_pca.js (the joint query/key map's
// projection) against numpy's SVD of the same points
// (tests/web/fixtures/corpus_pca.json; how it was made is in its "about").
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { pca2, pca2Sliced } from '../../web/js/lib/corpus_pca.js';

const fx = JSON.parse(fs.readFileSync(new URL('./fixtures/corpus_pca.json', import.meta.url), 'utf8'));

test('PCA to 2-D: axes, variances and coordinates as numpy', () => {
  const r = pca2(Float32Array.from(fx.points), fx.n, fx.d);
  let worst = 0;
  for (let k = 0; k < 2; k++) {
    for (let j = 0; j < fx.d; j++) worst = Math.max(worst, Math.abs(r.axes[k][j] - fx.axes[k][j]));
    assert.ok(Math.abs(r.variance[k] - fx.variance[k]) <= 1e-6 * fx.variance[k], `variance ${k}`);
  }
  assert.ok(worst <= 1e-6, `axes within 1e-6 (worst ${worst})`);
  let w2 = 0;
  for (let i = 0; i < fx.n; i++) for (let k = 0; k < 2; k++) w2 = Math.max(w2, Math.abs(r.xy[i * 2 + k] - fx.xy[i][k]));
  assert.ok(w2 <= 1e-4, `coordinates within 1e-4 (worst ${w2})`);
  assert.ok(Math.abs(r.total - fx.total) <= 1e-6 * fx.total);
});

test('deterministic: the same points give the same map', () => {
  const p = Float32Array.from(fx.points);
  assert.deepEqual(pca2(p, fx.n, fx.d).xy, pca2(p, fx.n, fx.d).xy);
});

test('the sliced PCA (the page\'s) gives the same numbers', async () => {
  const p = Float32Array.from(fx.points);
  let pauses = 0;
  const big = new Float32Array(9000 * fx.d);
  for (let i = 0; i < big.length; i++) big[i] = p[i % p.length] * (1 + (i % 7) / 100);
  const a = pca2(big, 9000, fx.d), b = await pca2Sliced(big, 9000, fx.d, async () => { pauses++; });
  assert.deepEqual(b.xy, a.xy);
  assert.ok(pauses > 3);
});

test('the map\'s worker (engine/pca_worker.js) answers pca2\'s numbers and refuses malformed points', async () => {
  const { pcaAnswer } = await import('../../web/js/engine/pca_worker.js');
  const p = Float32Array.from(fx.points);
  const r = pcaAnswer({ id: 7, points: p, n: fx.n, d: fx.d });
  assert.equal(r.id, 7);
  assert.deepEqual(r.xy, pca2(p, fx.n, fx.d).xy);
  let w2 = 0;
  for (let i = 0; i < fx.n; i++) for (let k = 0; k < 2; k++) w2 = Math.max(w2, Math.abs(r.xy[i * 2 + k] - fx.xy[i][k]));
  assert.ok(w2 <= 1e-4, `coordinates as numpy within 1e-4 (worst ${w2})`);
  assert.match(pcaAnswer({ id: 8, points: p, n: fx.n + 1, d: fx.d }).error, /n x d/);
  assert.match(pcaAnswer({ id: 9, points: [1, 2], n: 1, d: 2 }).error, /Float32Array/);
});
