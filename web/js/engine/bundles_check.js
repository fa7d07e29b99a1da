// bundles_check.js — whether the bytes received for a listed model are that
// model (bundles.js loadListedBundle): not a web page, a bundle, the size
// and SHA-256 models/index.json lists; and unpacking them with a sentence
// that says what to do when it fails.

import { DeliveryError, formatBytes } from './bundles_errors.js';
import { isGzip, hasMagic, gunzipIfNeeded } from './bundles_gzip.js';

async function sha256Hex(u8) {
  if (!globalThis.crypto || !crypto.subtle) return null;
  const h = new Uint8Array(await crypto.subtle.digest('SHA-256', u8));
  return Array.from(h, (b) => b.toString(16).padStart(2, '0')).join('');
}

const looksLikeHtml = (u8) => /^\s*<(!doctype|html|head|body|meta|title|!--|\?xml)/i.test(new TextDecoder('latin1').decode(u8.subarray(0, 256)));

/** Why the bytes received for a listed model are not that model (a
 *  DeliveryError), or null when they are. gzip bytes must have the sha256
 *  and size the index lists; plain bundle bytes (a server that added
 *  Content-Encoding: gzip makes the browser inflate them) the index's
 *  inflated_sha256. Anything else — a captive portal's web page, an error
 *  page sent with status 200, a raw bundle planted in place of the listed
 *  file — is refused before it can reach the engine or the cache. An index
 *  without checksums (a hand-made one) is trusted, as is everything where
 *  the browser has no SHA-256 (pages not served over https or localhost). */
export async function listedProblem(raw, entry, what) {
  const What = `${what[0].toUpperCase()}${what.slice(1)}`;
  const notModel = (why, detail) => new DeliveryError(`The server sent something that is not ${what} (${why}), so it was not used. `
    + 'Reload the page to try again; if it keeps happening, something between you and the site (a sign-in page, a proxy or a filter) changes what it sends.', detail);
  if (looksLikeHtml(raw)) {
    return new DeliveryError(`The server sent a web page instead of ${what}, so it was not used. `
      + 'This happens on networks that ask you to sign in first (hotel or café Wi-Fi) or with a filter: open any other site to sign in, then reload this page.',
    `${raw.length} bytes starting ${JSON.stringify(new TextDecoder('latin1').decode(raw.subarray(0, 40)))}`);
  }
  const gz = isGzip(raw);
  if (!gz && !hasMagic(raw)) {
    return notModel('neither a compressed nor a plain bertlens bundle', `${raw.length} bytes, first ${Array.from(raw.subarray(0, 8), (b) => b.toString(16).padStart(2, '0')).join(' ')}`);
  }
  if (!entry.sha256) return null;
  if (gz && Number(entry.bytes) && raw.length < Number(entry.bytes)) {
    return new DeliveryError(`The download of ${what} stopped before it was complete (${formatBytes(raw.length)} of ${formatBytes(Number(entry.bytes))}). `
      + 'Reload the page to try again.', `${raw.length} of ${entry.bytes} bytes`);
  }
  const want = gz ? entry.sha256 : entry.inflated_sha256;
  if (!want) return notModel('a plain bundle where the site lists a compressed file, so it cannot be checked', `${raw.length} plain bytes; models/index.json lists no inflated_sha256`);
  const sum = await sha256Hex(raw);
  if (sum === null || sum === want) return null;
  if (gz) {
    return new DeliveryError(`${What} arrived damaged (its contents differ from what this site lists), so it was not used. `
      + 'Reload the page to download it again; if it keeps happening, something between you and the site (a proxy or filter) changes the file.',
    `SHA-256 ${sum}, models/index.json lists ${entry.sha256}`);
  }
  return notModel('a plain bundle whose contents differ from what this site lists', `SHA-256 ${sum}, models/index.json lists inflated_sha256 ${want}`);
}

/** gunzipIfNeeded for a listed model, with a sentence that says what to do. */
export async function unpackListed(raw, what) {
  const What = `${what[0].toUpperCase()}${what.slice(1)}`;
  try {
    return await gunzipIfNeeded(raw, { bundle: true });
  } catch (e) {
    if (!(e instanceof DeliveryError)) throw e;
    if (e.detail.startsWith('size')) throw new DeliveryError(`${What} was not used: ${e.message}.`, e.detail);
    if (!e.detail.startsWith('gzip')) throw e;
    throw new DeliveryError(`${What} arrived damaged (it could not be unpacked), so it was not used. `
      + 'Reload the page to download it again.', e.detail);
  }
}
