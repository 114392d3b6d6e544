// Services: the list with each one's health, a service's summary, and
// what the editor role may do to one (scale, an image version, a return
// to an earlier revision). Each change is the facade's write, as kubectl
// edge makes it; the manager records it as a new revision.
import { call, get } from './api.js';
import { h, listen } from './dom.js';
import { link, badge, searchForm, pager, table, pageOf, fact, field, refreshNow, showRefusal, pageSize } from './parts.js';

export const healthTone = { ready: 'good', progressing: 'busy', paused: 'unknown', stalled: 'bad', deleting: 'busy' };

const revisionText = (s) => (s.deployedRevision && s.deployedRevision !== s.revision
  ? `${s.revision} (all ran ${s.deployedRevision})` : String(s.revision || '—'));
const rolloutText = (s) => `${s.strategy === 'RollingUpdate' ? 'in waves' : 'all at once'}${s.paused ? ', paused' : ''}`;

export const services = {
  title: () => 'Services',
  head: (q) => h('div', {}, h('h1', {}, 'Services'), searchForm('/services', 'name', q.name, 'service name')),
  async load(q, signal) {
    const page = pageOf(q.page);
    const res = await get('service', { pageNum: page, pageSize, name: q.name }, signal);
    return h('div', {},
      table(['Name', 'Health', 'Ready', 'Up to date', 'Revision', 'Image', 'Policy', 'Rollout', 'Path', 'Created'],
        res.list.map((s) => [
          h('a', { href: link(`/service/${s.id}`, { name: s.name }) }, s.name),
          h('span', {}, badge(s.health, healthTone), s.health === 'stalled' ? h('span', { class: 'failed-inline' }, ` ${s.reason}`) : null),
          `${s.ready} / ${s.total}`, `${s.updated} / ${s.total}`, revisionText(s), s.image, s.policy, rolloutText(s), s.path, s.createdTime]),
        q.name ? 'No service matches.' : 'No service yet.'),
      pager('/services', { name: q.name }, page, res.total));
  },
};

// findService reads a service's item from the list, by its name and id.
export async function findService(id, name, signal) {
  if (!name) return null;
  const res = await get('service', { name, pageSize: 1000 }, signal);
  return res.list.find((s) => s.id === id) || null;
}

// results keeps, per service, the answer of its last change: the page is
// redrawn every few seconds and must not lose it.
const results = new Map();

// summary is a service's health and rollout, and the forms that change it.
export function summary(s) {
  if (!s) return h('p', { class: 'muted' }, 'This service is not in the service list.');
  const last = results.get(s.id);
  return h('div', {},
    h('dl', { class: 'facts' },
      fact('Health', h('span', {}, badge(s.health, healthTone), s.message ? h('span', { class: s.health === 'stalled' ? 'failed-inline' : 'muted' }, ` ${s.message}`) : null)),
      fact('Revision', revisionText(s)), fact('Ready', `${s.ready} of ${s.total} run revision ${s.revision}`),
      fact('Up to date', `${s.updated} of ${s.total}`), fact('Image', s.image), fact('Policy', s.policy),
      fact('Rollout', rolloutText(s)), fact('Path', s.path)),
    last ? h('div', { class: last.ok ? 'notice' : 'alert', role: 'status' }, last.text) : null,
    h('div', { class: 'two' },
      s.policy === 'dynamic' ? changeForm(s, 'scale', 'Scale', [
        field('scale', 'factor', 'Instances', 'how many instances the service runs', { type: 'number', min: '1', value: String(s.factor) })],
      'Scale', (fd) => ({ factor: Number.parseInt(fd.get('factor'), 10) }), (r) => `Scaled ${r.name} to ${r.factor} instances.`) : null,
      changeForm(s, 'version', 'Image version', [
        field('version', 'imageVersion', 'Version', `the tag of ${s.imageName}@…#${s.imageOS}`, { type: 'text', autocomplete: 'off', value: s.imageVersion })],
      'Change version', (fd) => ({ imageVersion: String(fd.get('imageVersion') || '').trim() }), (r) => `${r.name} now asks for ${r.image}; the manager records it as a new revision.`)));
}

// changeForm sends one PATCH of the service and keeps its answer; a
// refusal's fieldErrors go beside their fields.
function changeForm(s, name, title, fields, submit, body, said) {
  const form = h('form', { class: 'card create', novalidate: true, 'data-form': name }, h('h2', {}, title), fields, h('button', { type: 'submit' }, submit),
    h('div', { class: 'result', 'aria-live': 'polite' }));
  return listen(form, 'submit', async (e) => {
    e.preventDefault();
    for (const el of form.querySelectorAll('.field-error')) el.textContent = '';
    const result = form.querySelector('.result');
    result.replaceChildren();
    try {
      const r = await call('PATCH', `service/${encodeURIComponent(s.id)}`, { body: body(new FormData(form)) });
      results.set(s.id, { ok: true, text: said(r) });
      refreshNow();
    } catch (err) {
      result.replaceChildren(showRefusal(form, err));
    }
  });
}

