// hub.js — a checkpoint named by its Hugging Face Hub id (OWNER/NAME[@REV]),
// read over HTTP for the in-page converter (convert.js), with no DOM.
//
// Files come from {endpoint}/{id}/resolve/{revision}/{file} (the Hub's
// documented layout; the endpoint is hub.endpoint in models/index.json,
// https://huggingface.co by default). config.json is asked for first: its
// x-repo-commit names the commit, and every other file is then read at that
// commit, so the files agree even if the branch moves meanwhile. The small
// files are read whole; each weight file becomes an entry {name, size,
// read(start, end)} whose reads are HTTP Range requests. Reads in increasing
// order share one open response (convert.js reads each weight file once, in
// order, hashing it and taking its tensors on the way), so a checkpoint is
// downloaded once and never held whole. A server that ignores Range gets its
// bytes before `start` discarded as they stream past, never kept.
//
// Failures are HubErrors: .message a sentence for the reader, .detail the
// server's or browser's own words (shown as small print, as text), .code one
// of 'bad-id', 'not-found', 'gated', 'no-safetensors', 'http', 'network',
// 'cut', 'bad-range', 'too-large'.

import { HubError, parseContentRange, serverWords, BodyReader, RangeFile } from './hub_range.js';

export { HubError, parseContentRange };

export const DEFAULT_ENDPOINT = 'https://huggingface.co';

// The Hub's repository names: letters, digits, '-', '_', '.', not starting
// or ending with '-' or '.', no '--' or '..', at most 96 characters.
const PART = /^(?![-.])(?!.*(--|\.\.))[A-Za-z0-9._-]{1,96}(?<![-.])$/;
// A branch, tag or commit ('main', 'v1.0', 'refs/pr/3', 40 hex digits).
const REVISION = /^(?![/.])(?!.*(\.\.|\/\/|\/\.))[A-Za-z0-9._/-]{1,128}(?<![/.])$/;
export const COMMIT = /^[0-9a-f]{40}$/;

/** 'OWNER/NAME[@REVISION]' -> {id, owner, name, revision, spec}; throws a
 *  HubError('bad-id') that quotes the text only as data. */
export function parseHubId(text) {
  const s = typeof text === 'string' ? text.trim() : '';
  const bad = (why) => new HubError('bad-id', `“${s.slice(0, 200)}” is not a Hugging Face model id: ${why}. `
    + 'Write it as OWNER/NAME, as on the model\'s Hub page (e.g. google-bert/bert-base-uncased), optionally with @REVISION (a branch, tag or commit).');
  if (!s) throw bad('it is empty');
  if (s.length > 300) throw bad('it is too long');
  const at = s.indexOf('@');
  const id = at < 0 ? s : s.slice(0, at);
  const revision = at < 0 ? 'main' : s.slice(at + 1);
  const parts = id.split('/');
  if (parts.length !== 2) throw bad(parts.length === 1 ? 'it has no OWNER/ part' : 'it has more than one “/”');
  const [owner, name] = parts;
  if (!PART.test(owner) || !PART.test(name)) {
    throw bad('OWNER and NAME may hold only letters, digits, “-”, “_” and “.” (not at either end, not doubled), up to 96 each');
  }
  if (!REVISION.test(revision)) throw bad('the revision after “@” may hold only letters, digits, “-”, “_”, “.” and “/”');
  return { id, owner, name, revision, spec: revision === 'main' ? id : `${id}@${revision}` };
}

/** The endpoint from a models/index.json object: an http(s) origin with an
 *  optional path prefix (a mirror), no trailing '/'. */
