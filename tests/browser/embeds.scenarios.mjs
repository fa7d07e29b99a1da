// Snapshot embeds, permalinks, standalone HTML and data exports (issue 8,
// items 3-5 and 7). Every scenario runs in its own fresh profile; where a
// scenario needs a second browser that has never seen the model (a blog
// reader), it launches one more fresh profile itself.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { scenario, ready, settled, typeText, copied, fx, DIST, SHOTS, ROOT } from './harness.mjs';
import { launchChromium, serve, netlifyHeaders } from './server.mjs';

const PAIR = { text: fx.text, text_b: fx.text_b };
const HOST_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-host-'));
process.on('exit', () => fs.rmSync(HOST_DIR, { recursive: true, force: true }));

async function open(page, base, params = {}) {
  await page.goto(`${base}?${new URLSearchParams(params)}`);
  await ready(page);
}


async function download(page, sel) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(sel)]);
  return fs.readFileSync(await dl.path(), 'utf8');
}

/** CSV export -> [{name, cols, rows: [{label, values}]}]. */
function parseCsv(text) {
  const field = /("(?:[^"]|"")*"|[^,]*)(,|$)/g;
  const split = (line) => {
    const out = [];
    field.lastIndex = 0;
    let m;
    while ((m = field.exec(line)) && m[0] !== '') {
      out.push(m[1].startsWith('"') ? m[1].slice(1, -1).replace(/""/g, '"') : m[1]);
      if (!m[2]) break;
    }
    return out;
  };
  return text.split('\r\n\r\n').filter((b) => b.trim()).map((block) => {
    const lines = block.split('\r\n').filter(Boolean).map(split);
    const [head, ...rows] = lines;
    return { name: head[0], cols: head.slice(1), rows: rows.map((r) => ({ label: r[0], values: r.slice(1).map(Number) })) };
  });
}

/** A browser in a fresh profile of its own that cannot reach anything but
 *  127.0.0.1 (host names do not resolve; requests elsewhere are recorded in
 *  `outside`). No request interception, so its HTTP cache works as a
 *  reader's would (Playwright routing turns the cache off). */
async function freshBrowser() {
  const { context, profile } = await launchChromium({
    acceptDownloads: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--no-first-run', '--disable-quic', '--disable-sync', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'],
  });
  const outside = [];
  context.on('request', (r) => {
    const u = new URL(r.url());
    if (['http:', 'https:', 'ws:', 'wss:'].includes(u.protocol) && u.hostname !== '127.0.0.1') outside.push(u.href);
  });
  return {
    context,
    outside,
    close: async () => {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
      assert.deepEqual(outside, [], 'requests that tried to leave 127.0.0.1');
    },
  };
}

const distBytes = (p) => {
  const f = path.join(DIST, decodeURIComponent(p.endsWith('/') ? `${p}index.html` : p));
  return fs.existsSync(f) ? fs.statSync(f).size : 0;
};

const VIEWS = [
  { name: 'heatmap', params: { ...PAIR, view: 'heatmap', layer: 2, head: 3 } },
  { name: 'head', params: { ...PAIR, view: 'head', layer: 1, head: 0, mode: 'norm' } },
  { name: 'model', params: { text: 'Snapshots draw at once.', view: 'model', layer: 0, head: 0 } },
  { name: 'neuron', params: { ...PAIR, view: 'neuron', layer: 3, head: 5, query: 8 } },
];

