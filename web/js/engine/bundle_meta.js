// bundle_meta.js — string entries of a bundle's metadata (src/format/bundle.h:
// header, then typed key/value entries), read by slices through
// read(start, end) -> Promise<Uint8Array> (the converter's bundle held in
// the worker, convert.js {hold}; or a Uint8Array's subarray), skipping the
// large values (the vocabulary, tokenizer.json) without reading them. Used
// for source.sha256, the name a converted model is kept by
// (page/models.js), before the engine takes the bundle.

const HEADER = 96;
const TYPE_SIZE = { 0: 4, 1: 4, 2: 4 }; // U32, I32, F32

const WINDOW = 1 << 20; // bytes read at a time

/** {key: string} of the STR entries named in keys (absent: not there).
 *  Reads the metadata through a window of WINDOW bytes, jumping over a
 *  BYTES value (tokenizer.json) unread. Throws on a bundle whose metadata
 *  does not parse. */
export async function metaStrings(read, keys) {
  const want = new Set(keys);
  const head = await read(0, HEADER);
  const hv = new DataView(head.buffer, head.byteOffset, head.byteLength);
  if (new TextDecoder().decode(head.subarray(0, 8)) !== 'BERTLENS') throw new Error('not a bertlens bundle');
  const metaOff = Number(hv.getBigUint64(24, true)), metaEnd = metaOff + Number(hv.getBigUint64(32, true));
  const n = hv.getUint32(72, true);
  let win = new Uint8Array(0), winAt = 0;
  const bytes = async (o, len) => { // len bytes at o, from the window (refilled as needed)
    if (o + len > metaEnd) throw new Error('the metadata runs past its section');
    if (o < winAt || o + len > winAt + win.length) {
      win = await read(o, Math.min(metaEnd, o + Math.max(len, WINDOW)));
      winAt = o;
    }
    return win.subarray(o - winAt, o - winAt + len);
  };
  const u32 = async (o) => { const b = await bytes(o, 4); return new DataView(b.buffer, b.byteOffset, 4).getUint32(0, true); };
  const text = new TextDecoder();
  const out = {};
  let at = metaOff;
  for (let i = 0; i < n && Object.keys(out).length < want.size; i++) {
    const klen = await u32(at);
    if (klen < 1 || klen > 255) throw new Error('bad metadata key');
    const key = text.decode(await bytes(at + 4, klen));
    at += 4 + klen;
    const type = await u32(at);
    at += 4;
    if (type in TYPE_SIZE) at += TYPE_SIZE[type];
    else if (type === 3) { // STR
      const len = await u32(at);
      if (want.has(key)) out[key] = text.decode(await bytes(at + 4, len));
      at += 4 + len;
    } else if (type === 4) { // STRARR: count, then (len, bytes) each
      const count = await u32(at);
      at += 4;
      for (let k = 0; k < count; k++) at += 4 + await u32(at);
    } else if (type === 5) { // BYTES: u64 length, then the bytes (not read)
      const b = await bytes(at, 8);
      at += 8 + Number(new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true));
    } else throw new Error(`bad metadata type ${type}`);
  }
  return out;
}