export function hubEndpoint(index) {
  const raw = index && index.hub && typeof index.hub.endpoint === 'string' ? index.hub.endpoint : DEFAULT_ENDPOINT;
  let u;
  try {
    u = new URL(raw);
  } catch {
    return DEFAULT_ENDPOINT;
  }
  if (!/^https?:$/.test(u.protocol) || u.username || u.password || u.search || u.hash) return DEFAULT_ENDPOINT;
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

export function resolveUrl(endpoint, id, revision, file) {
  const [owner, name] = id.split('/');
  const enc = (p) => p.split('/').map(encodeURIComponent).join('/');
  return `${endpoint}/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/resolve/${encodeURIComponent(revision)}/${enc(file)}`;
}

const formatMB = (n) => (n >= 1 << 20 ? `${(n / 1048576).toFixed(1)} MB` : `${(n / 1024).toFixed(1)} KB`);

/** The HubError for a non-2xx answer to `file` of repository `id`:
 *  status, the X-Error-Code and X-Error-Message headers (the Hub's). */
export function hubHttpError(status, errorCode, errorMessage, { id, revision = 'main', file }) {
  const detail = `HTTP ${status}${errorCode ? ` ${serverWords(errorCode)}` : ''}${errorMessage ? `: ${serverWords(errorMessage)}` : ''} for ${file}`;
  if (errorCode === 'GatedRepo' && (status === 401 || status === 403)) {
    return new HubError('gated', `${id} is a gated model: its owner asks visitors to accept conditions and sign in, so downloading it needs a Hugging Face access token, and bertlens does not take tokens. `
      + 'Pick a model that is not gated, or download it with your account and open the folder with “Convert a model folder…”.', detail);
  }
  if (errorCode === 'RepositoryNotFound' || (status === 404 && !errorCode && file === 'config.json') || (status === 401 && !errorCode)) {
    return new HubError('not-found', `The Hugging Face Hub has no public model ${id}: it was not found or is private. Check the spelling (OWNER/NAME, as on the model's page).`, detail);
  }
  if (errorCode === 'RevisionNotFound') {
    return new HubError('not-found', `${id} has no revision “${revision}” (branch, tag or commit) on the Hugging Face Hub.`, detail);
  }
  if (status === 404 || errorCode === 'EntryNotFound') {
    return new HubError('not-found', `${id} has no file ${file} at revision “${revision}”.`, detail);
  }
  if (status === 429) return new HubError('http', 'The Hugging Face Hub asks to slow down (too many requests). Wait a minute and try again.', detail);
  if (status >= 500) return new HubError('http', 'The Hugging Face Hub had a problem answering. This is usually temporary: try again in a minute.', detail);
  return new HubError('http', `The Hugging Face Hub refused to send ${file} of ${id}.`, detail);
}

function unreachable(endpoint, e) {
  return new HubError('network', `Could not reach the Hugging Face Hub (${endpoint}): this device may be offline, or the server did not allow this page to read its answer (CORS). `
    + 'Check the connection and try again.', serverWords(e && (e.message || e)));
}

// The tokenizer and settings files the converter may want besides
// config.json, in the order transformers looks at them: tokenizer.json,
// where present, stands for the family's own files.
const TOKENIZER_FILE = 'tokenizer.json';
const ORIGINAL_TOKENIZER = ['vocab.txt', 'vocab.json', 'merges.txt', 'spiece.model', 'sentencepiece.bpe.model', 'spm.model'];
const SETTINGS = ['tokenizer_config.json', 'special_tokens_map.json', 'sentence_bert_config.json'];
const MAX_SMALL_FILE = 64 << 20; // tokenizer.json of a 250k vocabulary is ~17 MB
const MAX_SHARDS = 64;

/** Open the checkpoint `spec` (parseHubId's result) at `endpoint`:
 *  {commit, entries, files, close()} for convertCheckpoint. wants(name) ->
 *  Promise<0|1|2> is the converter's own choice of files (convert.js
 *  'wants'); progress({file, done, total}) hears of every file's bytes;
 *  known(commit) -> true stops after config.json (entries: null). */
export async function openHubCheckpoint({ endpoint, spec, wants = async () => 1, progress = () => {}, fetchFn = globalThis.fetch, known = async () => false }) {
  const { id } = spec;
  let revision = spec.revision;
  const hub = {
    endpoint,
    progress,
    async get(file, headers = {}) {
      let res;
      try {
        res = await fetchFn(resolveUrl(endpoint, id, revision, file), { headers, cache: 'no-store', credentials: 'omit', redirect: 'follow' });
      } catch (e) {
        throw unreachable(endpoint, e);
      }
      if (!res.ok) {
        res.body?.cancel().catch(() => {});
        throw hubHttpError(res.status, res.headers.get('x-error-code'), res.headers.get('x-error-message'), { id, revision, file });
      }
      return res;
    },
  };
  const readSmall = async (file) => {
    const res = await hub.get(file);
    const len = Number(res.headers.get('content-length'));
    if (len > MAX_SMALL_FILE) {
      res.body?.cancel().catch(() => {});
      throw new HubError('too-large', `${file} of ${id} is ${formatMB(len)}, more than such a file can be (${formatMB(MAX_SMALL_FILE)}), so it was not read.`);
    }
    const chunks = [];
    let n = 0;
    try {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        n += value.length;
        if (n > MAX_SMALL_FILE) {
          reader.cancel().catch(() => {});
          throw new HubError('too-large', `${file} of ${id} is more than ${formatMB(MAX_SMALL_FILE)}, more than such a file can be, so it was not read.`);
        }
        chunks.push(value);
        progress({ file, done: n, total: len || 0 });
      }
    } catch (e) {
      if (e instanceof HubError) throw e;
      throw new HubError('cut', `The download of ${file} was cut off (connection lost); nothing was kept. Try again.`, serverWords(e && (e.message || e)));
    }
    const out = new Uint8Array(n);
    let off = 0;
    for (const c of chunks) { out.set(c, off); off += c.length; }
    return { bytes: out, res };
  };
  /** A file that may be absent: its bytes, or null on a 404. */
  const optional = async (file) => {
    try {
      return (await readSmall(file)).bytes;
    } catch (e) {
      if (e.code === 'not-found' && /^HTTP 404/.test(e.detail)) return null;
      throw e;
    }
  };
  /** Size (and first bytes) of a large file, or null on a 404. */
  const probe = async (file) => {
    let res;
    try {
      res = await hub.get(file, { Range: 'bytes=0-7' });
    } catch (e) {
      if (e.code === 'not-found' && /^HTTP 404/.test(e.detail)) return null;
      throw e;
    }
    let size;
    if (res.status === 206) {
      const cr = parseContentRange(res.headers.get('content-range'));
      if (!cr || cr.first !== 0) {
        res.body?.cancel().catch(() => {});
        throw new HubError('bad-range', `The server answered a part of ${file} without saying which part and of what size, so it cannot be read in parts.`,
          `Content-Range ${JSON.stringify(serverWords(res.headers.get('content-range')))} from ${new URL(res.url || endpoint).host} (missing, malformed, or not exposed by CORS)`);
      }
      size = cr.total;
    } else {
      size = Number(res.headers.get('content-length'));
      if (!res.headers.has('content-length') || !Number.isSafeInteger(size) || size < 0) {
        res.body?.cancel().catch(() => {});
        throw new HubError('bad-range', `The server sends ${file} whole and without its size, so it cannot be read in parts.`, `HTTP ${res.status} from ${new URL(res.url || endpoint).host}`);
      }
    }
    const want = Math.min(8, size);
    let first;
    try {
      const r = new BodyReader(res, 0, file);
      first = await r.take(want, () => {});
      r.cancel();
    } catch (e) {
      throw new HubError('cut', `The download of ${file} was cut off (connection lost); nothing was kept. Try again.`, serverWords(e && (e.message || e)));
    }
    return new RangeFile(hub, file, size, first);
  };

  // 1. config.json, and the commit it was read at.
  const config = await readSmall('config.json');
  const commitHeader = (config.res.headers.get('x-repo-commit') || '').trim().toLowerCase();
  const commit = COMMIT.test(commitHeader) ? commitHeader : (COMMIT.test(revision) ? revision : null);
  if (commit) revision = commit;
  // known(commit): the caller has this commit already (a kept bundle).
  if (commit && await known(commit)) return { commit, revision, entries: null, weightBytes: 0, close: () => {} };
  const small = new Map([['config.json', config.bytes]]);
  // 2. the tokenizer: tokenizer.json, else the family's own files; settings.
  const wanted = async (f) => (await wants(f)) === 1;
  const tj = (await wanted(TOKENIZER_FILE)) ? await optional(TOKENIZER_FILE) : null;
  if (tj) small.set(TOKENIZER_FILE, tj);
  else for (const f of ORIGINAL_TOKENIZER) if (await wanted(f)) { const b = await optional(f); if (b) small.set(f, b); }
  for (const f of SETTINGS) if (await wanted(f)) { const b = await optional(f); if (b) small.set(f, b); }
  // 3. the weights: model.safetensors, or the index and its shards.
  const weights = [];
  const single = await probe('model.safetensors');
  if (single) weights.push(single);
  else {
    const ix = await optional('model.safetensors.index.json');
    if (!ix) {
      const bin = await probe('pytorch_model.bin').catch(() => null);
      throw new HubError('no-safetensors', `${id} has no model.safetensors${bin ? ' (only pytorch_model.bin, PyTorch\'s pickle format)' : ''}, and bertlens reads weights only from safetensors. `
        + 'Look on the model\'s Hub page (Files, and Community: the Safetensors bot often opened a pull request; load it with @refs/pr/N), '
        + 'or convert it once in Python: AutoModel.from_pretrained(NAME).save_pretrained(DIR, safe_serialization=True), then open DIR with “Convert a model folder…”.');
    }
    small.set('model.safetensors.index.json', ix);
    let map;
    try {
      map = JSON.parse(new TextDecoder().decode(ix)).weight_map;
    } catch (e) {
      throw new HubError('http', `model.safetensors.index.json of ${id} is not valid JSON.`, serverWords(e.message));
    }
    const shards = [...new Set(Object.values(map && typeof map === 'object' ? map : {}))];
    if (!shards.length || shards.length > MAX_SHARDS || !shards.every((s) => typeof s === 'string' && /^[A-Za-z0-9._-]{1,200}\.safetensors$/.test(s))) {
      throw new HubError('http', `model.safetensors.index.json of ${id} names no usable shard files (at most ${MAX_SHARDS} plain *.safetensors names).`);
    }
    for (const s of shards) {
      const f = await probe(s);
      if (!f) throw hubHttpError(404, 'EntryNotFound', '', { id, revision, file: s });
      weights.push(f);
    }
  }
  const entries = [...small].map(([name, bytes]) => ({ name, size: bytes.length, read: async (a, b) => bytes.slice(a, b) }));
  // fills: read(a, b, into) fills a buffer of the caller's (convert.js reuses them)
  for (const f of weights) entries.push({ name: f.file, size: f.size, read: (a, b, into) => f.read(a, b, into), fills: true });
  return {
    commit,
    revision,
    entries,
    weightBytes: weights.reduce((s, f) => s + f.size, 0),
    close: () => weights.forEach((f) => f.close()),
  };
}
