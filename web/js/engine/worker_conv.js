// worker_conv.js — part of the engine worker (web/js/worker.js lists its
// parts): 'conv', one blw_conv_* call for web/js/engine/convert.js (the
// converter runs here, beside the engine, so the converted bundle never
// needs a second module). Args: numbers, strings (-> C strings) and
// CONV_BYTES, where the heap copy of `bytes` goes. The result as
// convert.js's header describes it (the only copy: Node tests call it
// through tools/wasm_node.mjs workerConverter). The finished bundle stays in
// the heap: 'read' copies out a slice of it, 'load_converted' hands it to
// the engine itself (no copy), 'free' drops it.
/* global handle, mod, cstring, lastError, loaded */

const CONV_BYTES = '\u0000bytes'; // convert.js BYTES
let convGen = 0; // which conversion the converter holds ('new' answers it)

handle('conv', ({ fn, args, bytes }) => {
  if (!/^[a-z_]+$/.test(fn) || typeof mod[`_blw_conv_${fn}`] !== 'function') throw new Error(`no converter call ${fn}`);
  if (fn === 'free' && args.length && args[0] !== convGen) return 0; // that conversion is gone already
  const ptrs = [];
  try {
    const a = args.map((x) => {
      if (x === CONV_BYTES) {
        const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes); // (never a JS copy)
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
      case 'new': return r < 0 ? err() : ++convGen;
      case 'finish': return r ? mod._blw_conv_size() : err(); // its size; the bytes stay here
      case 'rows': return r;
      case 'read': { // args [off, n]: a copy of those bytes of the finished bundle, in `bytes` when it has room
        if (!r) return err();
        const from = mod.HEAPU8.subarray(r >>> 0, (r >>> 0) + args[1]);
        const buf = bytes && (bytes.buffer || bytes);
        const out = buf instanceof ArrayBuffer && buf.byteLength >= args[1] ? new Uint8Array(buf, 0, args[1]) : new Uint8Array(args[1]);
        out.set(from);
        return [out, [out.buffer]];
      }
      case 'free': return 0;
      case 'hash': case 'tensor': case 'tensor_rows': {
        // The bytes' buffer goes back for the next read (convert.js): a
        // buffer that came in a message is freed only by a garbage
        // collection, so new ones per chunk would pile up tens of MB.
        if (r < 0) return err();
        const buffer = bytes && (bytes.buffer || bytes);
        return buffer instanceof ArrayBuffer ? [{ value: r, buffer }, [buffer]] : r;
      }
      default: return r < 0 ? err() : r;
    }
  } finally {
    for (const p of ptrs) mod._free(p);
  }
});

// The converted bundle becomes the model, in place (blw_conv_load): the
// result is 'load''s ({info}, or {error, restored}). gen: the conversion
// ('new''s answer) whose bundle is meant, when a newer one may have begun.
handle('load_converted', ({ gen }) => {
  if (gen !== undefined && gen !== convGen) return { error: 'a newer conversion replaced this one', restored: info !== null };
  return loaded(mod._blw_conv_load());
});
