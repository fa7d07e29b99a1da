// checkpoints.mjs — what the head tests share: running a program that must
// succeed, assembling the fixtures' checkpoint folders (tests/fixtures/mlm,
// tests/fixtures/heads) with their trained tokenizers, converting them to
// bundles once per run, and a wasm module that holds the last bundle it was
// given. Used by predict, heads and explain tests (and convert's `ok`).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, ROOT, loadWasm } from './backend.mjs';
import { loadBundle } from '../../tools/wasm_node.mjs';

/** Runs cmd in the repository root; throws with its output unless it exits 0. */
export function ok(cmd, argv) {
  const r = spawnSync(cmd, argv, { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${path.basename(cmd)} ${argv.join(' ')} failed (${r.status}):\n${r.stderr}${r.stdout}`);
  return r;
}

export const MLM_DIR = path.join(ROOT, 'tests/fixtures/mlm');
export const HEADS_DIR = path.join(ROOT, 'tests/fixtures/heads');
let mlmRefs = null;
/** tests/fixtures/mlm/refs.json (read once). */
export const mlmRefsJson = () => (mlmRefs ??= JSON.parse(fs.readFileSync(path.join(MLM_DIR, 'refs.json'), 'utf8')));

/** The masked-LM checkpoint folder of a family: the fixture's own, or (where
 *  refs.json names a trained tokenizer for it: roberta, albert, ...) a copy
 *  under out with that tokenizer's files added. */
export function mlmCheckpoint(fam, out) {
  const tok = mlmRefsJson().tokenizer?.[fam];
  if (!tok) return path.join(MLM_DIR, fam);
  const dir = path.join(out, `src-${fam}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.cpSync(path.join(MLM_DIR, fam), dir, { recursive: true });
  fs.cpSync(path.join(ROOT, tok), dir, { recursive: true });
  return dir;
}

/** A task-head checkpoint folder under out (ck: an entry of
 *  tests/fixtures/heads/refs.json's checkpoints, tokenizers: its tokenizer
 *  map): the head's files, the family's shared encoder shard and its trained
 *  tokenizer (but not the tokenizer folder's own config or weights). */
export function headCheckpoint(ck, tokenizers, out) {
  const dir = path.join(out, `src-${ck.family}-${ck.name}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.cpSync(path.join(HEADS_DIR, ck.family, ck.name), dir, { recursive: true });
  fs.copyFileSync(path.join(HEADS_DIR, ck.family, 'encoder.safetensors'), path.join(dir, 'encoder.safetensors'));
  const tok = path.join(ROOT, tokenizers[ck.family]);
  for (const f of fs.readdirSync(tok))
    if (f !== 'config.json' && f !== 'model.safetensors') fs.copyFileSync(path.join(tok, f), path.join(dir, f));
  return dir;
}

/** `bertlens convert src out --dtype dt --name name`; returns out. */
export function convert(src, out, dt, name) {
  ok(BIN, ['convert', src, out, '--dtype', dt, '--name', name]);
  return out;
}

let wasm = null;
/** This backend's wasm module (made once) holding the bundle file. */
export async function wasmHolding(file) {
  wasm ??= await loadWasm();
  if (wasm.__loaded !== file) {
    loadBundle(wasm, file);
    wasm.__loaded = file;
  }
  return wasm;
}
