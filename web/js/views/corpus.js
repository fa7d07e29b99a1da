// corpus.js — the Corpus view (issue 25 item 2): what each head does across
// many texts. The reader pastes inputs (one per line, a TAB before sentence
// B), drops or opens a .txt/.tsv/.csv/.jsonl file (lib/corpus_parse.js) or
// opens the sample corpus (lib/corpus_sample.js); the run goes to the model
// worker in batches (engine/corpus_run.js -> src/wasm/wasm_corpus.c, the same C as
// `bertlens corpus`), with a progress bar, inputs/s and Cancel. The results
// (views/corpus_chart.js): class shares per layer, the head grid ranked by a
// feature, the chosen head's strongest examples (a click or Enter opens the
// input in the heatmap at that head, on the query token), exports as JSON
// and CSV with the CLI's fields (lib/corpus_export.js).
//
// The view runs the model itself (ctx.engineCall), so it needs nothing from
// the page's run and shows no page controls.

import { THEMES, infoLine, exportContext } from './common.js';
import { parseCorpus } from '../lib/corpus_parse.js';
import { corpusJSON, corpusCSV, CORPUS_FEATURES, CORPUS_CLASSES } from '../lib/corpus_export.js';
import { SAMPLE_CORPUS, SAMPLE_CORPUS_NAME } from '../lib/corpus_sample.js';
import { runCorpus } from '../engine/corpus_run.js';
import { drawResults } from './corpus_chart.js';
import { drawQk } from './corpus_qk.js';
import { guessPieces, rawNote, tokenLabel } from '../lib/tokens.js';

const MAX_PASTE = 2_000_000; // characters read from the box or a file (about 20,000 sentences)

function save(text, name, type) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type }));
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

