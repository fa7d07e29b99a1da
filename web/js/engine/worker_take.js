// worker_take.js — part of the engine worker (web/js/worker.js lists its
// parts): 'take', a model taken into the engine in one request (issue 36).
// engine/take.js does the work (the Hub's files fetched, the checkpoint
// converted by rows, kept in Cache Storage, loaded in place); this part
// gives it the converter ('conv''s handler, called here, not posted), the
// engine's loads, and progress events ({id, progress} messages: a few
// dozen per load, take.js PROGRESS_STEPS). The result is take.js's.
// Every load ('load', 'load_begin', another 'take') starts a new epoch: a
// take whose epoch has passed stops at its next step and loads nothing.
/* global handle, handlers, fatal, workerModule, mod, loaded, loadBytes, incoming, beginIncoming */

let loadEpoch = 0; // bumped by every load that begins (worker_init.js too)

/** The bytes of stream (size of them, a kept copy's body) into the heap
 *  and to blw_load: 'load_begin' / 'load_end''s checks, without a message
 *  per piece. A byte stream is read into one reused scratch buffer (a
 *  buffer a read hands back is freed only by a garbage collection). */
async function loadStream(stream, size, epoch) {
  beginIncoming(size);
  let reader, byob = false;
  try {
    reader = stream.getReader({ mode: 'byob' });
    byob = true;
  } catch {
    reader = stream.getReader();
  }
  let scratch = new ArrayBuffer(1 << 20);
  try {
    for (;;) {
      let value, done;
      if (byob) ({ done, value } = await reader.read(new Uint8Array(scratch)));
      else ({ done, value } = await reader.read());
      if (epoch !== loadEpoch || !incoming) throw Object.assign(new Error('a newer load replaced this one'), { superseded: true });
      if (value && value.byteLength) {
        if (value.byteLength > incoming.size - incoming.at) throw new Error(`it has more than the ${incoming.size} bytes stored`);
        mod.HEAPU8.set(value, incoming.p + incoming.at);
        incoming.at += value.byteLength;
        if (byob) scratch = value.buffer;
      }
      if (done) break;
    }
  } catch (e) {
    reader.cancel().catch(() => {});
    if (e.superseded) throw e;
    const restored = handlers.load_abort().restored;
    return { error: `the kept copy could not be read (${String((e && e.message) || e)})`, restored };
  }
  return handlers.load_end();
}

handle('take', async ({ request, page }, { progress }) => {
  const { takeModel } = workerModule('engine/take.js');
  workerModule('engine/bundles_store.js').setPageHref(page);
  const epoch = ++loadEpoch;
  const conv = (fn, args = [], bytes = null) => {
    let r;
    try {
      r = handlers.conv({ fn, args, bytes });
    } catch (e) {
      if (fatal(e)) e.during = 'conv'; // the page says it stopped converting (engine.js EngineCrash)
      throw e;
    }
    return Array.isArray(r) ? r[0] : r;
  };
  const result = await takeModel(request, {
    call: async (fn, args, bytes) => conv(fn, args, bytes),
    fatal,
    current: () => epoch === loadEpoch,
    progress,
    events: self,
    loadStream: (stream, size) => loadStream(stream, size, epoch),
    loadBytes: (u8) => loaded(loadBytes(u8)),
    loadConverted: (gen) => handlers.load_converted({ gen }),
  });
  if (result.bytes) return [result, [result.bytes.buffer]];
  return result;
});
