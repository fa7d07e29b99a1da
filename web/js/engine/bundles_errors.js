// bundles_errors.js — how getting a model bundle fails, in words (bundles.js
// and the files beside it): every failure reaches the user as a
// DeliveryError, whose .message is a sentence for anyone (what happened,
// what to do) and .detail the browser's own words (the page shows them in
// small print); a failed or refused request of the network as such a
// sentence; byte counts for people.

export class DeliveryError extends Error {
  constructor(message, detail = '') {
    super(message);
    this.name = 'DeliveryError';
    this.detail = detail;
  }
}

export const rawText = (e) => (e && (e.message || String(e))) || '';
export const isOffline = () => globalThis.navigator && navigator.onLine === false;
const fromFile = () => globalThis.location && location.protocol === 'file:';
const FROM_FILE = 'This page was opened as a file, and browsers do not let such a page download the model. '
  + 'Open bertlens.html from the same folder instead (it has the model built in), or run “make serve” and open http://127.0.0.1:8000/.';

/** The sentence for a failed request of `what` (e.g. "the model list"). */
export function networkFailure(what, e, { cachedHint = '' } = {}) {
  if (fromFile()) return new DeliveryError(FROM_FILE, rawText(e));
  if (isOffline()) {
    return new DeliveryError(`Could not download ${what}: this device is offline${cachedHint}. `
      + 'Connect to the internet and reload the page; after one complete visit bertlens also works offline.', rawText(e));
  }
  return new DeliveryError(`Could not download ${what}: the connection to the server failed. `
    + 'Check the internet connection and reload the page.', rawText(e));
}

export function httpFailure(what, status, url) {
  const detail = `HTTP ${status} for ${url}`;
  if (status === 404 || status === 410) {
    return new DeliveryError(`The server does not have ${what} (it answered “not found”). The site may be in the middle of an update: `
      + 'reload the page in a minute. If it keeps happening, the site needs to be rebuilt — please tell whoever runs it.', detail);
  }
  if (status >= 500) {
    return new DeliveryError(`The server had a problem sending ${what}. This is usually temporary: reload the page in a minute.`, detail);
  }
  return new DeliveryError(`The server refused to send ${what}. Reload the page; if it keeps happening, please tell whoever runs the site.`, detail);
}

export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / (1024 * 1024)).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(1)} GB`;
}
