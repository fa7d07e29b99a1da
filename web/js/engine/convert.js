// convert.js — a Hugging Face BERT checkpoint folder -> a bertlens bundle, in
// the browser (and in Node for the tests). The conversion itself is C
// (src/convert/convert.c, the code of `bertlens convert`) inside the wasm module; this
// file feeds it: the small files whole, each safetensors header, then every
// weight file once, in order, for its sha256 and, on the way, every tensor's
// bytes one at a time (File.slice, or HTTP ranges: hub.js), so a 440 MB
// checkpoint is never held in memory at once, nor downloaded twice.
//
// The module is reached through call(fn, args, bytes) -> Promise<result>:
// engine.conv(...), one 'conv' message to the page's model worker (worker.js
// runs blw_conv_<fn> with args — numbers, strings; the string BYTES marks
// where the heap copy of `bytes` goes — and shapes the result: text for
// weight_name / log, {w, off, n} for source, the bundle's size for finish
// (the bundle stays in the worker: 'read' [off, n] copies a slice of it
// out), else the number; {error} when it failed). Node tests reach the same
// handler through tools/wasm_node.mjs workerConverter.
//
// A large 2-D tensor goes in chunks of rows (at most CHUNK bytes of its
// source each: 'tensor_rows', which also hashes them), so neither JS nor the
// wasm heap ever holds a whole 125 MB embedding matrix; the bytes written
// are the whole-tensor path's.

export const BYTES = '\u0000bytes';
const HASH_CHUNK = 2 << 20;
const CHUNK = 2 << 20; // source bytes per 'tensor_rows' call
const READ_SLICE = 16 << 20; // bytes per 'read' when the bundle is copied out whole

/** Checkpoint entries from browser File objects (a dropped folder, a
 *  directory picker's list, or loose files): {name relative to the
 *  checkpoint folder, size, read(start, end)}, and the folder's name. */
export function filesFromBrowser(fileList) {
  const files = Array.from(fileList);
  const rel = files.map((f) => f.webkitRelativePath || f.relPath || f.name);
  // A common top folder (the dropped folder itself) is not part of the names.
  const tops = new Set(rel.map((r) => (r.includes('/') ? r.slice(0, r.indexOf('/')) : '')));
  const top = tops.size === 1 ? [...tops][0] : '';
  return {
    folder: top,
    entries: files.map((f, i) => ({
      name: top ? rel[i].slice(top.length + 1) : rel[i],
      size: f.size,
      file: f, // (what the page sends the worker: engine/take.js reads it there)
      read: async (start, end) => new Uint8Array(await f.slice(start, end).arrayBuffer()),
    })),
  };
}

function check(r, what) {
  if (r && typeof r === 'object' && 'error' in r) throw new Error(what ? `${what}: ${r.error}` : r.error);
  return r;
}

/** Convert. entries: [{name, size, read(start, end) -> Promise<Uint8Array>}];
 *  opts: {dtype, embedDtype, name, license, cased, hold, chunkBytes, byRows};
 *  progress({stage: 'read' | 'hash' | 'tensor', done, total, lines}) hears
 *  of every step (lines: the converter's log lines since the last report).
 *  Returns {bytes, log}; with hold, the bundle stays in the worker instead:
 *  {size, log, gen, read(off, end, into) -> Promise<Uint8Array>, release()} (the
 *  caller loads it with engine.load({converted: true, gen}) or releases
 *  it; a newer conversion drops it too).
 *  chunkBytes: source bytes per chunk of rows (CHUNK; tests make it small);
 *  byRows false: every tensor whole (the tests' reference). */
