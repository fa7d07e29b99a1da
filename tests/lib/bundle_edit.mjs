// bundle_edit.mjs — read a bundle into its parts and write parts back into a
// bundle (src/format/bundle.h, byte by byte: sections, alignment, every CRC), so a
// test can change one float, one dtype or one metadata entry of a good
// bundle and hand the loader a file whose only fault is that change.
//
//   const b = readBundle(bytes);                 // {version, alignment, meta, tensors}
//   b.tensors.find((t) => t.name === '...').data.writeFloatLE(Infinity, at);
//   const out = writeBundle(b);                  // a Buffer, CRCs made good
//
// meta: [{key, type, value}] with value the entry's raw bytes after its type
// (U32/I32/F32: 4 bytes; STR, STRARR, BYTES: their length prefixes too);
// tensors: [{name, dtype, dims, data}] with data a Buffer of the tensor's bytes.
import zlib from 'node:zlib';

export const DTYPES = { f32: 0, f16: 1, q8: 2, q4: 3, q8h: 4, q9: 5, q10: 6, q11: 7, q12: 8 };
export const META = { U32: 0, I32: 1, F32: 2, STR: 3, STRARR: 4, BYTES: 5 };
const HEADER = 96;

/** Bytes of a metadata value of `type` starting at b[p] (its length prefixes included). */
function metaValueSize(b, p, type) {
  switch (type) {
    case META.U32: case META.I32: case META.F32: return 4;
    case META.STR: return 4 + b.readUInt32LE(p);
    case META.STRARR: {
      let q = p + 4;
      for (let n = b.readUInt32LE(p); n > 0; n--) q += 4 + b.readUInt32LE(q);
      return q - p;
    }
    case META.BYTES: return 8 + Number(b.readBigUInt64LE(p));
    default: throw new Error(`metadata type ${type}`);
  }
}

/** A bundle's parts (the bundle is assumed valid: a test edits good bundles). */
export function readBundle(bytes) {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (b.toString('latin1', 0, 8) !== 'BERTLENS') throw new Error('not a bundle');
  const u64 = (p) => Number(b.readBigUInt64LE(p));
  const version = b.readUInt32LE(8), alignment = b.readUInt32LE(12);
  const tableOff = u64(40), dataOff = u64(56), nMeta = b.readUInt32LE(72), nTensors = b.readUInt32LE(76);
  const meta = [];
  let p = HEADER;
  for (let i = 0; i < nMeta; i++) {
    const klen = b.readUInt32LE(p), key = b.toString('utf8', p + 4, p + 4 + klen);
    const type = b.readUInt32LE(p + 4 + klen), at = p + 8 + klen, n = metaValueSize(b, at, type);
    meta.push({ key, type, value: Buffer.from(b.subarray(at, at + n)) });
    p = at + n;
  }
  const tensors = [];
  p = tableOff;
  for (let i = 0; i < nTensors; i++) {
    const nlen = b.readUInt32LE(p), name = b.toString('utf8', p + 4, p + 4 + nlen);
    p += 4 + nlen;
    const dtype = b.readUInt32LE(p), nd = b.readUInt32LE(p + 4);
    p += 8;
    const dims = [];
    for (let d = 0; d < nd; d++, p += 8) dims.push(u64(p));
    const off = u64(p), nbytes = u64(p + 8);
    p += 20;
    tensors.push({ name, dtype, dims, data: Buffer.from(b.subarray(dataOff + off, dataOff + off + nbytes)) });
  }
  return { version, alignment, meta, tensors };
}

/** The bundle of these parts: sections in order, each tensor aligned, every CRC computed. */
export function writeBundle({ version, alignment, meta, tensors }) {
  const u32 = (v) => { const x = Buffer.alloc(4); x.writeUInt32LE(v >>> 0); return x; };
  const u64 = (v) => { const x = Buffer.alloc(8); x.writeBigUInt64LE(BigInt(v)); return x; };
  const metaBuf = Buffer.concat(meta.flatMap((e) => [u32(Buffer.byteLength(e.key)), Buffer.from(e.key), u32(e.type), e.value]));
  const align = (n) => Math.ceil(n / alignment) * alignment;
  let off = 0;
  const placed = tensors.map((t) => {
    const at = align(off);
    off = at + t.data.length;
    return at;
  });
  const table = Buffer.concat(tensors.flatMap((t, i) => [u32(Buffer.byteLength(t.name)), Buffer.from(t.name), u32(t.dtype),
    u32(t.dims.length), ...t.dims.map(u64), u64(placed[i]), u64(t.data.length), u32(zlib.crc32(t.data))]));
  const tableOff = HEADER + metaBuf.length, dataOff = align(tableOff + table.length);
  const data = Buffer.alloc(off);
  tensors.forEach((t, i) => t.data.copy(data, placed[i]));
  const h = Buffer.alloc(HEADER);
  h.write('BERTLENS', 0, 'latin1');
  h.writeUInt32LE(version, 8);
  h.writeUInt32LE(alignment, 12);
  [dataOff + data.length, HEADER, metaBuf.length, tableOff, table.length, dataOff, data.length]
    .forEach((v, i) => h.writeBigUInt64LE(BigInt(v), 16 + 8 * i));
  h.writeUInt32LE(meta.length, 72);
  h.writeUInt32LE(tensors.length, 76);
  h.writeUInt32LE(zlib.crc32(metaBuf), 80);
  h.writeUInt32LE(zlib.crc32(table), 84);
  h.writeUInt32LE(zlib.crc32(h.subarray(0, 92)), 92);
  return Buffer.concat([h, metaBuf, table, Buffer.alloc(dataOff - tableOff - table.length), data]);
}

/** Elements of a tensor (the product of its dims). */
export const elements = (t) => t.dims.reduce((a, b) => a * b, 1);

/** Byte offset in t.data of block scale i of a q8 / q4 tensor (f32 scales after the integers). */
export function scaleOffset(t, i) {
  const n = elements(t);
  if (t.dtype === DTYPES.q8) return n + 4 * i;
  if (t.dtype === DTYPES.q4) return n / 2 + 4 * i;
  throw new Error(`${t.name}: dtype ${t.dtype} has no f32 scales`);
}

/** Byte offset in t.data of the high byte of QN block scale i (bundle.h: hi, lo, slo, shi planes). */
export function qnScaleHighOffset(t, i) {
  const n = elements(t), bits = t.dtype - DTYPES.q8h + 8;
  return n + (n * (bits - 8)) / 8 + n / 32 + i;
}
