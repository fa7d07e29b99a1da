// snapshot_meta.mjs — for the snapshot tests: a packed snapshot
// (lib/snapshot.js packSnapshot: magic, u32 meta length at 8, the meta JSON
// from 12, the matrices, a CRC-32 of all that) with its meta JSON edited and
// the CRC made good again, in its text form. The decoder's checks behind the
// CRC are reached this way.
import { deflateRaw, toBase64Url, crc32 } from '../../web/js/lib/bytes.js';

/** edit(meta) -> the meta to write. */
export async function withMeta(packed, edit) {
  const mlen = new DataView(packed.buffer, packed.byteOffset).getUint32(8, true);
  const meta = edit(JSON.parse(new TextDecoder().decode(packed.subarray(12, 12 + mlen))));
  const m = new TextEncoder().encode(JSON.stringify(meta));
  const body = new Uint8Array(packed.length - 4 - mlen + m.length);
  body.set(packed.subarray(0, 8));
  new DataView(body.buffer).setUint32(8, m.length, true);
  body.set(m, 12);
  body.set(packed.subarray(12 + mlen, packed.length - 4), 12 + m.length);
  const out = new Uint8Array(body.length + 4);
  out.set(body);
  new DataView(out.buffer).setUint32(body.length, crc32(body), true);
  return toBase64Url(await deflateRaw(out));
}
