// memory_probe.mjs — the peak memory of a page's renderer while something
// runs in it, for the memory scenarios (hub.scenarios.mjs): the renderer's
// VmHWM (Linux /proc; reset by clear_refs) over its VmRSS just before, the
// wasm memory of the engine worker, the JS heaps of the page and its
// workers through CDP, and (HUB_MEMORY_TRACE=1) a trace of them.
import assert from 'node:assert/strict';
import fs from 'node:fs';

/** The renderer processes of the Chromium using profile (its descendants
 *  with --type=renderer). */
export function renderers(profile) {
  const procs = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map((pid) => {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const ppid = Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1]);
      return { pid: Number(pid), ppid, cmd };
    } catch {
      return null;
    }
  }).filter(Boolean);
  const root = procs.find((p) => p.cmd.includes(`--user-data-dir=${profile}`) && !p.cmd.includes('--type='));
  if (!root) return [];
  const mine = new Set([root.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of procs) if (!mine.has(p.pid) && mine.has(p.ppid)) { mine.add(p.pid); grew = true; }
  }
  return procs.filter((p) => mine.has(p.pid) && p.cmd.includes('--type=renderer')).map((p) => p.pid);
}
const status = (pid, key) => Number((fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm')) || [0, 0])[1]) * 1024;
export const MB = (n) => `${(n / 1048576).toFixed(0)} MB`;

/** The engine worker's wasm memory in bytes (its module's heap, read in the
 *  worker: worker_heap.js's mod); 0 when no worker has one. */
async function wasmBytes(page) {
  for (const w of page.workers()) {
    // eslint-disable-next-line no-undef
    const n = await w.evaluate(() => (typeof mod !== 'undefined' && mod && mod.HEAPU8 ? mod.HEAPU8.length : 0)).catch(() => 0);
    if (n) return n;
  }
  return 0;
}

/** The page's (main thread's) JS heap in use, through CDP. */
async function jsHeap(cdp) {
  await cdp.send('HeapProfiler.collectGarbage');
  return (await cdp.send('Runtime.getHeapUsage')).usedSize;
}

/** JS heaps of the page's main thread and its workers through CDP (the
 *  workers by Target.sendMessageToTarget): {name: MB of the V8 heap in use
 *  + MB of ArrayBuffer backing stores}, for the trace. */
async function heapsOf(page) {
  const cdp = await page.context().newCDPSession(page);
  const targets = [];
  cdp.on('Target.attachedToTarget', (e) => targets.push(e));
  await cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: false });
  await new Promise((r) => setTimeout(r, 200));
  const replies = new Map();
  let n = 0;
  cdp.on('Target.receivedMessageFromTarget', (e) => {
    const m = JSON.parse(e.message);
    replies.get(m.id)?.(m.result);
  });
  const ask = (sessionId, method) => new Promise((resolve) => {
    const id = ++n;
    replies.set(id, resolve);
    cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params: {} }) }).catch(() => resolve(null));
    setTimeout(() => resolve(null), 1000);
  });
  const fmt = (u) => (u ? `${MB(u.usedSize)}+${MB(u.backingStorageSize || 0)}` : '?');
  return {
    async sample() {
      const out = [`main ${fmt(await cdp.send('Runtime.getHeapUsage'))}`];
      for (const t of targets) out.push(`${t.targetInfo.type === 'worker' ? 'worker' : t.targetInfo.type} ${fmt(await ask(t.sessionId, 'Runtime.getHeapUsage'))}`);
      return out.join(', ');
    },
    detach: () => cdp.detach(),
  };
}

/** Wait until the renderers' memory stops moving (2 MB in 500 ms, at most
 *  10 s): a page left behind frees its worker and wasm memory a little later. */
export async function settle(profile) {
  const rss = () => renderers(profile).reduce((s, p) => s + status(p, 'VmRSS'), 0);
  let last = rss();
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 500));
    const now = rss();
    if (Math.abs(now - last) < 2 << 20) return;
    last = now;
  }
}

/** Peak renderer memory while act() runs: VmHWM after (reset to the RSS
 *  just before, /proc/PID/clear_refs) against VmRSS before, for the
 *  renderer that grew most; with the wasm memory's and the main thread's
 *  JS heap's growth over the same time, and (HUB_MEMORY_TRACE=1) the RSS
 *  and wasm memory every 100 ms. */
export async function peakOf(page, profile, act) {
  const cdp = await page.context().newCDPSession(page);
  const wasm0 = await wasmBytes(page), js0 = await jsHeap(cdp);
  await settle(profile);
  const pids = renderers(profile);
  assert.ok(pids.length >= 1, 'renderer processes found');
  for (const pid of pids) fs.writeFileSync(`/proc/${pid}/clear_refs`, '5'); // peak RSS := current RSS
  const before = Object.fromEntries(pids.map((p) => [p, status(p, 'VmRSS')]));
  let tracing = !!process.env.HUB_MEMORY_TRACE;
  const heaps = tracing ? await heapsOf(page) : null;
  const trace = [];
  const tracer = (async () => {
    while (tracing) {
      const rss = Math.max(...pids.map((p) => status(p, 'VmRSS') - before[p]));
      const stage = await page.evaluate(() => (document.getElementById('progress').hidden ? 'loaded' : document.getElementById('progress-text').textContent.slice(-70))).catch(() => '');
      trace.push(`  +${MB(rss)}: wasm ${MB(await wasmBytes(page))}, ${await heaps.sample()} (${stage})`);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  await act();
  tracing = false;
  await tracer;
  if (heaps) await heaps.detach();
  if (trace.length) console.log(`#   trace (RSS increment: wasm memory, JS heaps in use + ArrayBuffers, every 200 ms):\n${trace.join('\n')}`);
  const peaks = pids.map((p) => ({ pid: p, before: before[p], peak: status(p, 'VmHWM'), after: status(p, 'VmRSS') }));
  const main = peaks.reduce((a, b) => (b.peak - b.before > a.peak - a.before ? b : a));
  const wasm1 = await wasmBytes(page), js1 = await jsHeap(cdp);
  await cdp.detach();
  return { ...main, inc: main.peak - main.before, wasm0, wasm1, js: js1 - js0 };
}

