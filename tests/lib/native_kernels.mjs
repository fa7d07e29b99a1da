// native_kernels.mjs — the kernel entry points of src/wasm/wasm_api.c (blw_k_*),
// compiled natively into build/kernel_host (tests/c/kernel_host.c), behind the
// same interface as the wasm module: _malloc/_free, HEAPU8/HEAPF32 and
// synchronous _blw_k_* calls, so tests/kernels.test.mjs runs unchanged on
// both. The heap lives here; each call sends its used part to the host
// through a FIFO and copies back what the kernel wrote.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

const FNS = { simd: 0, matmul_act: 1, matmul: 2, matmul_nt: 3, layernorm: 4, softmax: 5, activate: 6, erf: 7, exp: 8,
  simd_name: 9, qgroup: 10, matmul_panels: 11, weight_t16: 12, q8_regroup: 13 };

export function createNativeKernels(hostPath, { heapBytes = 64 << 20, env = process.env } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bertlens-kernels-'));
  const reqPath = path.join(dir, 'req'), respPath = path.join(dir, 'resp');
  execFileSync('mkfifo', [reqPath, respPath]);
  const child = spawn(hostPath, [reqPath, respPath], { stdio: ['ignore', 'inherit', 'inherit'], env });
  // both sides open the request FIFO first, then the response FIFO
  const req = fs.openSync(reqPath, 'w'), resp = fs.openSync(respPath, 'r');
  const buf = new ArrayBuffer(heapBytes);
  const M = { HEAPU8: new Uint8Array(buf), HEAPF32: new Float32Array(buf), HEAP32: new Int32Array(buf) };
  let top = 64, live = 0; // bump allocator, reset when everything is freed
  M._malloc = (n) => {
    const p = top;
    top = (top + Math.max(n, 4) + 63) & ~63;
    if (top > heapBytes) throw new Error('native kernel heap full');
    live++;
    return p;
  };
  M._free = (p) => { if (p && --live === 0) top = 64; };

  function readExact(n) {
    const out = Buffer.alloc(n);
    for (let got = 0; got < n;) {
      const k = fs.readSync(resp, out, got, n - got, null);
      if (k === 0) throw new Error('kernel_host closed its response FIFO (crashed?)');
      got += k;
    }
    return out;
  }
  function call(fn, args) {
    const head = Buffer.alloc(8 + 8 * args.length + 8);
    head.writeUInt32LE(fn, 0);
    head.writeUInt32LE(args.length, 4);
    args.forEach((v, i) => head.writeDoubleLE(Number(v), 8 + 8 * i));
    head.writeBigUInt64LE(BigInt(top), 8 + 8 * args.length);
    fs.writeSync(req, head);
    fs.writeSync(req, M.HEAPU8, 0, top);
    const r = readExact(16);
    const len = Number(r.readBigUInt64LE(8));
    readExact(len).copy(Buffer.from(buf, 0, len));
    return r.readDoubleLE(0);
  }
  for (const [name, id] of Object.entries(FNS)) M[`_blw_k_${name}`] = (...args) => call(id, args);
  M._blw_simd = () => M._blw_k_simd();
  M.simdName = () => {
    const p = M._malloc(32);
    M._blw_k_simd_name();
    const s = Buffer.from(M.HEAPU8.subarray(0, 32)).toString('latin1').split('\0')[0];
    M._free(p);
    return s;
  };
  M.close = () => {
    fs.closeSync(req);
    fs.closeSync(resp);
    fs.rmSync(dir, { recursive: true, force: true });
    return new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.on('exit', resolve)));
  };
  return M;
}