scenario('snapshot embeds: four on another origin draw with < 2 MB fetched, values within 1/255 of the live page, edit offers the model', async ({ page, base, shot }) => {
  // 1. The blogger: live page, "Copy embed code" and the CSV of each view.
  const snippets = [];
  const liveCsv = [];
  for (const v of VIEWS) {
    await open(page, base, v.params);
    const snip = await copied(page, '#copy-embed');
    assert.match(snip, /^<iframe src="[^"<>]+#s=[A-Za-z0-9_-]+" width="\d+" height="\d+"[^<>]*><\/iframe>$/, v.name);
    snippets.push(snip);
    liveCsv.push(parseCsv(await download(page, '#export-csv')));
    const size = snip.match(/width="(\d+)" height="(\d+)"/).slice(1).map(Number);
    console.log(`#   ${v.name}: embed snippet ${snip.length} characters, proposed ${size[0]}x${size[1]}`);
  }
  // 2. A reader who has never visited: a host page on another origin with
  // the four iframes and the two-line height listener of docs/page.md.
  // The reader's frames load from a server of their own (the site, with
  // netlify.toml's headers), so the blogger's service worker, still caching
  // in the background, does not count as the reader's download.
  const site = await serve(DIST, { netlify: netlifyHeaders(ROOT) });
  const srv = site;
  for (let i = 0; i < snippets.length; i++) snippets[i] = snippets[i].split(base).join(site.url);
  base = site.url;
  await page.goto('about:blank');
  fs.writeFileSync(path.join(HOST_DIR, 'post.html'), `<!doctype html><html><head><meta charset="utf-8"><title>blog post</title></head><body>
<h1>A post with four bertlens embeds</h1>
${snippets.join('\n<p>Some prose between the embeds.</p>\n')}
<script src="listener.js"></script></body></html>`);
  fs.writeFileSync(path.join(HOST_DIR, 'listener.js'), `window.heights = [];
addEventListener('message', (e) => { if (e.data && e.data.type === 'bertlens:height') {
  window.heights.push(e.data.height);
  for (const f of document.querySelectorAll('iframe')) if (f.contentWindow === e.source) f.style.height = e.data.height + 'px'; } });
`);
  // The blog is another origin with no Content-Security-Policy of its own
  // (the harness's second origin would carry bertlens's, which forbids frames).
  const blog = await serve(HOST_DIR);
  const base2 = blog.url;
  const reader = await freshBrowser();
  try {
    const host = await reader.context.newPage();
    const errors = [];
    host.on('pageerror', (e) => errors.push(e.message));
    host.on('console', (m) => { if (m.type() === 'error') errors.push(`${m.text()} @ ${m.location().url}`); });
    await host.setViewportSize({ width: 820, height: 900 });
    const before = srv.requests.length;
    await host.goto(`${base2}post.html`);
    // The snippets load lazily: scroll to each, as a reader would, and wait for it.
    const frameList = [];
    for (const el of await host.$$('iframe')) {
      await el.scrollIntoViewIfNeeded();
      let f = await el.contentFrame();
      for (let t = 0; t < 200 && !(f && f.url().startsWith(base)); t++) {
        await host.waitForTimeout(50);
        f = await el.contentFrame();
      }
      await ready(f);
      frameList.push(f);
    }
    const frames = async () => frameList;
    assert.equal(frameList.length, 4);
    const fetched = srv.requests.slice(before);
    const bytes = fetched.reduce((s, p) => s + distBytes(p), 0);
    const unique = [...new Set(fetched)];
    console.log(`#   four snapshot embeds fetched ${fetched.length} files, ${(bytes / 1024).toFixed(0)} KB from the site `
      + `(${unique.length} distinct files, ${(unique.reduce((s, p) => s + distBytes(p), 0) / 1024).toFixed(0)} KB)`);
    console.log(`#   ${unique.map((p) => `${p.split('/').pop()} ${(distBytes(p) / 1024).toFixed(0)}K×${fetched.filter((x) => x === p).length}`).join(', ')}`);
    assert.ok(bytes < 2 * 1024 * 1024, `${bytes} bytes fetched`);
    assert.deepEqual(fetched.filter((p) => /\.blb|\.wasm$|models\//.test(p)), [], 'no model, no wasm, no model list before any interaction');
    for (const f of await frames()) {
      assert.match(await f.textContent('#token-info'), /drawn from the snapshot's 8-bit numbers/);
      assert.ok(await f.isVisible('#view .stage, #view canvas, #view svg'));
    }
    const heights = await host.evaluate(() => window.heights);
    assert.ok(heights.length >= 4 && heights.every((h) => h > 100), `heights posted: ${heights}`);
    // Each frame asked for the height its view prefers: the one the snippet proposed.
    const frameHeights = await host.$$eval('iframe', (fs) => fs.map((f) => f.getBoundingClientRect().height));
    const proposed = snippets.map((sn) => Number(sn.match(/height="(\d+)"/)[1]));
    assert.deepEqual(frameHeights.map(Math.round), proposed, `frames ${frameHeights} vs snippets ${proposed}`);
    await shot(host, 'embeds-four-snapshots');
    const els = await host.$$('iframe');
    for (let i = 0; i < els.length; i++) {
      await els[i].scrollIntoViewIfNeeded();
      await els[i].screenshot({ path: path.join(SHOTS, `embed-snapshot-${VIEWS[i].name}.png`) });
    }

    // 3. Snapshot values within 1/255 of the live page's (norms: of the block's largest value).
    for (let i = 0; i < VIEWS.length; i++) {
      const src = snippets[i].match(/src="([^"]+)"/)[1].replace(/&amp;/g, '&').replace('embed=1', 'embed=0');
      const p = await reader.context.newPage();
      await p.goto(src);
      await ready(p);
      const snapCsv = parseCsv(await download(p, '#export-csv'));
      await p.close();
      assert.equal(snapCsv.length, liveCsv[i].length, VIEWS[i].name);
      let worst = 0;
      snapCsv.forEach((b, k) => {
        const live = liveCsv[i][k];
        assert.equal(b.name, live.name);
        assert.deepEqual(b.cols, live.cols);
        const max = VIEWS[i].params.mode === 'norm' ? Math.max(...live.rows.flatMap((r) => r.values)) : 1;
        b.rows.forEach((r, ri) => r.values.forEach((v, j) => {
          const dlt = Math.abs(v - live.rows[ri].values[j]) / max;
          worst = Math.max(worst, dlt);
        }));
      });
      console.log(`#   ${VIEWS[i].name}: snapshot vs live, worst |difference| ${(worst * 255).toFixed(3)}/255${VIEWS[i].params.mode === 'norm' ? ' of the largest value' : ''}`);
      assert.ok(worst <= 1 / 255, `${VIEWS[i].name}: ${worst * 255}/255`);
    }

    // 4. Changing the head inside the snapshot needs no model.
    const [hm] = await frames();
    const modelFetches = () => srv.requests.slice(before).filter((p) => /\.blb/.test(p)).length;
    // 5. Editing the text offers the model; accepting loads it and redraws live.
    const frameEl = await host.$('iframe');
    await frameEl.scrollIntoViewIfNeeded();
    await hm.click('#embed-edit'); // the embed shows its text boxes
    await hm.fill('#text-a', 'A new sentence typed by the reader.');
    await hm.waitForSelector('#load-model', { state: 'visible' });
    assert.match(await hm.textContent('#load-model'), /^Load the model \(\d+(\.\d)? MB\)$/);
    assert.equal(modelFetches(), 0, 'no model before the choice');
    await shot(host, 'embeds-load-choice');
    await hm.click('#load-model');
    await ready(hm);
    assert.ok(modelFetches() >= 1, 'the model was downloaded after the choice');
    assert.match(await hm.textContent('#token-info'), /model ran in/);
    const labels = await hm.$$eval('.row-label', (els) => els.map((e) => e.textContent));
    assert.ok(labels.includes('typed') && labels.some((l) => l.startsWith('read')), `live labels: ${labels}`); // long labels may be clipped
    assert.deepEqual(errors.filter((e) => !/favicon/.test(e)), []);
  } finally {
    await reader.close();
    await blog.close();
    await site.close();
  }
}, { timeout: 300000 });

scenario('snapshot link: head change without the model; another layer shows the load choice; damaged snapshot says so', async ({ page, base, srv, shot }) => {
  const reader = await freshBrowser();
  let link;
  try {
    await open(page, base, { ...PAIR, view: 'heatmap', layer: 2, head: 3 });
    link = (await copied(page, '#copy-embed')).match(/src="([^"]+)"/)[1].replace(/&amp;/g, '&').replace('embed=1', 'embed=0');
    // Longer than 64 tokens: a normal embed, and the page says so.
    await open(page, base, { text: `${fx.text} `.repeat(6), view: 'heatmap' });
    const long = await copied(page, '#copy-embed');
    assert.ok(!long.includes('#s='), 'no snapshot above 64 tokens');
    assert.match(long, /embed=1/);
    assert.match(await page.textContent('#notices'), /more than the 64 an instant embed holds: the embed is a normal link/);
  } finally { /* the live profile is the scenario's own */ }
  try {
    const p = await reader.context.newPage();
    const before = srv.requests.length;
    await p.goto(link);
    await ready(p);
    assert.equal(await p.inputValue('#text-a'), fx.text, 'the text box shows the text');
    assert.equal(await p.inputValue('#text-b'), fx.text_b);
    await p.evaluate(() => { document.body.dataset.state = 'loading'; });
    await p.selectOption('#head', 'mean');
    await ready(p);
    assert.match(await p.textContent('.view-title'), /mean of heads/);
    await p.evaluate(() => { document.body.dataset.state = 'loading'; });
    await p.selectOption('#layer', '4');
    await p.waitForSelector('#load-model', { state: 'visible' });
    assert.match(await p.textContent('#model-offer'), /layer 4/);
    assert.equal(await settled(p), 'needs-model');
    assert.deepEqual(srv.requests.slice(before).filter((x) => /\.blb|\.wasm$/.test(x)), []);
    await shot(p, 'snapshot-needs-model');
    // Damaged snapshot: a clear message, and the page goes on with the model.
    const damaged = link.replace(/#s=(.{20})/, (m, a) => `#s=${a.split('').reverse().join('')}`);
    await p.goto('about:blank');
    await p.goto(damaged);
    await ready(p);
    assert.match(await p.textContent('#notices'), /snapshot cannot be read: .*(checksum|decompress|cut|bertlens)/);
    await shot(p, 'snapshot-damaged');
    await p.close();
  } finally {
    await reader.close();
  }
});

scenario('permalinks: a 20,000-character paste gives a link <= 6,000 characters with the same tokens; old ?text= links work', async ({ page, base, context }) => {
  await open(page, base, {});
  // 20,000 characters of the tokenizer corpus (prose, code, many scripts), in file order.
  const corpus = fs.readFileSync(path.join(ROOT, 'tests', 'corpus', 'tokenizer.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).text);
  let paste = '';
  for (const t of corpus) { if (paste.length >= 20000) break; paste += `${t}\n`; }
  paste = paste.slice(0, 20000);
  await typeText(page, '#text-a', paste);
  const live = JSON.parse(await download(page, '#export-json'));
  assert.equal(live.tokens.length, 512);
  const link = await copied(page, '#copy-link');
  console.log(`#   20,000-character paste: permalink ${link.length} characters`);
  assert.ok(link.length <= 6000, `${link.length}`);
  await page.waitForFunction(() => location.href.length <= 6000 && location.search.includes('z='));
  const p2 = await context.newPage();
  await p2.goto(link);
  await ready(p2);
  const back = JSON.parse(await download(p2, '#export-json'));
  assert.deepEqual(back.tokens, live.tokens);
  assert.ok(paste.startsWith(await p2.inputValue('#text-a')));
  // Old plain link: tokens are Hugging Face's.
  await p2.goto(`${base}?text=${encodeURIComponent(fx.text)}&text_b=${encodeURIComponent(fx.text_b)}&view=heatmap&layer=0&head=5`);
  await ready(p2);
  const old = JSON.parse(await download(p2, '#export-json'));
  assert.deepEqual(old.tokens, fx.tokens);
  await p2.close();
});

scenario('data export: CSV and JSON hold the matrix on screen with its labels, as drawn', async ({ page, base }) => {
  await open(page, base, { ...PAIR, view: 'heatmap', layer: 0, head: 5 });
  const [csv] = parseCsv(await download(page, '#export-csv'));
  assert.equal(csv.name, 'layer 0 head 5 attention');
  assert.deepEqual(csv.cols, fx.tokens);
  assert.deepEqual(csv.rows.map((r) => r.label), fx.tokens);
  const T = fx.T;
  let worst = 0;
  csv.rows.forEach((r, i) => r.values.forEach((v, j) => { worst = Math.max(worst, Math.abs(v - fx.attentions[0][(5 * T + i) * T + j])); }));
  assert.ok(worst < 0.03, `CSV vs HF attention: ${worst}`);
  // The drawn value (tooltip) of cell (8, 0) equals the CSV's.
  const box = await page.$eval('rect.hm-hit', (r) => { const b = r.getBoundingClientRect(); return { x: b.x, y: b.y, w: b.width }; });
  const cell = box.w / T;
  await page.mouse.move(box.x + cell * 0.5, box.y + cell * 8.5);
  const shown = Number((await page.textContent('#tooltip')).match(/attention: ([0-9.]+)/)[1]);
  assert.ok(Math.abs(shown - csv.rows[8].values[0]) < 0.0015, `tooltip ${shown} vs CSV ${csv.rows[8].values[0]}`);
  // Hidden specials + merged words: JSON labels are the drawn labels; rows renormalized.
  await page.goto(`${base}?${new URLSearchParams({ ...PAIR, view: 'heatmap', layer: 0, head: 'mean', hide: 1, words: 1 })}`);
  await ready(page);
  const json = JSON.parse(await download(page, '#export-json'));
  const drawn = await page.$$eval('.row-label', (els) => els.map((e) => e.textContent));
  const [b] = json.blocks;
  assert.equal(b.head, 'mean');
  assert.equal(json.hide_specials, true);
  assert.equal(json.words_merged, true);
  assert.deepEqual(b.rows, drawn.length ? drawn : b.rows);
  assert.ok(!b.rows.includes('[CLS]') && b.rows.includes('unbelievably'), b.rows.join(' '));
  for (const row of b.values) assert.ok(Math.abs(row.reduce((s, v) => s + v, 0) - 1) < 1e-4);
  // Neuron view: the query's softmax over the keys, then its score's one
  // term (q·k/√d, BERT) and the score.
  await page.goto(`${base}?${new URLSearchParams({ ...PAIR, view: 'neuron', layer: 3, head: 5, query: 8 })}`);
  await ready(page);
  const nj = JSON.parse(await download(page, '#export-json'));
  assert.equal(nj.blocks.length, 3);
  assert.deepEqual(nj.blocks.map((b) => b.rows), [['cat'], ['cat'], ['cat']]);
  nj.blocks[0].values[0].forEach((v, j) => assert.ok(Math.abs(v - fx.qk_attention[(5 * T + 8) * T + j]) < 0.03, `key ${j}`));
  assert.match(nj.blocks[1].values_are, /^score term q·k\/√d: /);
  assert.match(nj.blocks[2].values_are, /^score \(the softmax's input\)/);
  const e = nj.blocks[2].values[0].map((v) => Math.exp(v));
  const sum = e.reduce((a, b) => a + b, 0);
  e.forEach((v, j) => assert.ok(Math.abs(v / sum - nj.blocks[0].values[0][j]) < 1e-5, `softmax of the exported scores: key ${j}`));
});

scenario('standalone HTML export opens from file:// and draws without the model', async ({ page, base, shot }) => {
  await open(page, base, { ...PAIR, view: 'head', layer: 2, head: 0 });
  const html = await download(page, '#export-html');
  console.log(`#   standalone HTML: ${(html.length / 1024).toFixed(0)} KB`);
  assert.ok(html.includes('id="bertlens-snapshot"'));
  assert.ok(!/<\/script>\s*<\/script>/.test(html));
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-standalone-')), 'standalone-head.html');
  fs.writeFileSync(file, html);
  const { context, close } = await freshBrowser();
  try {
    const p = await context.newPage();
    const net = [];
    p.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) net.push(r.url()); });
    const errors = [];
    p.on('pageerror', (e) => errors.push(e.message));
    await p.goto(pathToFileURL(file).href);
    await ready(p);
    assert.deepEqual(net, [], 'no network from the standalone file');
    assert.deepEqual(errors, []);
    assert.equal(await p.inputValue('#text-a'), fx.text);
    assert.ok(await p.isVisible('#view .hv-stage'));
    assert.match(await p.textContent('#token-info'), /drawn from the snapshot's 8-bit numbers/);
    await shot(p, 'standalone-head-file');
    // Asking for more: no engine in the file, so it links to the live page.
    await p.selectOption('#layer', '4');
    await p.waitForSelector('#model-offer a', { state: 'visible' });
    assert.equal(await p.isVisible('#load-model'), false);
    const href = await p.getAttribute('#model-offer a', 'href');
    assert.ok(href.startsWith(base), `${href} vs ${base}`);
    assert.match(await p.textContent('#model-offer'), /holds only the view it shows; it does not hold .*layer 4/);
    assert.deepEqual(net, [], 'still no network');
  } finally {
    await close();
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
});

scenario('embed code on a phone: a 720-px neuron embed shrinks to the blog column, no sideways scroll in the post or the frame', async ({ page, base, shot }) => {
  // The blogger copies a wide (neuron view) embed on a desktop.
  await open(page, base, { ...PAIR, view: 'neuron' });
  const snip = await copied(page, '#copy-embed');
  const width = Number(snip.match(/width="(\d+)"/)[1]);
  assert.ok(width > 390, `the proposed frame (${width} px) is wider than a phone`);
  // A phone-ready blog post on another origin; a reader on a 390-px phone
  // in a fresh profile.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-phoneblog-'));
  fs.writeFileSync(path.join(dir, 'post.html'), `<!doctype html><html><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"><title>post</title></head>
<body style="margin:16px"><p>A post read on a phone.</p>${snip}</body></html>`);
  const blog = await serve(dir);
  const { context, profile } = await launchChromium({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  try {
    const p = context.pages()[0] || await context.newPage();
    const errors = [];
    p.on('pageerror', (e) => errors.push(e.message));
    p.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    await p.goto(`${blog.url}post.html`);
    const frameEl = await p.waitForSelector('iframe');
    await frameEl.scrollIntoViewIfNeeded();
    const frame = await frameEl.contentFrame();
    await frame.waitForFunction(() => document.body && document.body.dataset.state === 'ready', null, { timeout: 60000 });
    const host = await p.evaluate(() => ({ sw: document.documentElement.scrollWidth, fw: document.querySelector('iframe').getBoundingClientRect().width }));
    assert.ok(host.sw <= 390, `the post scrolls sideways: ${host.sw} px wide on a 390-px phone`);
    assert.ok(host.fw <= 390 - 32, `frame ${host.fw} px in a 358-px column`);
    const inner = await frame.evaluate(() => ({ sw: document.documentElement.scrollWidth, cw: document.documentElement.clientWidth,
      title: document.querySelector('.view-title')?.textContent }));
    assert.ok(inner.sw <= inner.cw, `the embed scrolls sideways inside its frame: ${inner.sw} > ${inner.cw}`);
    assert.match(inner.title, /Neuron view/);
    assert.deepEqual(errors, []);
    await shot(p, 'embed-phone-blog');
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
    await blog.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, { viewport: { width: 1280, height: 900 } });
