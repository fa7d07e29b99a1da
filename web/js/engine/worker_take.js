// worker_take.js — part of the engine worker (web/js/worker.js lists its
// parts): 'take', a model taken into the engine in one request (issue 36).
// engine/take.js does the work (the Hub's files fetched, the checkpoint
// converted by rows, kept in Cache Storage, loaded in place); this part
// gives it the converter ('conv''s handler, called here, not posted), the
// engine's loads, and progress events ({id, progress} messages: a few
// dozen per load, take.js PROGRESS_STEPS). The result is take.js's.
// Every load ('load', 'load_stream', another 'take') starts a new epoch: a
// take whose epoch has passed stops at its next step and loads nothing.
/* global handle, handlers, fatal, workerModule, loaded, loadBytes, streamIn */

let loadEpoch = 0; // bumped by every load that begins (worker_init.js too)

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
    loadStream: (stream, size) => streamIn(stream, size, () => epoch === loadEpoch),
    loadBytes: (u8) => loaded(loadBytes(u8)),
    loadConverted: (gen) => handlers.load_converted({ gen }),
  });
  if (result.bytes) return [result, [result.bytes.buffer]];
  return result;
});