export async function convertCheckpoint(call, entries, opts = {}, progress = () => {}) {
  const log = [];
  const report = async (stage, done, total) => {
    const text = await call('log');
    const lines = text ? text.replace(/\n$/, '').split('\n') : [];
    log.push(...lines);
    progress({ stage, done, total, lines });
  };
  const byName = new Map(entries.map((e) => [e.name, e]));
  let held = false;
  const gen = check(await call('new', [opts.dtype || '', opts.embedDtype || '', opts.name || 'checkpoint', opts.license || '', opts.cased ? 1 : 0]));
  try {
    let n = 0;
    let small = 0; // bytes of the files read whole (config, tokenizer)
    for (const e of entries) {
      const want = await call('wants', [e.name]);
      if (want === 1) small += e.size;
      if (want === 1) check(await call('add_file', [e.name, BYTES, e.size], await e.read(0, e.size)), e.name);
      else if (want === 2) check(await call('add_file', [e.name, 0, e.size]), e.name);
      if (want) await report('read', ++n, 0);
    }
    // (hints: the work of a call beyond its own bytes, for the worker's
    // watchdog, engine/watchdog.js: the files parsed, the bundle laid out)
    const nw = check(await call('begin', [], null, { bytes: small }));
    const weights = [];
    for (let w = 0; w < nw; w++) {
      const name = check(await call('weight_name', [w]));
      const e = byName.get(name);
      if (!e) throw new Error(`${name} is missing`);
      const first = new Uint8Array(8); // a shorter file is refused by its size
      first.set(await e.read(0, Math.min(8, e.size)));
      const head = check(await call('header_size', [BYTES, e.size], first), name);
      check(await call('set_header', [w, e.size, BYTES, head], await e.read(0, head)), name);
      weights.push(e);
    }
    const total = weights.reduce((s, e) => s + e.size, 0);
    const nt = check(await call('plan', [], null, { bytes: total }));
    // Each weight file is read once, from its first byte to its last: every
    // byte goes to the hash (source.sha256), and each tensor's bytes, as they
    // pass (in the order of their offsets), to the converter. A checkpoint
    // read over the network (engine/hub.js) is so downloaded once. A tensor
    // overlapping the one before it (none in practice) is read again.
    // The worker hands back the buffer of the bytes it took ({value,
    // buffer}); the next read of an entry that fills buffers (hub.js) reuses
    // it, so a download passes through a few buffers, not one per chunk.
    let spare = null;
    const back = (r) => {
      if (r && typeof r === 'object' && r.buffer instanceof ArrayBuffer && 'value' in r) {
        spare = r.buffer;
        return r.value;
      }
      return r;
    };
    const readIn = (e, a, b) => {
      const n = b - a;
      if (!e.fills || n === 0) return e.read(a, b);
      const buf = spare && spare.byteLength >= n ? spare : new ArrayBuffer(Math.max(n, Math.min(CHUNK, e.size)));
      spare = null;
      return e.read(a, b, new Uint8Array(buf, 0, n));
    };
    let hashed = 0;
    const hashIn = async (chunk) => {
      back(check(await call('hash', [BYTES, chunk.length], chunk))); // (the call takes chunk's buffer)
      hashed += chunk.length;
      progress({ stage: 'hash', done: hashed, total, lines: [] });
    };
    let converted = 0;
    const convertOne = async (t, src) => {
      back(check(await call('tensor', [t, BYTES], src)));
      await report('tensor', ++converted, nt);
    };
    // Tensor t from bytes [off, off + len) of e in chunks of whole rows,
    // each hashed on the way when `hash`; false when t goes whole.
    const chunk = opts.chunkBytes || CHUNK;
    const byRows = async (t, e, off, len, hash) => {
      // every 2-D tensor that can goes this way, small ones in one chunk:
      // its bytes cross to the worker once, hashed there on the way
      const row = opts.byRows !== false ? check(await call('rows', [t])) : 0;
      if (!(row > 0) || len % row) return false;
      const rows = len / row, per = Math.max(1, Math.floor(chunk / row));
      for (let r = 0; r < rows; r += per) {
        const k = Math.min(per, rows - r);
        const src = await readIn(e, off + r * row, off + (r + k) * row);
        back(check(await call('tensor_rows', [t, r, k, BYTES, hash ? 1 : 0], src)));
        if (hash) { hashed += k * row; progress({ stage: 'hash', done: hashed, total, lines: [] }); }
      }
      await report('tensor', ++converted, nt);
      return true;
    };
    const plan = weights.map(() => []);
    for (let t = 0; t < nt; t++) {
      const s = check(await call('source', [t]));
      if (s.n === 0) await convertOne(t, new Uint8Array(0)); // made by the converter: no bytes to read
      else plan[s.w].push({ t, off: s.off, n: s.n });
    }
    for (const [w, e] of weights.entries()) {
      let pos = 0;
      const hashTo = async (end) => {
        for (; pos < end; pos = Math.min(end, pos + HASH_CHUNK)) await hashIn(await readIn(e, pos, Math.min(end, pos + HASH_CHUNK)));
      };
      for (const { t, off, n: len } of plan[w].sort((a, b) => a.off - b.off)) {
        if (off < pos) { // overlapping: read on its own
          if (!await byRows(t, e, off, len, false)) await convertOne(t, await readIn(e, off, off + len));
          continue;
        }
        await hashTo(off);
        if (await byRows(t, e, off, len, true)) { pos = off + len; continue; }
        const src = await readIn(e, off, off + len);
        for (let i = 0; i < len; i += HASH_CHUNK) await hashIn(src.slice(i, Math.min(len, i + HASH_CHUNK)));
        pos = off + len;
        await convertOne(t, src);
      }
      await hashTo(e.size);
    }
    const size = check(await call('finish', [], null, { bytes: total + small }));
    await report('write', nt, nt);
    // into: a Uint8Array of b - a bytes to fill (its buffer goes to the worker and back)
    const read = async (a, b, into = null) => check(await call('read', [a, b - a], into));
    if (opts.hold) {
      held = true;
      return { size, log, read, gen, release: () => call('free', [gen]) };
    }
    return { bytes: await heldBytes({ size, read }), log };
  } finally {
    if (!held) await call('free');
  }
}

