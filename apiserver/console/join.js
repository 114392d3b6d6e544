// Adding an edge node and issuing join tokens, as kubectl edge node add
// and token do: the facade answers the edge-agent join command to run on
// the device, shown read-only with a Copy button, and when its token
// expires. Each change is the facade's write; the editor role may make it.
import { call } from './api.js';
import { h, listen } from './dom.js';
import { field, refreshNow, showRefusal } from './parts.js';

// joins keeps the last join command per place (the add form, a node's
// page): the live part is redrawn every few seconds and must not lose it.
const joins = new Map();

// joinResult shows the command kept for key, if any.
export function joinResult(key) {
  const j = joins.get(key);
  if (!j) return null;
  const id = `${key}-command`;
  const command = h('input', { type: 'text', id, class: 'join-command', readonly: true, value: j.command, spellcheck: 'false', autocomplete: 'off', 'aria-label': `join command of ${j.name}` });
  const said = h('span', { class: 'muted copy-said', role: 'status' });
  const copy = listen(h('button', { type: 'button', class: 'copy' }, 'Copy'), 'click', async () => {
    // The clipboard API exists only in secure contexts (https, localhost)
    // and may be refused; the text is selected for Ctrl+C then.
    try {
      if (!navigator.clipboard?.writeText) throw new Error('no clipboard');
      await navigator.clipboard.writeText(j.command);
      said.textContent = 'Copied.';
    } catch {
      command.focus();
      command.select();
      said.textContent = 'Selected: copy it with Ctrl+C (⌘C).';
    }
  });
  return h('div', { class: 'notice join', 'data-join': key },
    h('p', {}, j.added ? `Added node ${j.name}. Run this on its device to join it to the edge hub:` : `A new join token for ${j.name}. Run this on its device:`),
    h('div', { class: 'copy-row' }, command, copy, said),
    h('p', { class: 'muted' }, 'The token joins the node once, until ', h('time', { datetime: j.expires }, new Date(j.expires).toLocaleString()),
      ` (${j.expires}). Anyone with the command can join a device as this node: pass it on as a password.`));
}

// labelsOf reads k=v,k2=v2 into an object, or says why it cannot.
function labelsOf(s) {
  const out = {};
  for (const kv of s.split(',').map((x) => x.trim()).filter(Boolean)) {
    const i = kv.indexOf('=');
    if (i < 0) return { error: `"${kv}": want KEY=VALUE pairs joined by commas` };
    const k = kv.slice(0, i).trim();
    if (k in out) return { error: `${k} is given twice` };
    out[k] = kv.slice(i + 1).trim();
  }
  return { labels: out };
}

// ttlField asks for the token's life in minutes; the facade's refusals
// name ttlSeconds, which its error slot shows.
function ttlField(form) {
  const f = field(form, 'ttl', 'Token good for (minutes)', 'how long the join token is good for: at most a week (10080 minutes)',
    { type: 'number', min: '1', max: '10080', value: '60' });
  f.querySelector('.field-error').dataset.field = 'ttlSeconds';
  return f;
}

const ttlSeconds = (fd) => {
  const m = String(fd.get('ttl') || '').trim();
  return m === '' ? undefined : Math.round(Number(m) * 60);
};

function clearErrors(form) {
  for (const el of form.querySelectorAll('.field-error')) el.textContent = '';
  form.querySelector('.result').replaceChildren();
}

// addNodeForm adds a node: POST /api/v1/node.
export function addNodeForm() {
  const result = h('div', { class: 'result', 'aria-live': 'polite' });
  const form = h('form', { class: 'card create add-node', novalidate: true, 'data-form': 'add-node' }, h('h2', {}, 'Add a node'),
    field('add-node', 'name', 'Name', 'the EdgeNode’s name: lowercase letters, digits and dashes', { type: 'text', autocomplete: 'off', required: true }),
    field('add-node', 'address', 'Address', 'where the node’s agent is reached, HOST:PORT (optional: empty takes the address its agent reports)', { type: 'text', autocomplete: 'off', placeholder: '10.0.0.7:8080' }),
    field('add-node', 'type', 'Type', 'the expected operating system, such as linux or sylixos (optional)', { type: 'text', autocomplete: 'off' }),
    field('add-node', 'arch', 'Architecture', 'the expected CPU architecture, such as amd64 or arm64 (optional)', { type: 'text', autocomplete: 'off' }),
    field('add-node', 'labels', 'Labels', 'KEY=VALUE pairs joined by commas, such as site=plant-a,line=3; dynamic services are placed by them', { type: 'text', autocomplete: 'off' }),
    ttlField('add-node'),
    h('button', { type: 'submit' }, 'Add the node'), result);
  return listen(form, 'submit', async (e) => {
    e.preventDefault();
    clearErrors(form);
    const fd = new FormData(form);
    const str = (k) => String(fd.get(k) || '').trim();
    const parsed = labelsOf(str('labels'));
    if (parsed.error) {
      form.querySelector('.field-error[data-field=labels]').textContent = `labels: ${parsed.error}`;
      return;
    }
    const body = { name: str('name'), address: str('address'), type: str('type'), arch: str('arch'), labels: parsed.labels };
    const ttl = ttlSeconds(fd);
    if (ttl !== undefined) body.ttlSeconds = ttl;
    form.querySelector('button[type=submit]').disabled = true;
    try {
      const j = await call('POST', 'node', { body });
      joins.set('add-node', { ...j, added: true });
      refreshNow();
    } catch (err) {
      form.querySelector('button[type=submit]').disabled = false;
      result.replaceChildren(showRefusal(form, err));
    }
  });
}

// tokenForm issues a new join token for node id: POST /api/v1/node/{id}/token.
export function tokenForm(id, name) {
  const result = h('div', { class: 'result', 'aria-live': 'polite' });
  const form = h('form', { class: 'card create new-token', novalidate: true, 'data-form': 'new-token' }, h('h2', {}, 'New join token'),
    h('p', { class: 'muted' }, `For a device of ${name || 'this node'} that lost its credentials, was replaced or was revoked. Tokens issued before stay good until used or expired.`),
    ttlField('new-token'),
    h('button', { type: 'submit' }, 'Issue a join token'), result);
  return listen(form, 'submit', async (e) => {
    e.preventDefault();
    clearErrors(form);
    const body = {};
    const ttl = ttlSeconds(new FormData(form));
    if (ttl !== undefined) body.ttlSeconds = ttl;
    try {
      joins.set(`token-${id}`, await call('POST', `node/${encodeURIComponent(id)}/token`, { body }));
      refreshNow();
    } catch (err) {
      result.replaceChildren(showRefusal(form, err));
    }
  });
}
