// backend.mjs — the one switch that picks what a test runs against.
//
//   BERTLENS_BACKEND=native   build/bertlens and the native hosts in build/ (default)
//   BERTLENS_BACKEND=asan     the same under ASan + UBSan (build/asan/)
//   BERTLENS_BACKEND=asan32   32-bit ASan programs (build/asan32/: size_t of 32 bits, as in wasm32)
//   BERTLENS_BACKEND=wasm     build/wasm/bertlens.js, one thread
//   BERTLENS_BACKEND=wasm-mt  build/wasm/bertlens-mt.js, the pthreads build on 2 threads
//   BERTLENS_QUICK=1          each test's quick subset (default on for asan and asan32; =0 turns it off)
//
// Every test reads the backend from here and nowhere else. A test that cannot
// serve the backend of the run skips with a reason: test(name, { skip: needs('native', 'asan') }, ...).
// BERTLENS_BIN / BERTLENS_WASM / BERTLENS_THREADS override the paths and the
// thread count picked below (e.g. a relaxed-SIMD wasm build).
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { createModule, wasmError } from '../../tools/wasm_node.mjs';

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
export const BACKENDS = ['native', 'wasm', 'wasm-mt', 'asan', 'asan32'];

/** The backend of this run. */
export const BACKEND = process.env.BERTLENS_BACKEND || 'native';
if (!BACKENDS.includes(BACKEND))
  throw new Error(`BERTLENS_BACKEND=${BACKEND}: expected one of ${BACKENDS.join(', ')}`);

/** 'native' (a C program: native, asan, asan32) or 'wasm' (wasm, wasm-mt). */
export const ENGINE = BACKEND.startsWith('wasm') ? 'wasm' : 'native';
export const IS_NATIVE = ENGINE === 'native';
export const IS_WASM = ENGINE === 'wasm';
/** Built with AddressSanitizer (slow: tests run their quick subsets). */
export const IS_ASAN = BACKEND === 'asan' || BACKEND === 'asan32';

const quickEnv = process.env.BERTLENS_QUICK;
/** Run only each test's quick subset. */
export const QUICK = quickEnv === undefined || quickEnv === '' ? IS_ASAN : quickEnv !== '0';

/** The folder of this backend's native programs. */
export const BUILD_DIR = path.join(ROOT, { native: 'build', asan: 'build/asan', asan32: 'build/asan32' }[BACKEND] || 'build');

/** A native program of this backend: host('kernel_host') is build/asan/kernel_host under asan. */
export const host = (name) => path.join(BUILD_DIR, name);

/** The CLI. asan32 builds no CLI, so it (and the wasm backends, for the
 *  tools a wasm test runs beside the module) get the plain one. */
export const BIN = process.env.BERTLENS_BIN ||
  (BACKEND === 'asan' ? host('bertlens') : path.join(ROOT, 'build/bertlens'));

/** The wasm glue of this backend (the single-threaded build unless wasm-mt). */
export const WASM_JS = process.env.BERTLENS_WASM ||
  path.join(ROOT, BACKEND === 'wasm-mt' ? 'build/wasm/bertlens-mt.js' : 'build/wasm/bertlens.js');
/** The single-threaded and the pthreads builds, for tests that compare them. */
export const WASM_ST_JS = path.join(ROOT, 'build/wasm/bertlens.js');
export const WASM_MT_JS = path.join(ROOT, 'build/wasm/bertlens-mt.js');
/** The test build with the kernels' entry points (blw_k_*). */
export const WASM_TEST_JS = process.env.BERTLENS_WASM || path.join(ROOT, 'build/wasm-test/bertlens.js');

/** Threads of the modules loadWasm makes: 2 on wasm-mt, else 1. */
export const THREADS = Number(process.env.BERTLENS_THREADS || (BACKEND === 'wasm-mt' ? 2 : 1));

/** An instantiated wasm module (default: this backend's). The pthreads
 *  build runs THREADS threads; options go to the emscripten factory. */
export async function loadWasm(jsPath = WASM_JS, options = {}) {
  const threads = path.resolve(jsPath) === path.resolve(WASM_JS) ? THREADS : 1;
  const M = await createModule(jsPath, { ...(threads > 1 ? { pthreadPoolSize: threads - 1 } : {}), ...options });
  for (const w of M.PThread?.unusedWorkers ?? []) w.unref?.();
  if (threads > 1) {
    if (!M._blw_threaded?.()) throw new Error(`${threads} threads, but ${path.basename(jsPath)} is not the pthreads build`);
    if (M._blw_set_threads(threads) !== threads) throw new Error(`blw_set_threads(${threads}): ${wasmError(M)}`);
  }
  return M;
}

/** false when this run's backend is one of names, else the skip reason. */
export function needs(...names) {
  return names.includes(BACKEND) ? false : `needs BERTLENS_BACKEND=${names.join('|')} (this run: ${BACKEND})`;
}

/** false when every file exists, else the skip reason naming the first missing one. */
export function missing(...files) {
  const f = files.find((x) => !fs.existsSync(x));
  return f ? `${path.relative(ROOT, f)} not built` : false;
}

/** node:test's test(), skipped with a reason unless this run's backend is one of names. */
export function testOn(...names) {
  const why = needs(...names);
  return (name, opts, fn) => {
    if (typeof opts === 'function') [opts, fn] = [{}, opts];
    return test(name, why ? { ...opts, skip: why } : opts, fn);
  };
}
/** Tests of a C program (the CLI or a host) and of the wasm module. */
export const nativeTest = testOn('native', 'asan');
export const wasmTest = testOn('wasm', 'wasm-mt');
