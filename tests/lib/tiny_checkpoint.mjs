// tiny_checkpoint.mjs — a tiny BERT checkpoint folder around a given
// tokenizer.json, for tests that feed a tokenizer to the converter (the
// page's, in wasm, or `bertlens convert`): config.json (hidden 32, 1 layer,
// 2 heads, intermediate 64), model.safetensors with small seeded random f32
// weights (finite, different per tensor: only their shapes matter to the
// converter, but zeros would hide a tensor read from the wrong place), and
// the tokenizer.json bytes as given.
import fs from 'node:fs';
import path from 'node:path';

/** Size of a tokenizer.json's id space: the model's vocabulary and its added tokens. */
export function tokenizerVocabSize(tj) {
  const v = tj.model.vocab;
  let n = Array.isArray(v) ? v.length : Object.keys(v).length;
  for (const a of tj.added_tokens || []) n = Math.max(n, a.id + 1);
  return n;
}

/** mulberry32: a small seeded generator of floats in [0, 1). */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The BERT tensors of one encoder layer n: [name, shape]. */
export function layer(n, H, I) {
  return [
    ['attention.self.query.weight', [H, H]], ['attention.self.query.bias', [H]],
    ['attention.self.key.weight', [H, H]], ['attention.self.key.bias', [H]],
    ['attention.self.value.weight', [H, H]], ['attention.self.value.bias', [H]],
    ['attention.output.dense.weight', [H, H]], ['attention.output.dense.bias', [H]],
    ['attention.output.LayerNorm.weight', [H]], ['attention.output.LayerNorm.bias', [H]],
    ['intermediate.dense.weight', [I, H]], ['intermediate.dense.bias', [I]],
    ['output.dense.weight', [H, I]], ['output.dense.bias', [H]],
    ['output.LayerNorm.weight', [H]], ['output.LayerNorm.bias', [H]],
  ].map(([k, s]) => [`encoder.layer.${n}.${k}`, s]);
}

/** safetensors bytes of f32 tensors [name, shape], each value seeded:
 *  LayerNorm weights near 1, everything else uniform in [-0.05, 0.05). */
export function randomSafetensors(tensors, seed = 1) {
  const next = random(seed);
  const header = {};
  let off = 0;
  for (const [name, shape] of tensors) {
    const n = 4 * shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype: 'F32', shape, data_offsets: [off, off + n] };
    off += n;
  }
  let h = Buffer.from(JSON.stringify(header));
  h = Buffer.concat([h, Buffer.alloc((8 - (h.length % 8)) % 8, 0x20)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(h.length));
  const data = Buffer.alloc(off);
  for (const [name] of tensors) {
    const [a, b] = header[name].data_offsets;
    const base = /LayerNorm\.weight$/.test(name) ? 1 : 0;
    for (let o = a; o < b; o += 4) data.writeFloatLE(base + (next() - 0.5) / 10, o);
  }
  return Buffer.concat([len, h, data]);
}

/** Write a checkpoint folder dir (made empty first) around tokenizer.json
 *  bytes tokJson: a BERT of vocab_size = the tokenizer's ids (model and
 *  added tokens), `positions` position embeddings. Returns dir. */
export function tinyCheckpoint(dir, tokJson, { positions = 1024, seed = 1 } = {}) {
  const V = tokenizerVocabSize(JSON.parse(tokJson)), H = 32, I = 64, P = positions;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({
    architectures: ['BertModel'], model_type: 'bert', hidden_size: H, num_hidden_layers: 1, num_attention_heads: 2,
    intermediate_size: I, max_position_embeddings: P, type_vocab_size: 2, vocab_size: V, layer_norm_eps: 1e-12,
    hidden_act: 'gelu',
  }));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), randomSafetensors([
    ['embeddings.word_embeddings.weight', [V, H]], ['embeddings.position_embeddings.weight', [P, H]],
    ['embeddings.token_type_embeddings.weight', [2, H]], ['embeddings.LayerNorm.weight', [H]],
    ['embeddings.LayerNorm.bias', [H]], ...layer(0, H, I),
  ], seed));
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), tokJson);
  return dir;
}

/** A BERT checkpoint folder dir (made empty first) of any width, with
 *  tiny-bert's WordPiece vocabulary (vocab.txt) and extra config.json keys
 *  (e.g. _name_or_path): hidden H, intermediate I, heads, layers L. */
export function bertCheckpoint(dir, vocabTxt, { hidden: H = 32, intermediate: I = 64, heads = 2, layers: L = 1, positions: P = 64, seed = 1, config = {} } = {}) {
  const V = vocabTxt.replace(/\n$/, '').split('\n').length;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({
    architectures: ['BertModel'], model_type: 'bert', hidden_size: H, num_hidden_layers: L, num_attention_heads: heads,
    intermediate_size: I, max_position_embeddings: P, type_vocab_size: 2, vocab_size: V, layer_norm_eps: 1e-12,
    hidden_act: 'gelu', ...config,
  }));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), randomSafetensors([
    ['embeddings.word_embeddings.weight', [V, H]], ['embeddings.position_embeddings.weight', [P, H]],
    ['embeddings.token_type_embeddings.weight', [2, H]], ['embeddings.LayerNorm.weight', [H]],
    ['embeddings.LayerNorm.bias', [H]], ...Array.from({ length: L }, (_, l) => layer(l, H, I)).flat(),
  ], seed));
  fs.writeFileSync(path.join(dir, 'vocab.txt'), vocabTxt);
  return dir;
}
