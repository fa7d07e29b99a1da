// bundles_gzip.js — unpacking a bundle (bundles.js): gzip with the
// browser's DecompressionStream, bounded so that a few MB of gzip cannot
// become gigabytes in memory, and what an inflated bundle starts with
// (src/format/bundle.h: the magic and the declared file_size).

import { DeliveryError, rawText, formatBytes } from './bundles_errors.js';

export function isGzip(u8) {
  return u8.length >= 2 && u8[0] === 0x1f && u8[1] === 0x8b;
}

// The largest bundle this page takes. The engine keeps the whole inflated
// bundle in its WebAssembly memory (4 GB at most in the one-thread build,
// 2 GB in the threaded one) beside the buffers of a run, so 2 GiB is
// already more than it could hold; nothing larger is worth unpacking.
export const MAX_BUNDLE_BYTES = 2 ** 31;
// src/format/bundle.h: an inflated bundle starts "BERTLENS", and its u64
// file_size at offset 16 is the whole file's length.
const MAGIC = [0x42, 0x45, 0x52, 0x54, 0x4c, 0x45, 0x4e, 0x53];
const SIZE_END = 24; // bytes needed to read magic and file_size
const GZIP_SLICE = 64 << 10; // compressed bytes handed to the decompressor at a time (gunzipIfNeeded)

export const hasMagic = (u8) => u8.length >= MAGIC.length && MAGIC.every((b, i) => u8[i] === b);

/** file_size from a bundle's first 24 bytes (a Number, exact up to 2^53,
 *  larger values stay larger than any cap), or null when the bytes do not
 *  start like a bundle. */
export function declaredSize(head) {
  if (head.length < SIZE_END || !hasMagic(head)) return null;
  return Number(new DataView(head.buffer, head.byteOffset, SIZE_END).getBigUint64(16, true));
}

/** Decompress gzip bytes (or return them unchanged if they are not gzip).
 *  Unpacking stops early, with a DeliveryError whose detail starts "size:",
 *  once the output passes MAX_BUNDLE_BYTES and, with bundle: true (every
 *  model the page loads), once it does not start like a bundle or passes
 *  the file_size its header declares: a few MB of gzip cannot become
 *  gigabytes in memory. Damaged gzip: a DeliveryError whose detail starts
 *  "gzip:". */
export async function gunzipIfNeeded(u8, { bundle = false } = {}) {
  if (!isGzip(u8)) return u8.buffer.byteLength === u8.length ? u8.buffer : u8.slice().buffer;
  if (typeof DecompressionStream !== 'function') {
    throw new DeliveryError('This browser is too old to unpack a compressed (.gz) model. Please use a current version of Chrome, Edge, Firefox or Safari, or open an uncompressed .blb file.', 'no DecompressionStream');
  }
  let reader;
  try {
    // The compressed bytes go in by slices of GZIP_SLICE (64 KB), each written only
    // when the unpacked side has been read: one slice unpacks to at most
    // ~1032 times its size (deflate's limit), so memory stays bounded
    // before the checks below can stop a bomb. A whole 2 MB file handed
    // over at once let the browser unpack ~600 MB before the first read.
    const ds = new DecompressionStream('gzip');
    reader = ds.readable.getReader();
    const writer = ds.writable.getWriter();
    (async () => {
      for (let i = 0; i < u8.length; i += GZIP_SLICE) await writer.write(u8.subarray(i, i + GZIP_SLICE));
      await writer.close();
    })().catch(() => {}); // a failure reaches the reader (damaged gzip) or comes from its cancel (stopped)
  } catch (e) {
    throw new DeliveryError('the file is damaged or cut short: its compressed data could not be unpacked', `gzip: ${rawText(e)}`);
  }
  const parts = [];
  let n = 0;
  let cap = MAX_BUNDLE_BYTES;
  let head = new Uint8Array(0); // the first SIZE_END bytes, until they are known
  const stop = async (message, detail) => {
    await reader.cancel().catch(() => {});
    throw new DeliveryError(message, `size: ${detail}`);
  };
  for (;;) {
    let step;
    try {
      step = await reader.read();
    } catch (e) {
      throw new DeliveryError('the file is damaged or cut short: its compressed data could not be unpacked', `gzip: ${rawText(e)}`);
    }
    if (step.done) break;
    const chunk = step.value;
    if (bundle && head && head.length < SIZE_END) {
      const grown = new Uint8Array(Math.min(SIZE_END, head.length + chunk.length));
      grown.set(head);
      grown.set(chunk.subarray(0, grown.length - head.length), head.length);
      head = grown;
      if (head.length >= MAGIC.length && !hasMagic(head)) {
        await stop('the file is not a bertlens bundle: its unpacked bytes do not start with “BERTLENS”', 'no BERTLENS magic after gzip');
      }
      if (head.length === SIZE_END) {
        const declared = declaredSize(head);
        head = null;
        if (declared > MAX_BUNDLE_BYTES) {
          await stop(`the file is too large: its header says it unpacks to ${formatBytes(declared)}, more than the ${formatBytes(MAX_BUNDLE_BYTES)} this page can hold`,
            `header file_size ${declared}, page maximum ${MAX_BUNDLE_BYTES}`);
        }
        cap = declared;
      }
    }
    n += chunk.length;
    if (n > cap) {
      await stop(head === null
        ? `the file is too large: it unpacks to more than the ${formatBytes(cap)} its header declares (a damaged file or a decompression bomb), so unpacking stopped`
        : `the file is too large: it unpacks to more than ${formatBytes(cap)}, more than this page can hold, so unpacking stopped`,
      `more than ${cap} bytes unpacked`);
    }
    parts.push(chunk);
  }
  const out = new Uint8Array(n);
  let off = 0;
  for (const p of parts) { out.set(p, off); off += p.length; }
  return out.buffer;
}