export function corpusView(ctx) {
  let theme = THEMES.light;
  let width = 720;
  let root = null;
  const st = {
    name: 'pasted text', parsed: null, result: null, running: null, progress: null, error: '',
    feature: 'sep', head: { layer: 0, head: 0 }, last: null, qkHead: null, colorBy: 'type', textLine: [],
  };
  const tokCache = new Map();

  function inputOf(line) { // 1-based line of the run's input list -> {a, b}
    const raw = st.parsed.lines[line - 1] || '';
    const tab = raw.indexOf('\t');
    return tab < 0 ? { a: raw, b: '' } : { a: raw.slice(0, tab), b: raw.slice(tab + 1) };
  }

  async function tokensOf(line) {
    const { a, b } = inputOf(line);
    const key = `${a}\t${b}`;
    if (!tokCache.has(key)) {
      tokCache.set(key, (async () => {
        const both = await ctx.engineCall('corpus-tokens', { a, b: b || null });
        const nA = b ? (await ctx.engineCall('corpus-tokens', { a })).tokens.length : both.tokens.length;
        return { both, nA };
      })());
    }
    return { a, b, ...(await tokCache.get(key)) };
  }

  async function context(x) {
    const { a, b, both, nA } = await tokensOf(x.line);
    const mark = (i) => { const o = both.offsets[i]; return o && o[1] > o[0] ? [o[0], o[1], i >= nA] : null; };
    return { a, b, q: mark(x.query), k: mark(x.key) };
  }

  async function describe(text, pos) {
    const { a, b, both } = await tokensOf(st.textLine[text]);
    const piece = both.tokens[pos];
    const label = tokenLabel(piece, guessPieces(both.tokens), both.word_ids[pos] === null); // "Ġthe" reads "␣the"
    const note = rawNote(piece, label);
    return `“${label}”${note ? ` (${note})` : ''} in: ${b ? `${a} ‖ ${b}` : a}`;
  }

  function openToken(text, pos) {
    const { a, b } = inputOf(st.textLine[text]);
    // the token's own cell (its row as a query, its column as a key)
    ctx.update({ view: 'heatmap', text: a, text_b: b, layer: st.qkHead.layer, head: st.qkHead.head, query: pos, cell: [pos, pos] });
  }

  function openExample(x, hd) {
    const { a, b } = inputOf(x.line);
    ctx.update({ view: 'heatmap', text: a, text_b: b, layer: hd.layer, head: hd.head, query: x.query, cell: [x.query, x.key] });
  }

  async function start(name, text) {
    if (st.running) return;
    st.name = name;
    st.rawText = text.slice(0, MAX_PASTE);
    st.parsed = parseCorpus(name, st.rawText);
    st.result = null;
    st.error = '';
    tokCache.clear();
    const ac = new AbortController();
    st.running = ac;
    st.progress = { done: 0, total: st.parsed.lines.length, analysed: 0, perSecond: 0 };
    render();
    try {
      st.qkHead = { ...st.head };
      const run = await runCorpus(ctx.engineCall, st.parsed.lines, {
        signal: ac.signal, qk: st.qkHead,
        onProgress: (p) => { st.progress = p; renderProgress(); },
      });
      st.result = run.result;
      st.last = run;
      const skipped = new Set(run.result.skipped.map((x) => x.line));
      st.textLine = [];
      for (let l = 1; l <= run.done; l++) if (!skipped.has(l)) st.textLine.push(l); // text index -> line
    } catch (e) {
      st.error = `The corpus run failed: ${e.message}`;
    } finally {
      st.running = null;
      render();
    }
  }

  function renderProgress() {
    if (!root) return;
    const box = root.select('div.cp-progress');
    const p = st.progress;
    box.property('hidden', !p);
    if (!p) return;
    box.select('progress').attr('max', Math.max(1, p.total)).attr('value', p.done);
    const tail = st.running ? '' : st.last?.cancelled ? ' — cancelled' : ' — done';
    box.select('span.cp-progress-text').text(`${p.done} / ${p.total} inputs · ${p.perSecond.toFixed(1)} inputs/s${tail}`);
    box.select('button.cp-cancel').property('hidden', !st.running);
  }

  function renderInput(panel) {
    panel.selectAll('*').remove();
    panel.append('label').attr('class', 'cp-label').attr('for', 'cp-text')
      .text('Inputs, one per line (a TAB before sentence B of a pair), or drop a .txt, .tsv, .csv or .jsonl file here');
    panel.append('textarea').attr('id', 'cp-text').attr('class', 'cp-text').attr('rows', 5).attr('spellcheck', 'false');
    const row = panel.append('div').attr('class', 'cp-buttons');
    row.append('button').attr('type', 'button').attr('class', 'cp-run').text('Run on these lines')
      .on('click', () => start('pasted text', panel.select('textarea').property('value')));
    row.append('button').attr('type', 'button').attr('class', 'cp-sample').text('Open the sample corpus')
      .on('click', () => { panel.select('textarea').property('value', SAMPLE_CORPUS); start(SAMPLE_CORPUS_NAME, SAMPLE_CORPUS); });
    const fl = row.append('label').attr('class', 'cp-file-label');
    fl.append('span').text('Open a file… ');
    fl.append('input').attr('type', 'file').attr('class', 'cp-file').attr('accept', '.txt,.tsv,.csv,.jsonl,.ndjson,text/plain,text/csv')
      .on('change', async (ev) => { const f = ev.target.files[0]; if (f) start(f.name, await f.text()); ev.target.value = ''; });
    panel.on('dragover', (ev) => { ev.preventDefault(); panel.classed('cp-drop', true); })
      .on('dragleave', () => panel.classed('cp-drop', false))
      .on('drop', async (ev) => {
        ev.preventDefault();
        panel.classed('cp-drop', false);
        const f = ev.dataTransfer?.files?.[0];
        if (f) start(f.name, await f.text());
      });
    const prog = panel.append('div').attr('class', 'cp-progress').attr('role', 'status').property('hidden', true);
    prog.append('progress').attr('max', 1).attr('value', 0);
    prog.append('span').attr('class', 'cp-progress-text');
    prog.append('button').attr('type', 'button').attr('class', 'cp-cancel').text('Cancel')
      .on('click', () => st.running?.abort());
  }

  function render() {
    if (!root) return;
    root.select('div.cp-error').text(st.error).property('hidden', !st.error);
    renderProgress();
    const res = root.select('div.cp-results');
    const r = st.result;
    const sum = root.select('div.cp-summary');
    sum.selectAll('*').remove();
    if (r) {
      const bad = [...(st.parsed.bad || []).map((b) => ({ ...b, where: 'file line' })), ...r.skipped.map((s) => ({ line: st.parsed.source[s.line - 1] ?? s.line, reason: s.reason }))];
      // every skipped line is counted (skipped_lines); the first BL_CORPUS_MAX_SKIPPED are listed
      const nBad = (st.parsed.bad || []).length + (r.skipped_lines ?? r.skipped.length);
      sum.append('p').text(`${st.name}: ${r.texts} inputs analysed, ${r.tokens} tokens${nBad ? `, ${nBad} lines skipped` : ''}${st.last?.cancelled ? ' (cancelled: the inputs done so far)' : ''}.`);
      if (bad.length) {
        const d = sum.append('details').attr('class', 'cp-skipped');
        d.append('summary').text('Skipped lines');
        d.append('ul').selectAll('li').data(bad.slice(0, 200)).join('li').text((b) => `line ${b.line}: ${b.reason}`);
      }
      const ex = sum.append('div').attr('class', 'cp-export');
      ex.append('button').attr('type', 'button').attr('class', 'cp-json').text('Save JSON')
        .on('click', () => save(corpusJSON(r), 'bertlens-corpus.json', 'application/json'));
      ex.append('button').attr('type', 'button').attr('class', 'cp-csv').text('Save CSV')
        .on('click', () => save(corpusCSV(r), 'bertlens-corpus.csv', 'text/csv'));
    }
    drawResults(res, r, {
      theme, width, feature: st.feature, head: st.head,
      onFeature: (f) => { st.feature = f; render(); root.select('select.cp-feature').node()?.focus(); },
      onHead: (layer, head) => {
        st.head = { layer, head };
        render();
        root.select(`g.cp-head[data-layer="${layer}"][data-head="${head}"]`).node()?.focus();
      },
      onExample: openExample,
      context,
    });
    const map = root.select('div.cp-map');
    if (r && st.last) {
      drawQk(map, st.last.qk, {
        theme, width, head: st.qkHead, colorBy: st.colorBy, describe, onOpen: openToken,
        onColorBy: (c) => { st.colorBy = c; render(); root.select('select.cp-colorby').node()?.focus(); },
      }).then(() => {
        if (st.head.layer === st.qkHead.layer && st.head.head === st.qkHead.head) return;
        // Only the chosen head's q/k are kept (wasm_corpus.c): every head's would be 2 x tokens x dh x H x L floats.
        const qk = st.last.qk, H = ctx.nHeads(), L = 1 + Math.max(...r.heads.map((h) => h.layer));
        const cost = qk?.n ? ` would take ${((2 * qk.n * qk.dh * H * L * 4) / 1e6).toFixed(0)} MB (2 × ${qk.n} tokens × ${qk.dh} × ${H} heads × ${L} layers × 4 bytes)` : ' would cost memory for every head';
        map.append('p').attr('class', 'cp-note cp-remap-why')
          .text(`The run kept the queries and keys of layer ${st.qkHead.layer}, head ${st.qkHead.head} only: keeping every head's${cost}, so mapping another head runs the corpus again.`);
        map.append('button').attr('type', 'button').attr('class', 'cp-remap')
          .text(`Map layer ${st.head.layer}, head ${st.head.head} (runs the corpus again)`)
          .on('click', () => start(st.name, st.rawText));
      }).catch((e) => { map.append('p').attr('class', 'cp-error').text(`The map could not be drawn: ${e.message}`); });
    } else map.selectAll('*').remove();
    root.attr('data-corpus-state', st.running ? 'running' : r ? 'done' : 'idle');
  }

  function view(sel, data) {
    root = sel;
    sel.selectAll('div.view-title').data([null]).join('div').attr('class', 'view-title').text(data.title);
    infoLine(sel);
    let body = sel.select('div.cp-body');
    if (body.empty()) {
      body = sel.append('div').attr('class', 'cp-body');
      renderInput(body.append('div').attr('class', 'cp-input'));
      body.append('div').attr('class', 'cp-error').attr('role', 'alert').property('hidden', true);
      body.append('div').attr('class', 'cp-summary');
      // the stage: what Export SVG/PNG redraw (page/export.js), the results
      const stage = body.append('div').attr('class', 'cp-stage stage');
      stage.append('div').attr('class', 'cp-results');
      stage.append('div').attr('class', 'cp-map cp-section');
    }
    body.style('color', theme.fg);
    render();
  }
  view.theme = (t) => { theme = t || theme; return view; };
  view.size = (b) => { width = Math.max(280, (b && b.width) || width); return view; };
  view.exportContext = () => exportContext({
    notes: [`Corpus: ${st.name}`],
    subject: st.result ? `corpus “${st.name}”, ${st.result.texts} inputs, ${st.result.tokens} tokens` : `corpus: no run yet`,
  });
  /** The last run's result and the name of its inputs (null before one). */
  view.exportData = () => (st.result ? { result: st.result, name: st.name } : null);
  return view;
}

