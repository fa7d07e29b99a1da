#!/usr/bin/env node
// frontend.mjs — a notebook front end for show() outputs while nbclient runs
// the notebook (nbclient renders nothing): run_notebook.py writes a live
// output's HTML as it arrives and starts this; headless Chromium opens it
// over http (as a notebook server would serve it), the output's loader
// fetches the model from the kernel's server, the page's engine draws, and
// its snapshot goes back to the kernel, which keeps it in the cell's second
// output. Exits 0 once the output is 'ready', 1 on 'error' or a time-out.
// Requests may go only to 127.0.0.1 (this server and the kernel's).
//
//   node tests/notebook/frontend.mjs DIR FILE.html SHOT.png
import fs from 'node:fs';
import path from 'node:path';
import { serve, launchChromium } from '../browser/server.mjs';

const [dir, file, shot] = process.argv.slice(2);
const srv = await serve(path.resolve(dir));
const { context, profile } = await launchChromium({ viewport: { width: 1100, height: 900 } });
let code = 1;
try {
  const outside = [];
  await context.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (/^https?:$/.test(u.protocol) && u.hostname !== '127.0.0.1') { outside.push(u.href); return route.abort(); }
    return route.continue();
  });
  const page = context.pages()[0] || await context.newPage();
  page.on('pageerror', (e) => console.error(`frontend: pageerror ${e.message}`));
  // the first snapshot the page sends back to the kernel (show() waits for it)
  const kept = page.waitForResponse((r) => r.url().includes('/snapshot/') && r.status() === 204, { timeout: 120000 });
  kept.catch(() => {});
  await page.goto(`${srv.url}${file}`);
  await page.waitForFunction(() => ['ready', 'error'].includes(document.querySelector('.bertlens-output')?.dataset.state), null, { timeout: 120000 });
  const state = await page.$eval('.bertlens-output', (e) => `${e.dataset.state} ${e.querySelector('.bertlens-note').textContent}`);
  if (state.startsWith('ready')) await kept;
  fs.mkdirSync(path.dirname(shot), { recursive: true });
  await page.screenshot({ path: shot, fullPage: true });
  console.log(`frontend: ${file}: ${state}${outside.length ? `; requests outside: ${outside.join(' ')}` : ''}`);
  code = state.startsWith('ready') && !outside.length ? 0 : 1;
} catch (e) {
  console.error(`frontend: ${e.message}`);
} finally {
  await context.close().catch(() => {});
  await srv.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
process.exit(code);
