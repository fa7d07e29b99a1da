// hub_range.js — one file of a Hub repository read by HTTP ranges (hub.js
// openHubCheckpoint's weight files): reads in order continue one answer,
// small reads out of order are one bounded request each, a server that
// ignores Range has what comes before streamed past. Bytes land in a
// buffer of the caller's when it gives one (convert.js reuses them). With
// HubError and the parsing they share with hub.js.

export class HubError extends Error {
  constructor(code, message, detail = '') {
    super(message);
    this.name = 'HubError';
    this.code = code;
    this.detail = detail;
  }
}

/** Text from a server, safe to show: no control characters, at most 300. */
export const serverWords = (s) => String(s || '').replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, 300);

/** Content-Range 'bytes a-b/total' -> {first, last, total} (safe integers), or null. */
export function parseContentRange(text) {
  const m = /^bytes (\d{1,16})-(\d{1,16})\/(\d{1,16})$/.exec(String(text || '').trim());
  if (!m) return null;
  const [first, last, total] = m.slice(1).map(Number);
  if (![first, last, total].every(Number.isSafeInteger) || first > last || last >= total) return null;
  return { first, last, total };
}

/** An open response body read in order: take(n) bytes, skip(n) bytes.
 *  Where the browser offers a BYOB reader (fetch bodies are byte streams),
 *  the bytes go through one reused scratch buffer (take): no chunk is kept
 *  as garbage beside them (a 125 MB embedding matrix would double). */
export class BodyReader {
  constructor(res, pos, what) {
    try {
      this.reader = res.body.getReader({ mode: 'byob' });
      this.byob = true;
    } catch {
      this.reader = res.body.getReader();
      this.byob = false;
    }
    this.pos = pos;
    this.left = null; // Uint8Array: received, not yet taken (default reader)
    this.scratch = null; // ArrayBuffer for skip() (BYOB reader)
    this.what = what;
  }

  async next() {
    if (this.left && this.left.length) return;
    const { done, value } = await this.reader.read();
    if (done) throw new Error('the answer ended early');
    this.left = value;
  }

  /** BYOB: fill view's bytes; returns the (transferred) buffer. */
  async fill(buf, off, n, onBytes) {
    for (let got = 0; got < n;) {
      const { done, value } = await this.reader.read(new Uint8Array(buf, off + got, n - got));
      if (done || !value) throw new Error('the answer ended early');
      buf = value.buffer;
      got += value.byteLength;
      this.pos += value.byteLength;
      onBytes(this.pos);
    }
    return buf;
  }

  /** The next n bytes, into `into` (n bytes) when given, else a new array. */
  async take(n, onBytes, into = null) {
    if (this.byob) {
      // Read into one reused scratch buffer and copy out: buffers a BYOB
      // read hands back are freed only by a garbage collection, so a new
      // one per read would pile up the checkpoint's size in garbage
      // (measured: +180 MB over a 300 MB download in Chromium); the copy
      // goes to `into`, a buffer convert.js reuses (the worker hands it back).
      const out = into || new Uint8Array(n);
      for (let got = 0; got < n;) {
        const k = Math.min(n - got, SMALL_READ);
        this.scratch = await this.fill(this.scratch && this.scratch.byteLength >= SMALL_READ ? this.scratch : new ArrayBuffer(SMALL_READ), 0, k, onBytes);
        out.set(new Uint8Array(this.scratch, 0, k), got);
        got += k;
      }
      return out;
    }
    const out = into || new Uint8Array(n);
    let got = 0;
    while (got < n) {
      await this.next();
      const k = Math.min(n - got, this.left.length);
      out.set(this.left.subarray(0, k), got);
      this.left = this.left.subarray(k);
      got += k;
      this.pos += k;
      onBytes(this.pos);
    }
    return out;
  }

