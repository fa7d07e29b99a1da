// engine_restart.js — when the model worker dies (engine.js EngineCrash: a
// wasm trap, no answer before its deadline, memory it cannot give back),
// page/models.js starts a fresh worker and loads a model into it again.
// Here: how to load a model again from the source that brought it, its
// name, and the one notice that says what happened (self-contained: the
// notices of the load or run that failed give way to the reload's).

/** models.js loadModel's source that loads the same model again: a
 *  converted checkpoint from the copy this browser keeps, a Hub model from
 *  its kept copy (or the Hub), a listed model or a file as before. */
export function againSourceOf(source) {
  if (source.kind === 'checkpoint' || source.kind === 'converted') { // that very model (bundles_store.js: one kept per key)
    const cv = source.cv || source;
    return Object.fromEntries(Object.entries({ kind: 'converted', key: cv.key, name: cv.name, dtype: cv.dtype }).filter(([, v]) => v !== undefined));
  }
  if (source.kind === 'hub') return { kind: 'hub', spec: source.spec };
  return { kind: source.kind, entry: source.entry, file: source.file };
}

/** A source's model, as notices name it. */
export function sourceName(source, convertedName = '') {
  switch (source.kind) {
    case 'listed': return source.entry.name || source.entry.id;
    case 'file': return source.file.name;
    case 'hub': return source.spec.spec;
    case 'checkpoint': return source.name || 'the checkpoint';
    default: return convertedName ? `${convertedName} (converted)` : 'the converted model';
  }
}

/** Sources whose bytes came from outside the site's list, and whose kept
 *  copy is dropped when the model stops the engine before it ever ran. */
export const untrusted = (source) => ['hub', 'checkpoint', 'converted'].includes(source.kind);

/** The notice after crash (an EngineCrash). phase: 'load' (a model was
 *  loading), 'first-run' (the model just loaded, before any run of it
 *  finished), 'run' (a model that ran before), 'other'; what: that model's
 *  name; back: {name, how: 'same' | 'previous' | 'instead'} of the model
 *  loaded into the fresh engine, {how: 'boot'} when the page goes on to
 *  its usual model, or null; dropped: what was not kept; blocked: the
 *  input is not run again until it changes. */
export function crashNotice(crash, { phase, what, back, dropped = false, blocked = false }) {
  const it = `it ${crash.reason}${crash.doing ? ` ${crash.doing}` : ''}`;
  const head = {
    load: `Loading ${what} stopped the model engine: ${it}.`,
    'first-run': `${what} stopped the model engine on its first run: ${it}.`,
    run: `The model engine stopped on this input: ${it}.`,
  }[phase] || `The model engine stopped: ${it}.`;
  let tail = ' The engine was restarted; choose a model to load.';
  if (back && back.how === 'boot') {
    tail = ' The engine was restarted.'; // what the page loads instead follows (models.js start)
  } else if (back && back.how === 'same') {
    tail = ` The engine was restarted with ${back.name} loaded again${blocked ? '; edit the text to run the model again' : ''}.`;
  } else if (back && back.how === 'previous') {
    tail = ` The engine was restarted with ${back.name}, the model loaded before.`;
  } else if (back) {
    tail = ` The engine was restarted with ${back.name} instead.`;
  }
  return `${head}${tail}${dropped ? ` Nothing of ${what} was kept in this browser.` : ''}`;
}