// rollbackForm asks to write the older record's configuration (a) back
// into the service, when the newer (b) is its current one: the diff above
// it is then exactly what changes. Otherwise it points to that diff.
export async function rollbackForm(q, signal) {
  if (!q.service) return null;
  const newest = (await get('service/record', { id: q.service, pageNum: 1, pageSize: 1 }, signal)).list[0];
  if (!newest || newest.id === q.a) return null;
  if (newest.id !== q.b) {
    return h('p', { class: 'muted' }, 'To return to the older revision, ',
      h('a', { href: link('/diff', { a: q.a, b: newest.id, service: q.service, name: q.name }) }, 'compare it with the current one'), ' first.');
  }
  const answer = h('div', { 'aria-live': 'polite' });
  const form = h('form', { class: 'card confirm rollback' },
    h('h2', {}, 'Roll back'),
    h('p', {}, `Write the older revision’s configuration back into ${q.name || 'the service'}: every key marked above goes from the newer column to the older. `,
      'The manager records it as a new revision and rolls it out by the service’s strategy.'),
    h('button', { type: 'submit', class: 'danger' }, 'Roll back to this revision'), answer);
  return listen(form, 'submit', async (e) => {
    e.preventDefault();
    form.querySelector('button').disabled = true;
    try {
      const r = await call('POST', `service/${encodeURIComponent(q.service)}/rollback`, { body: { recordId: q.a } });
      results.set(q.service, r.changed
        ? { ok: true, text: `Rolled back to the configuration of revision ${r.toRevision}; it appears below as a new revision, and its rollout follows.` }
        : { ok: true, text: `Nothing to do: the service already has the configuration of revision ${r.toRevision}.` });
      location.hash = link(`/service/${q.service}`, { name: q.name });
    } catch (err) {
      form.querySelector('button').disabled = false;
      answer.replaceChildren(showRefusal(form, err));
    }
  });
}

// deployForm makes a service of a template chosen in the tree.
export function deployForm() {
  const result = h('div', { class: 'result', 'aria-live': 'polite' });
  const form = h('form', { class: 'card create deploy', novalidate: true }, h('h2', {}, 'Deploy a template'),
    h('input', { type: 'hidden', name: 'templateId', id: 'deploy-templateId' }),
    field('deploy', 'template', 'Template', 'choose “deploy” beside a template in the tree', { type: 'text', readonly: true, placeholder: 'none chosen' }),
    h('div', { class: 'field-error', 'data-field': 'templateId', role: 'status' }),
    field('deploy', 'name', 'Service name', 'the template’s name if empty', { type: 'text', autocomplete: 'off' }),
    field('deploy', 'nodes', 'Nodes', 'a static service on these nodes, comma separated', { type: 'text', autocomplete: 'off' }),
    field('deploy', 'factor', 'Or instances', 'a dynamic service of this many instances', { type: 'number', min: '1' }),
    h('button', { type: 'submit' }, 'Deploy'), result);
  return listen(form, 'submit', async (e) => {
    e.preventDefault();
    for (const el of form.querySelectorAll('.field-error')) el.textContent = '';
    result.replaceChildren();
    const fd = new FormData(form);
    const nodes = String(fd.get('nodes') || '').split(',').map((x) => x.trim()).filter(Boolean);
    const factor = String(fd.get('factor') || '').trim();
    const body = { templateId: fd.get('templateId') || '' };
    if (String(fd.get('name') || '').trim()) body.name = String(fd.get('name')).trim();
    if (nodes.length) body.nodes = nodes;
    if (factor) body.factor = Number.parseInt(factor, 10);
    try {
      const s = await call('POST', 'service', { body });
      result.replaceChildren(h('p', {}, 'Created service ', h('a', { href: link(`/service/${s.id}`, { name: s.name }) }, s.name), ` (${s.policy}, ${s.image}).`));
    } catch (err) {
      result.replaceChildren(showRefusal(form, err));
    }
  });
}

// chooseTemplate puts a template of the tree into the deploy form.
export function chooseTemplate(t) {
  const id = document.getElementById('deploy-templateId');
  const shown = document.getElementById('deploy-template');
  if (!id || !shown) return;
  id.value = t.id;
  shown.value = t.path;
  document.getElementById('deploy-name')?.focus();
}
