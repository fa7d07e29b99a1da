// bytes.js — the byte layer of the link formats (snapshot.js, and state.js's
// compressed text z=): CRC-32, base64url, raw deflate / inflate with an
// output cap, a growing writer and a bounds-checked reader. No DOM; damage
// throws FormatError with a message saying what is wrong, in words.

export class FormatError extends Error {}


let crcTable = null;
export function crc32(bytes) {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = crcTable[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export function toBase64Url(bytes) {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function fromBase64Url(text) {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new FormatError('it contains characters that base64url does not use');
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
  let bin;
  try {
    bin = atob(b64);
  } catch {
    throw new FormatError('it is not valid base64url (was the link cut?)');
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

async function pipe(bytes, stream) {
  const out = new Response(new Blob([bytes]).stream().pipeThrough(stream));
  return new Uint8Array(await out.arrayBuffer());
}

export const deflateRaw = (bytes) => pipe(bytes, new CompressionStream('deflate-raw'));

/** Inflate, refusing output longer than maxBytes (a few bytes of a link
 *  must not expand into gigabytes). */
export async function inflateRaw(bytes, maxBytes) {
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw')).getReader();
  const parts = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
    if (n > maxBytes) {
      await reader.cancel();
      throw new FormatError(`it expands to more than ${maxBytes} bytes`);
    }
    parts.push(value);
  }
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
}

/** A growing little-endian byte buffer. */
export class Writer {
  constructor() { this.buf = new Uint8Array(1024); this.n = 0; this.dv = new DataView(this.buf.buffer); }
  room(k) {
    if (this.n + k <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.n + k) cap *= 2;
    const b = new Uint8Array(cap);
    b.set(this.buf.subarray(0, this.n));
    this.buf = b;
    this.dv = new DataView(b.buffer);
  }
  u8(v) { this.room(1); this.buf[this.n++] = v; }
  i8(v) { this.room(1); this.dv.setInt8(this.n++, v); }
  u16(v) { this.room(2); this.dv.setUint16(this.n, v, true); this.n += 2; }
  u32(v) { this.room(4); this.dv.setUint32(this.n, v, true); this.n += 4; }
  f32(v) { this.room(4); this.dv.setFloat32(this.n, v, true); this.n += 4; }
  bytes(b) { this.room(b.length); this.buf.set(b, this.n); this.n += b.length; }
  done() { return this.buf.slice(0, this.n); }
}

/** A bounds-checked little-endian reader: `what` names the field in the
 *  error when the bytes end early. */
export class Reader {
  constructor(bytes) { this.b = bytes; this.n = 0; this.dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength); }
  need(k, what) {
    if (this.n + k > this.b.length) throw new FormatError(`it ends early (in ${what})`);
  }
  u8(w) { this.need(1, w); return this.b[this.n++]; }
  i8(w) { this.need(1, w); return this.dv.getInt8(this.n++); }
  u16(w) { this.need(2, w); const v = this.dv.getUint16(this.n, true); this.n += 2; return v; }
  u32(w) { this.need(4, w); const v = this.dv.getUint32(this.n, true); this.n += 4; return v; }
  f32(w) { this.need(4, w); const v = this.dv.getFloat32(this.n, true); this.n += 4; return v; }
  bytes(k, w) { this.need(k, w); const v = this.b.subarray(this.n, this.n + k); this.n += k; return v; }
}