// ------------------------------------------------------------ dtype choice

/** The dtypes the page's converter offers, as `bertlens convert --dtype`
 *  names them: q8 (the default: 8-bit blocks), q10, f16, f32 (exact). */
export const PAGE_DTYPES = Object.freeze(['q8', 'q10', 'f16', 'f32']);

// q8 and the QN dtypes (q10) store weights in blocks of 32 numbers along a
// row (BL_QBLOCK, src/bertlens.h): a checkpoint whose rows are not whole
// blocks (hidden 48, a 16-wide ALBERT embedding) cannot use them, and the
// converter says so (src/convert/convert.c add_ot); f16 overflows on a weight past
// 65504 (src/convert/convert_quant.c). Those are the refusals a fallback answers.
const BLOCKED = /is not a multiple of 32: cannot use (q\d+h?|q8h)/;
const F16_OVERFLOW = /overflows float16/;

/** convertCheckpoint in opts.dtype, or, where that dtype cannot hold the
 *  checkpoint (rows not whole blocks of 32 for q8/q10, a weight beyond
 *  float16), in the next that can: f16, then f32. Returns {res, dtype,
 *  fellBack: null | {from, to, why, text}} (text: the sentence the page
 *  shows). Other errors are thrown as convertCheckpoint's. */
export async function convertChoosing(call, entries, opts = {}, progress = () => {}) {
  const want = opts.dtype || 'q8';
  const order = [want, ...(want !== 'f16' && want !== 'f32' ? ['f16'] : []), ...(want !== 'f32' ? ['f32'] : [])];
  let why = '';
  for (const dtype of order) {
    try {
      const res = await convertCheckpoint(call, entries, { ...opts, dtype }, progress);
      const fellBack = dtype === want ? null : {
        from: want, to: dtype, why,
        text: `${want} cannot hold ${opts.name || 'this checkpoint'}: ${why}. `
          + `${/multiple of 32/.test(why) ? `${want} stores weights in blocks of 32 numbers, and this model's rows are not whole blocks. ` : ''}`
          + `It was converted to ${dtype} instead${dtype === 'f32' ? ' (exact, 4 bytes a weight)' : ' (2 bytes a weight)'}.`,
      };
      return { res, dtype, fellBack };
    } catch (e) {
      const next = (dtype !== 'f16' && dtype !== 'f32' && BLOCKED.test(e.message)) || (dtype === 'f16' && F16_OVERFLOW.test(e.message));
      if (!next || dtype === order[order.length - 1]) throw e;
      why = why || e.message;
    }
  }
  throw new Error('no dtype could hold the checkpoint');
}

/** A whole copy of a held bundle ({size, read}: convertCheckpoint with
 *  hold), read out of the worker by slices. */
export async function heldBytes({ size, read }) {
  const bytes = new Uint8Array(size);
  for (let at = 0; at < size; at += READ_SLICE) bytes.set(await read(at, Math.min(size, at + READ_SLICE)), at);
  return bytes;
}

// ------------------------------------------------------------ browser side

const CHECKPOINT_FILE = /(^|\/)(config\.json|vocab\.txt|tokenizer(_config)?\.json|pytorch_model\.bin|[^/]*\.safetensors(\.index\.json)?)$/;

/** The files of a drop that is a checkpoint (a folder, or loose checkpoint
 *  files): a Promise of File[] (each with .relPath under the dropped
 *  folder), or null when the drop is something else (a bundle file). Call
 *  it inside the drop event: the browser empties dataTransfer afterwards. */
export function checkpointFromDrop(dt) {
  const entries = Array.from(dt.items || []).filter((i) => i.kind === 'file')
    .map((i) => (i.webkitGetAsEntry ? i.webkitGetAsEntry() : null)).filter(Boolean);
  const files = Array.from(dt.files || []);
  if (entries.some((e) => e.isDirectory)) return walkEntries(entries);
  return files.some((f) => CHECKPOINT_FILE.test(f.name)) ? Promise.resolve(files) : null;
}

async function walkEntries(entries) {
  const out = [];
  const fileOf = (e) => new Promise((resolve, reject) => e.file(resolve, reject));
  const children = async (dir) => {
    const reader = dir.createReader(), all = [];
    for (;;) {
      const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
      if (!batch.length) return all;
      all.push(...batch);
    }
  };
  const walk = async (e, prefix, depth) => {
    if (e.isFile) {
      const f = await fileOf(e);
      f.relPath = prefix + e.name;
      out.push(f);
    } else if (e.isDirectory && depth < 3) { // the folder and its 0_Transformer/ are enough
      for (const c of await children(e)) await walk(c, `${prefix}${e.name}/`, depth + 1);
    }
  };
  for (const e of entries) await walk(e, '', 0);
  return out;
}

/** gzip bytes with the browser's CompressionStream, or null where it has none. */
export async function gzipBytes(u8) {
  if (typeof CompressionStream !== 'function') return null;
  const stream = new Blob([u8]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
