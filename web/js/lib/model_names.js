// model_names.js — what a model converted in the page is called, in the
// picker, titles, exports and saved files, and the key it is kept under
// (engine/bundles_store.js). No DOM (tests/web/model_names.test.mjs).
//
// A model's own name is config.json's "_name_or_path" (what transformers
// records: a Hub id, or the path it was loaded from) or, for a Hub model,
// its id; a checkpoint folder that records neither is named by its folder
// AND the first 8 hex digits of its weights' sha256 (the bundle's
// source.sha256), never by the folder alone: two folders called "ckpt" are
// two models. The key adds the whole sha256 and the dtype, so the same model
// converted twice to q8 is kept once, and to q8 and f32 twice.

const MAX_NAME = 200;

/** config.json's "_name_or_path" (a non-empty string, trimmed) or ''. */
export function nameOrPath(configText) {
  try {
    const v = JSON.parse(configText);
    const n = v && typeof v === 'object' ? v._name_or_path : null;
    return typeof n === 'string' ? n.trim().slice(0, MAX_NAME) : '';
  } catch {
    return '';
  }
}

/** The config.json a checkpoint's entries ({name}) hold: the model
 *  folder's (sentence-transformers' 0_Transformer/) before the root's. */
export const configEntry = (entries) => entries.find((e) => e.name === '0_Transformer/config.json') || entries.find((e) => e.name === 'config.json') || null;

/** A converted model's name: its _name_or_path, else its folder (or
 *  "checkpoint") and the first 8 hex digits of its weights' sha256. */
export function convertedName({ nameOrPath: own = '', folder = '', sha = '' }) {
  if (own) return own;
  const tag = /^[0-9a-f]{8}/i.test(sha) ? `-${sha.slice(0, 8).toLowerCase()}` : '';
  return `${folder || 'checkpoint'}${tag}`;
}

/** The key a converted bundle is kept under: name, weights' sha256, dtype. */
export const convertedKey = (name, sha, dtype) => `${name}|${sha || 'no-sha'}|${dtype || 'q8'}`;

/** A file name for a bundle of model `name` in `dtype`: the name with
 *  anything but letters, digits, '.', '-' and '_' made '_' (a path's or a
 *  Hub id's '/' too), then .DTYPE.blb[.gz]. */
export function bundleFileName(name, dtype, gz = true) {
  const base = String(name || 'model').replace(/[^\w.-]+/g, '_').replace(/^[._]+|_+$/g, '') || 'model';
  return `${base}.${dtype || 'q8'}.blb${gz ? '.gz' : ''}`;
}
