// worker_conv.js — part of the engine worker (web/js/worker.js lists its
// parts): 'conv', one blw_conv_* call for web/js/engine/convert.js (the
// converter runs here, beside the engine, so the converted bundle never
// needs a second module). Args: numbers, strings (-> C strings) and
// CONV_BYTES, where the heap copy of `bytes` goes. The result as
// convert.js's header describes it (the only copy: Node tests call it
// through tools/wasm_node.mjs workerConverter).
/* global handle, mod, cstring, lastError */

const CONV_BYTES = '\u0000bytes'; // convert.js BYTES

handle('conv', ({ fn, args, bytes }) => {
  if (!/^[a-z_]+$/.test(fn) || typeof mod[`_blw_conv_${fn}`] !== 'function') throw new Error(`no converter call ${fn}`);
  const ptrs = [];
  try {
    const a = args.map((x) => {
      if (x === CONV_BYTES) {
        const u8 = new Uint8Array(bytes);
        const p = mod._malloc(Math.max(1, u8.length));
        if (!p) throw new Error(`Out of memory for ${u8.length} bytes of the checkpoint.`);
        mod.HEAPU8.set(u8, p >>> 0);
        ptrs.push(p);
        return p;
      }
      if (typeof x !== 'string') return x;
      const p = cstring(x);
      ptrs.push(p);
      return p;
    });
    const r = mod[`_blw_conv_${fn}`](...a);
    const err = () => ({ error: lastError('the converter failed') });
    switch (fn) {
      case 'weight_name': return r ? mod.UTF8ToString(r) : err();
      case 'log': return mod.UTF8ToString(r);
      case 'source': return r ? { w: mod.HEAPF64[r >>> 3], off: mod.HEAPF64[(r >>> 3) + 1], n: mod.HEAPF64[(r >>> 3) + 2] } : err();
      case 'finish': {
        if (!r) return err();
        const out = mod.HEAPU8.slice(r >>> 0, (r >>> 0) + mod._blw_conv_size());
        return [out, [out.buffer]];
      }
      case 'hash': case 'free': return 0;
      default: return r < 0 ? err() : r;
    }
  } finally {
    for (const p of ptrs) mod._free(p);
  }
});