  async skip(n, onBytes) {
    while (n > 0) {
      if (this.byob) {
        const k = Math.min(n, SMALL_READ);
        this.scratch = await this.fill(this.scratch && this.scratch.byteLength >= k ? this.scratch : new ArrayBuffer(SMALL_READ), 0, k, onBytes);
        n -= k;
        continue;
      }
      await this.next();
      const k = Math.min(n, this.left.length);
      this.left = this.left.subarray(k);
      n -= k;
      this.pos += k;
      onBytes(this.pos);
    }
  }

  cancel() {
    this.reader.cancel().catch(() => {});
  }
}

const SMALL_READ = 1 << 20; // reads up to this size are one bounded request

/** A file of the repository read by ranges: {size, read(start, end)}. */
export class RangeFile {
  constructor(hub, file, size, first) {
    Object.assign(this, { hub, file, size, first }); // first: the first bytes, from the size probe
    this.body = null;
    this.lastEnd = -1; // where the last read ended
  }

  async open(start, end) {
    const res = await this.hub.get(this.file, { Range: `bytes=${start}-${end - 1}` });
    const what = `${this.file} from ${new URL(res.url || this.hub.endpoint).host}`;
    if (res.status === 206) {
      const cr = parseContentRange(res.headers.get('content-range'));
      if (!cr || cr.first !== start || cr.last !== end - 1 || cr.total !== this.size) {
        res.body?.cancel().catch(() => {});
        throw new HubError('bad-range', `The server sent the wrong part of ${this.file} (bytes ${start}–${end - 1} of ${this.size} were asked for), so it was not used.`,
          `Content-Range ${JSON.stringify(serverWords(res.headers.get('content-range')))}${cr ? '' : ' (missing, malformed, or not exposed by CORS)'} from ${what}`);
      }
      return new BodyReader(res, start, what);
    }
    // 200: the server ignored Range and sends the whole file; what comes
    // before start streams past and is dropped.
    const len = Number(res.headers.get('content-length'));
    if (res.headers.has('content-length') && len !== this.size) {
      res.body?.cancel().catch(() => {});
      throw new HubError('bad-range', `The server sent ${this.file} with a size (${len} bytes) other than before (${this.size}), so it was not used.`, what);
    }
    const r = new BodyReader(res, 0, what);
    await r.skip(start, () => {});
    return r;
  }

  /** Bytes [start, end) of the file: into `into` (a Uint8Array of that
   *  length) when given, else a new array. */
  async read(start, end, into = null) {
    if (into && into.length !== end - start) into = null;
    if (!(Number.isSafeInteger(start) && Number.isSafeInteger(end) && start >= 0 && start <= end && end <= this.size)) {
      throw new HubError('bad-range', `${this.file}: a read of bytes ${start}–${end} outside its ${this.size} bytes`);
    }
    if (end === start) return new Uint8Array(0);
    if (this.first && end <= this.first.length) return this.first.slice(start, end);
    const report = (pos) => this.hub.progress({ file: this.file, done: pos, total: this.size });
    try {
      if (this.body && this.body.pos === start) {
        this.lastEnd = end;
        return await this.body.take(end - start, report, into);
      }
      if (this.body && start > this.body.pos && start - this.body.pos <= SMALL_READ) {
        this.lastEnd = end;
        await this.body.skip(start - this.body.pos, report);
        return await this.body.take(end - start, report, into);
      }
      if (this.body) { this.body.cancel(); this.body = null; }
      const inOrder = start === this.lastEnd;
      this.lastEnd = end;
      if (end - start <= SMALL_READ && !inOrder) {
        const r = await this.open(start, end);
        const out = await r.take(end - start, () => {}, into);
        r.cancel();
        return out;
      }
      // A long read, or one continuing the last: keep the answer open to
      // the end of the file, so the next read in order continues it.
      this.body = await this.open(start, this.size);
      return await this.body.take(end - start, report, into);
    } catch (e) {
      if (this.body) { this.body.cancel(); this.body = null; }
      if (e instanceof HubError) throw e;
      throw new HubError('cut', `The download of ${this.file} was cut off (connection lost) before it was complete; nothing of it was kept. Try again.`, serverWords(e && (e.message || e)));
    }
  }

  close() {
    if (this.body) { this.body.cancel(); this.body = null; }
  }
}
