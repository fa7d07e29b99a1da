// wasm_node.mjs — the bertlens wasm build in Node, for tests and benchmarks.
//
// Emscripten 3.1.6's glue predates Node 20 and is CommonJS inside this
// "type": "module" repository, so it is evaluated as a CommonJS body and given
// the .wasm bytes itself (wasmBinary) instead of letting the glue fetch them.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import zlib from 'node:zlib';
import { workerSource } from './worker_source.mjs';

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
export const DEFAULT_WASM_JS = process.env.BERTLENS_WASM || path.join(ROOT, 'build/wasm/bertlens.js');

/** The MODULARIZE factory (createBertlens) defined by the glue at jsPath. */
export function loadFactory(jsPath) {
  jsPath = path.resolve(jsPath); // the glue's __filename: what pthread Workers load
  const module = { exports: {} };
  const body = new Function('module', 'exports', 'require', '__filename', '__dirname',
    `${fs.readFileSync(jsPath, 'utf8')}\n;return (typeof module.exports === 'function') ? module.exports : createBertlens;`);
  return body(module, module.exports, createRequire(jsPath), jsPath, path.dirname(jsPath));
}

/** $BERTLENS_THREADS: threads of every module createModule makes (the
 *  pthreads build bertlens-mt.js only; unset or 1: one thread). */
export const TEST_THREADS = Number(process.env.BERTLENS_THREADS || 1);

/** An instantiated module from glue jsPath and the .wasm beside it.
 *  The pthreads build (bertlens-mt.js) runs TEST_THREADS threads, starting
 *  TEST_THREADS - 1 Workers (Node's worker_threads); those do not keep
 *  the process alive (3.1.6's glue does not unref them itself). */
export async function createModule(jsPath = DEFAULT_WASM_JS, options = {}) {
  const wasmBinary = fs.readFileSync(jsPath.replace(/\.js$/, '.wasm'));
  const pool = TEST_THREADS > 1 ? { pthreadPoolSize: TEST_THREADS - 1 } : {};
  const M = await loadFactory(jsPath)({ wasmBinary, ...pool, ...options });
  for (const w of M.PThread?.unusedWorkers ?? []) w.unref?.();
  if (TEST_THREADS > 1) {
    if (!M._blw_threaded?.()) throw new Error(`BERTLENS_THREADS=${TEST_THREADS}, but ${path.basename(jsPath)} is not the pthreads build (bertlens-mt.js)`);
    if (M._blw_set_threads(TEST_THREADS) !== TEST_THREADS) throw new Error(`blw_set_threads(${TEST_THREADS}): ${wasmError(M)}`);
  }
  return M;
}

/** The message of the last failed blw_* call. */
export const wasmError = (M) => M.UTF8ToString(M._blw_error());

/** Bundle bytes of a file: .gz is inflated, anything else read as is. */
export function bundleBytes(file) {
  const b = fs.readFileSync(file);
  return file.endsWith('.gz') ? zlib.gunzipSync(b) : b;
}

/** Copy bundle bytes into the heap and blw_load them (the module owns the
 *  copy from then on). Returns blw_load's result: 0, or -1 (see wasmError). */
export function loadBytes(M, bytes) {
  const p = M._malloc(bytes.length);
  if (!p) throw new Error(`_malloc(${bytes.length}) failed`);
  M.HEAPU8.set(bytes, p);
  return M._blw_load(p, bytes.length);
}

/** blw_load a bundle file, throwing with the loader's reason on failure. */
export function loadBundle(M, file) {
  if (loadBytes(M, bundleBytes(file)) !== 0) throw new Error(`blw_load ${file}: ${wasmError(M)}`);
}

/** int32 array into _malloc'ed heap memory (caller frees). */
export function putInts(M, a) {
  const p = M._malloc(a.length * 4);
  new Int32Array(M.HEAP32.buffer, p, a.length).set(a);
  return p;
}

/** NUL-terminated UTF-8 copy of s in _malloc'ed heap memory (caller frees). */
export function putString(M, s) {
  const n = M.lengthBytesUTF8(s) + 1, p = M._malloc(n);
  M.stringToUTF8(s, p, n);
  return p;
}

/** A copy of n floats at heap pointer ptr. */
export const floats = (M, ptr, n) => Float32Array.from(new Float32Array(M.HEAPF32.buffer, ptr, n));

/** The .wasm bytes beside glue jsPath, as an ArrayBuffer (worker init's wasmBinary). */
export function wasmBinaryOf(jsPath = DEFAULT_WASM_JS) {
  const b = fs.readFileSync(jsPath.replace(/\.js$/, '.wasm'));
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.length);
}

/** web/js/worker.js in this realm (no thread): send(type, args) -> its reply
 *  message {id, ok, result | error}. factory: the module factory it gets as
 *  createBertlens; scope: what its global has besides (crossOriginIsolated,
 *  navigator). */
export function startWorker({ factory = loadFactory(DEFAULT_WASM_JS), scope = {} } = {}) {
  const replies = new Map();
  const self = { postMessage: (msg) => replies.get(msg.id)(msg), ...scope };
  const src = workerSource(path.join(ROOT, 'web')); // worker.js with its parts
  // importScripts(glue) has nothing to do: createBertlens is given
  new Function('self', 'importScripts', 'createBertlens', src)(self, () => {}, factory);
  let id = 0;
  return (type, args) => new Promise((resolve) => {
    const n = ++id;
    replies.set(n, resolve);
    self.onmessage({ data: { id: n, type, ...args } });
  });
}

/** The converter as the page reaches it: worker.js's 'conv' handler, in a
 *  worker started here. Returns {call, module}: call(fn, args, bytes) for
 *  web/js/engine/convert.js (what engine.conv is in the page; a failed message
 *  rejects), module the worker's wasm instance (to read its memory). */
export async function workerConverter(protocol, jsPath = DEFAULT_WASM_JS) {
  let module = null;
  const make = loadFactory(jsPath);
  const send = startWorker({ factory: async (o) => (module = await make(o)) });
  const init = await send('init', { glueUrl: null, wasmUrl: 'x.wasm', wasmBinary: wasmBinaryOf(jsPath), protocol });
  if (!init.ok) throw new Error(`worker init: ${init.error}`);
  const call = async (fn, args = [], bytes = null) => {
    const r = await send('conv', { fn, args, bytes });
    if (!r.ok) throw new Error(r.error);
    return r.result;
  };
  return { call, module };
}

/** A checkpoint folder as web/js/engine/convert.js takes it (the page gives File
 *  objects): [{name relative to dir, size, read(start, end) -> bytes}]. */
export function folderEntries(dir) {
  const out = [];
  const walk = (sub) => {
    for (const e of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${e.name}` : e.name;
      if (e.isDirectory()) { walk(rel); continue; }
      const file = path.join(dir, rel);
      out.push({
        name: rel, size: fs.statSync(file).size,
        read: async (start, end) => {
          const fd = fs.openSync(file, 'r');
          const b = Buffer.alloc(end - start);
          fs.readSync(fd, b, 0, end - start, start);
          fs.closeSync(fd);
          return new Uint8Array(b.buffer, b.byteOffset, b.length);
        },
      });
    }
  };
  walk('');
  return out;
}