export const descriptor = {
  id: 'corpus',
  label: 'Corpus',
  size: () => ({ width: 720, height: 900 }),
  controls: { layer: false, head: false, mean: false, words: false, mode: false },
  snapshot: false,
  axis: false,
  needs: () => ({}),
  create: (ctx) => corpusView(ctx),
  /** Export (CSV/JSON): one row per head, its mean features and class
   *  shares over the corpus (the figures of the run shown; the view's own
   *  Save JSON / Save CSV write the CLI's fields with the top links). */
  shown(run, s, chart) {
    const got = chart && chart.exportData ? chart.exportData() : null;
    if (!got) throw new Error('the corpus has not been run yet: run it on some lines first');
    const { result: r, name } = got;
    const cols = [...CORPUS_FEATURES, ...CORPUS_CLASSES.map((c) => `class ${c}`)];
    return {
      view: 'corpus', mode: 'attn', what: 'mean head features over the corpus', hide: false, renorm: false, words: false, ablate: '',
      extra: { corpus: name, texts: r.texts, corpus_tokens: r.tokens, skipped_lines: r.skipped_lines ?? r.skipped.length },
      blocks: [{
        name: `heads across the corpus “${name}” (${r.texts} inputs)`,
        rows: r.heads.map((h) => `layer ${h.layer} head ${h.head}`), cols,
        values: r.heads.flatMap((h) => [...CORPUS_FEATURES.map((f) => (h[f] === null || h[f] === undefined ? NaN : h[f])), ...CORPUS_CLASSES.map((c) => h.class_fractions[c] ?? NaN)]),
      }],
    };
  },
  prepare: () => ({
    title: 'Corpus — what each head does across many texts',
    notes: ['Each figure is the mean over the inputs of what bertlens analyze reports for one input; class shares count the inputs whose head falls in each class (the same C as bertlens corpus).'],
  }),
};
