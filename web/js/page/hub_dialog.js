// hub_dialog.js — the "Load from the Hugging Face Hub…" button beside the
// model picker and its dialog: one text field for OWNER/NAME[@REVISION],
// Load and Cancel. A native <dialog> opened modally: the focus moves into
// the field, Tab stays inside, Enter loads, Escape closes, and the focus
// returns to the button. An id that is not well formed is said inside the
// dialog (as text); anything else is reported by the load (models.js).

import { parseHubId } from '../engine/hub.js';

const el = (tag, attrs = {}, text = '') => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text) e.textContent = text;
  return e;
};

/** Add the control after #open-checkpoint (and its dtype choice); load(spec) starts a load. */
export function addHubDialog(load) {
  const anchor = document.getElementById('open-checkpoint');
  if (!anchor || document.getElementById('open-hub')) return null;
  const button = el('button', { type: 'button', id: 'open-hub', 'aria-haspopup': 'dialog',
    title: 'Load a BERT-family model by its Hugging Face Hub id (e.g. google-bert/bert-base-uncased); it is converted in this page and kept for offline use' },
  'Load from the Hugging Face Hub…');
  (anchor.closest('.convert-group') || anchor).after(button); // after the converter's dtype choice too
  const dialog = el('dialog', { id: 'hub-dialog', 'aria-labelledby': 'hub-dialog-title', class: 'hub-dialog' });
  const form = el('form', { method: 'dialog' });
  const title = el('h2', { id: 'hub-dialog-title' }, 'Load a model from the Hugging Face Hub');
  const label = el('label', { for: 'hub-id' }, 'Model id (OWNER/NAME, optionally @REVISION)');
  const input = el('input', { id: 'hub-id', type: 'text', spellcheck: 'false', autocomplete: 'off', autocapitalize: 'off',
    placeholder: 'google-bert/bert-base-uncased', maxlength: '300', size: '48', 'aria-describedby': 'hub-dialog-note hub-dialog-error' });
  const note = el('p', { id: 'hub-dialog-note', class: 'hub-note' },
    'The model\'s config, tokenizer and safetensors weights are downloaded from the Hub, converted to a bundle in this page and kept in this browser, so it also works offline afterwards. Gated and private models need a token, which bertlens does not take.');
  const error = el('p', { id: 'hub-dialog-error', class: 'hub-error', role: 'alert' });
  const ok = el('button', { type: 'submit', id: 'hub-load', value: 'load' }, 'Load');
  const cancel = el('button', { type: 'button', id: 'hub-cancel' }, 'Cancel');
  const row = el('div', { class: 'hub-buttons' });
  row.append(ok, cancel);
  const field = el('p', { class: 'hub-field' });
  field.append(label, el('br'), input);
  form.append(title, field, note, error, row);
  dialog.append(form);
  document.body.append(dialog);

  button.addEventListener('click', () => {
    error.textContent = '';
    if (typeof dialog.showModal === 'function') dialog.showModal();
    else dialog.setAttribute('open', '');
    input.focus();
    input.select();
  });
  cancel.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => button.focus());
  form.addEventListener('submit', (e) => {
    let spec;
    try {
      spec = parseHubId(input.value);
    } catch (err) {
      e.preventDefault(); // stay open, say why
      error.textContent = err.message;
      input.focus();
      return;
    }
    error.textContent = '';
    load(spec);
  });
  return { button, dialog };
}
