// The views. Each has a head drawn once per visit (titles, search forms:
// what a person types into must not be redrawn under them) and a live
// part the console redraws every few seconds from the contract.
import { call, get } from './api.js';
import { h, listen, text, bytes, duration } from './dom.js';
import { ring, bars, grid } from './charts.js';
import { diffRows } from './diff.js';
import { link, badge, searchForm, pager, table, pageOf, fact, field, refreshNow, showRefusal, pageSize } from './parts.js';
import { summary, findService, rollbackForm, deployForm, chooseTemplate } from './services.js';
import { addNodeForm, joinResult, tokenForm } from './join.js';

// Node ids per container request: the overview asks about every node, and
// a query string of thousands of ids would be long for proxies.
const idsPerRequest = 200;

const statusTone = { online: 'good', offline: 'bad' };
// runtimeReady is an edgeplane addition to the node items: true, false,
// or null when the node's agent reports no engine probe.
const runtimeText = (v) => (v === true ? 'ready' : v === false ? 'not ready' : '—');
const runtimeBadge = (v) => (v === null || v === undefined ? text(null) : h('span', { class: ['badge', v ? 'tone-good' : 'tone-bad'] }, runtimeText(v)));
// nodeTone is a node's colour: offline, online with its engine down, online.
const nodeTone = (n) => (n.status !== 'online' ? statusTone[n.status] || 'unknown' : n.runtimeReady === false ? 'warn' : 'good');
const deployTone = { success: 'good', deploying: 'busy', failure: 'bad' };

// --- Overview -------------------------------------------------------------

// countBy tallies nodes by a field, online and offline apart.
function countBy(nodes, field) {
  const m = new Map();
  for (const n of nodes) {
    const k = n[field] || 'unknown';
    const c = m.get(k) || { online: 0, offline: 0 };
    c[n.status === 'online' ? 'online' : 'offline']++;
    m.set(k, c);
  }
  return [...m.entries()].sort((a, b) => a[0].localeCompare(b[0]));
}

// deployCounts counts the instances on nodes by deploy status. key
// matches a status exactly but also any name containing it, so the
// deploying and failed lists are fetched and filtered here; they are short
// on a healthy fleet, and the failed ones are shown.
async function deployCounts(ids, signal) {
  const chunks = [];
  for (let i = 0; i < ids.length; i += idsPerRequest) chunks.push(ids.slice(i, i + idsPerRequest));
  const ask = (params) => Promise.all(chunks.map((c) => get('container/node', { nodeIds: c, pageNum: 1, ...params }, signal)));
  const [all, deploying, failure] = await Promise.all([
    ask({ pageSize: 1 }), ask({ pageSize: -1, key: 'deploying' }), ask({ pageSize: -1, key: 'failure' })]);
  const total = all.reduce((a, p) => a + p.total, 0);
  const only = (pages, st) => pages.flatMap((p) => p.list).filter((c) => c.deployStatus === st);
  const d = only(deploying, 'deploying'), f = only(failure, 'failure');
  return { total, deploying: d.length, failure: f.length, success: total - d.length - f.length, failed: f };
}

export const overview = {
  title: () => 'Fleet overview',
  head: () => h('h1', {}, 'Fleet overview'),
  async load(_, signal) {
    const page = await get('node', { pageSize: -1 }, signal);
    const nodes = page.list;
    const online = nodes.filter((n) => n.status === 'online').length;
    const running = nodes.reduce((a, n) => a + (n.containerRunning || 0), 0);
    const total = nodes.reduce((a, n) => a + (n.containerTotal || 0), 0);
    const d = await deployCounts(nodes.map((n) => n.id), signal);
    // Online nodes whose agents probe their engine (an offline node's last
    // word is stale); none saying hides the picture.
    const probed = nodes.filter((n) => n.status === 'online' && typeof n.runtimeReady === 'boolean');
    const notReady = probed.filter((n) => !n.runtimeReady);
    const byRows = (field) => countBy(nodes, field).map(([k, c]) => ({
      label: k, parts: [
        { label: 'online', value: c.online, tone: 'good', href: link('/nodes') },
        { label: 'offline', value: c.offline, tone: 'bad', href: link('/nodes') }],
    }));
    return h('div', { class: 'overview' },
      h('div', { class: 'cards' },
        ring({ label: 'Nodes online', part: online, whole: nodes.length, href: link('/nodes') }),
        ring({ label: 'Containers running', part: running, whole: total, href: link('/nodes') }),
        ring({ label: 'Instances successful', part: d.success, whole: d.total, href: '#failed', tone: d.failure ? 'warn' : 'good' }),
        probed.length ? ring({ label: 'Runtimes ready', part: probed.length - notReady.length, whole: probed.length, href: '#runtime', tone: notReady.length ? 'warn' : 'good' }) : null),
      bars('Instances by deploy status', [{
        label: 'on nodes', parts: [
          { label: 'success', value: d.success, tone: 'good', href: '#failed' },
          { label: 'deploying', value: d.deploying, tone: 'busy', href: '#failed' },
          { label: 'failure', value: d.failure, tone: 'bad', href: '#failed' }],
      }]),
      h('div', { class: 'two' }, bars('Nodes by type', byRows('type')), bars('Nodes by architecture', byRows('arch'))),
      grid(`Nodes (${nodes.length})`, nodes.map((n) => ({
        tone: nodeTone(n), href: link(`/node/${n.id}`, { name: n.name }),
        title: `${n.name}: ${n.status}${n.runtimeReady === false ? ', runtime not ready' : ''}, ${n.containerRunning}/${n.containerTotal} running`,
      })), [{ tone: 'good', label: 'online' }, ...(probed.length ? [{ tone: 'warn', label: 'online, runtime not ready' }] : []), { tone: 'bad', label: 'offline' }]),
      probed.length ? h('section', { class: 'card', id: 'runtime' }, h('h3', {}, `Nodes whose runtime is not ready (${notReady.length})`),
        notReady.length === 0 ? h('p', { class: 'muted' }, 'Every engine answers its agent.')
          : h('ul', { class: 'names' }, notReady.slice(0, 100).map((n) => h('li', {},
            h('a', { href: link(`/node/${n.id}`, { name: n.name }) }, n.name), ` (${n.status})`)))) : null,
      h('section', { class: 'card', id: 'failed' }, h('h3', {}, `Failed instances (${d.failure})`),
        containerTable(d.failed.slice(0, 50), 'No instance has failed.')));
  },
};

// --- Nodes ----------------------------------------------------------------

export const nodes = {
  title: () => 'Nodes',
  head: (q) => h('div', {}, h('h1', {}, 'Nodes'), searchForm('/nodes', 'name', q.name, 'node name')),
  async load(q, signal) {
    const page = pageOf(q.page);
    const res = await get('node', { pageNum: page, pageSize, name: q.name }, signal);
    return h('div', {},
      table(['Name', 'Status', 'Runtime', 'Type', 'Arch', 'Address', 'Containers running', 'Managed running', 'Up', 'Created'],
        res.list.map((n) => [
          h('a', { href: link(`/node/${n.id}`, { name: n.name }) }, n.name), badge(n.status, statusTone), runtimeBadge(n.runtimeReady), n.type, n.arch, text(n.address),
          `${n.containerRunning} / ${n.containerTotal}`, `${n.containerManagedRunning} / ${n.containerManagedTotal}`,
          duration(n.upTime), n.createdTime]),
        q.name ? 'No node matches.' : 'No node yet.'),
      pager('/nodes', { name: q.name }, page, res.total),
      joinResult('add-node'), addNodeForm());
  },
};

// containerTable lists containers with what a person checks first.
function containerTable(list, empty) {
  return table(['Container', 'Service', 'Node', 'Revision', 'Status', 'Deploy', 'Restarts', 'Up', 'CPU', 'Memory'],
    list.map((c) => [
      h('a', { href: link(`/container/${c.taskId}`) }, c.name),
      h('a', { href: link(`/service/${c.serviceId}`, { name: c.serviceName }) }, c.serviceName),
      h('a', { href: link(`/node/${c.nodeId}`, { name: c.nodeName }) }, c.nodeName),
      text(c.revision),
      badge(c.status, { running: 'good', exited: 'bad', created: 'busy', paused: 'busy' }),
      h('span', {}, badge(c.deployStatus, deployTone), c.failedMessage ? h('span', { class: 'failed-inline' }, ` ${c.failedMessage}`) : null,
        c.imagePull ? h('span', { class: 'pull-inline' }, ` ${pullText(c.imagePull)}`) : null),
      String(c.restartCnt ?? '—'), duration(c.uptime),
      c.cpuUsage ? `${c.cpuUsage.total}%` : '—', `${bytes(c.memoryUsage)} / ${bytes(c.memoryLimit)}`]),
    empty);
}

// containersHead is the head of a page of one node's or one service's
// containers: its name, and a search of them by key.
const containersHead = (label, path) => (q, id) => h('div', {},
  h('h1', {}, `${label} `, h('span', { class: 'name' }, q.name || id)),
  searchForm(`${path}/${id}`, 'key', q.key, 'node, container or service name, or a status', { name: q.name }));

export const node = {
  title: (q) => `Node ${q.name || ''}`,
  head: containersHead('Node', '/node'),
  async load(q, signal, id) {
    const page = pageOf(q.page);
    const [found, res] = await Promise.all([
      q.name ? get('node', { name: q.name, pageSize: 1000 }, signal) : Promise.resolve({ list: [] }),
      get('container/node', { nodeIds: [id], pageNum: page, pageSize, key: q.key }, signal)]);
    const n = found.list.find((x) => x.id === id);
    return h('div', {},
      n ? h('dl', { class: 'facts' },
        fact('Status', badge(n.status, statusTone)), fact('Runtime', runtimeBadge(n.runtimeReady)), fact('Type', n.type), fact('Arch', n.arch), fact('Address', text(n.address)),
        fact('TLS', n.tls ? 'yes' : 'no'), fact('Containers running', `${n.containerRunning} / ${n.containerTotal}`),
        fact('Managed running', `${n.containerManagedRunning} / ${n.containerManagedTotal}`),
        fact('Services', `${n.appRunning ?? '—'} running of ${n.appTotal ?? '—'}`), fact('Up', duration(n.upTime)), fact('Created', n.createdTime))
        : h('p', { class: 'muted' }, 'This node is not in the node list.'),
      h('h2', {}, 'Containers'),
      containerTable(res.list, q.key ? 'No container matches.' : 'No container on this node.'),
      pager(`/node/${id}`, { name: q.name, key: q.key }, page, res.total),
      n ? joinResult(`token-${id}`) : null, n ? tokenForm(id, n.name) : null);
  },
};


// --- Services and containers ----------------------------------------------

export const service = {
  title: (q) => `Service ${q.name || ''}`,
  head: containersHead('Service', '/service'),
  async load(q, signal, id) {
    const page = pageOf(q.page);
    const [res, records, svc] = await Promise.all([
      get('container/service', { serviceIds: [id], pageNum: page, pageSize, key: q.key }, signal),
      get('service/record', { id, pageNum: 1, pageSize: 100 }, signal),
      findService(id, q.name, signal)]);
    const current = records.list[0];
    const pick = h('form', { class: 'diff-pick' },
      table(['', 'Revision', 'Image', 'Command', 'Deployed', ''], records.list.map((r, i) => [
        h('input', { type: 'checkbox', name: 'rec', value: r.id, 'aria-label': `compare ${r.createdTime}`, checked: i < 2 }),
        h('a', { href: link(`/record/${r.id}`) }, `#${records.list.length - i}`), text(r.image),
        Array.isArray(r.cmd) ? r.cmd.join(' ') : text(r.cmd), r.createdTime,
        // The way back goes through the diff it applies.
        i === 0 ? h('span', { class: 'muted' }, 'current')
          : h('a', { class: 'rollback', href: link('/diff', { a: r.id, b: current.id, service: id, name: q.name }) }, 'Roll back to this revision…')]),
      'No deployment record.'),
      records.list.length > 1 ? h('button', { type: 'submit' }, 'Compare the two checked') : null);
    listen(pick, 'submit', (e) => {
      e.preventDefault();
      const ids = [...pick.querySelectorAll('input[name=rec]:checked')].map((x) => x.value);
      if (ids.length === 2) location.hash = link('/diff', { a: ids[1], b: ids[0], service: id, name: q.name });
    });
    return h('div', {}, summary(svc),
      h('h2', {}, 'Containers'), containerTable(res.list, q.key ? 'No container matches.' : 'No container yet.'),
      pager(`/service/${id}`, { name: q.name, key: q.key }, page, res.total),
      h('h2', {}, 'Deployment records, newest first'), pick);
  },
};

// pullText says how far the pull an instance waits on has come.
export function pullText(p) {
  if (p.queued) return `waiting for a pull slot: ${p.image}`;
  const of = p.bytesTotal > 0 ? ` of ${bytes(p.bytesTotal)} (${Math.floor((100 * p.bytesDone) / p.bytesTotal)}%)` : '';
  return `pulling ${p.image}: ${bytes(p.bytesDone)}${of}`;
}

const containerFields = ['id', 'taskId', 'name', 'status', 'deployStatus', 'failedMessage', 'imagePull', 'uptime', 'startedTime', 'createdTime',
  'taskCreatedTime', 'restartCnt', 'deployNum', 'revision', 'cpuUsage', 'memoryLimit', 'memoryUsage', 'memoryMaxUsage', 'sizeUsage', 'sizeLimit',
  'serviceId', 'serviceName', 'nodeId', 'address', 'nodeName', 'nodeArch', 'imageId', 'imageName', 'imageVersion', 'imageOS', 'imageArch'];

function show(k, v) {
  if (v === null || v === undefined) return k === 'status' ? 'unknown' : '—';
  if (k.startsWith('memory') || k.startsWith('size')) return `${v} (${bytes(v)})`;
  if (k === 'uptime') return `${v} (${duration(v)})`;
  if (k === 'imagePull') return pullText(v);
  if (k === 'cpuUsage') return `${v.total}%${Array.isArray(v.cores) && v.cores.length ? ` (cores: ${v.cores.join(', ')})` : ''}`;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

export const container = {
  title: () => 'Container',
  head: (_, id) => h('h1', {}, 'Container ', h('span', { class: 'name' }, id)),
  async load(_, signal, id) {
    const c = await get(`container/${encodeURIComponent(id)}`, {}, signal);
    return h('div', {},
      c.failedMessage ? h('div', { class: 'alert', role: 'alert' }, h('strong', {}, 'Failed: '), c.failedMessage) : null,
      c.imagePull ? h('div', { class: 'pull', role: 'status' },
        h('progress', { max: String(c.imagePull.bytesTotal || 1), value: String(c.imagePull.bytesDone) }), ` ${pullText(c.imagePull)}`) : null,
      h('p', {}, 'Service ', h('a', { href: link(`/service/${c.serviceId}`, { name: c.serviceName }) }, c.serviceName),
        ' on node ', h('a', { href: link(`/node/${c.nodeId}`, { name: c.nodeName }) }, c.nodeName)),
      h('dl', { class: 'facts' }, containerFields.map((k) => fact(k, k === 'deployStatus' ? badge(c[k], deployTone) : show(k, c[k])))));
  },
};

// --- Deployment records ---------------------------------------------------

export const record = {
  title: () => 'Deployment record',
  head: (_, id) => h('h1', {}, 'Deployment record ', h('span', { class: 'name' }, id)),
  async load(_, signal, id) {
    const r = await get(`service/record/${encodeURIComponent(id)}`, {}, signal);
    return h('div', {},
      h('dl', { class: 'facts' },
        fact('Service', r.name), fact('Action', text(r.action)), fact('Policy', text(r.policy)), fact('Factor', text(r.factor)),
        fact('Image', text(r.image && r.image.ref)), fact('Command', Array.isArray(r.cmd) ? r.cmd.join(' ') : text(r.cmd)),
        fact('Deployed', r.createdTime),
        fact('Nodes', (r.nodeList || []).map((n) => n.nodeName).join(', ') || '—')),
      h('h2', {}, 'Configuration'), h('pre', { class: 'json' }, JSON.stringify(r.config, null, 2)));
  },
};

export const diff = {
  title: () => 'Compare revisions',
  head: (q) => h('div', {}, h('h1', {}, 'Compare revisions'),
    q.service ? h('p', {}, h('a', { href: link(`/service/${q.service}`, { name: q.name }) }, `‹ ${q.name || 'service'}`)) : null),
  async load(q, signal) {
    const [a, b, back] = await Promise.all([get(`service/record/${encodeURIComponent(q.a)}`, {}, signal),
      get(`service/record/${encodeURIComponent(q.b)}`, {}, signal), rollbackForm(q, signal)]);
    const rows = diffRows(a, b);
    const changed = rows.filter((r) => r.changed).length;
    return h('div', {},
      h('p', {}, `${changed} ${changed === 1 ? 'key differs' : 'keys differ'}.`),
      h('div', { class: 'table-wrap' }, h('table', { class: 'diff' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Key'), h('th', { scope: 'col' }, `Older: ${a.createdTime}`),
          h('th', { scope: 'col' }, `Newer: ${b.createdTime}`))),
        h('tbody', {}, rows.map((r) => h('tr', { class: r.changed ? 'changed' : null },
          h('th', { scope: 'row' }, r.key), h('td', {}, r.a), h('td', {}, r.b)))))), back);
  },
};

// --- Templates ------------------------------------------------------------

// creationForm posts one of the contract's creations and shows its
// answer: the refusal beside the fields, or what was created.
function creationForm(title, fields, submit, send, show) {
  const result = h('div', { class: 'result', 'aria-live': 'polite' });
  const form = h('form', { class: 'card create', novalidate: true }, h('h2', {}, title), fields, h('button', { type: 'submit' }, submit), result);
  listen(form, 'submit', async (e) => {
    e.preventDefault();
    for (const el of form.querySelectorAll('.field-error')) el.textContent = '';
    result.replaceChildren();
    try {
      result.replaceChildren(show(await send(new FormData(form))));
      refreshNow();
    } catch (err) {
      result.replaceChildren(showRefusal(form, err));
    }
  });
  return form;
}

// open holds the folders shown open in the tree, kept across refreshes
// and visits.
const open = new Set(['/']);
// Entries listed per folder: a folder with more says how many it leaves out.
const folderPage = 1000;

// useFolder puts a folder's path into both forms, where new entries go.
function useFolder(path) {
  for (const id of ['folder-path', 'batch-path']) {
    const input = document.getElementById(id);
    if (input) input.value = path;
  }
}

// branch draws one folder's entries, and those of the open folders in it.
function branch(path, listing) {
  const page = listing.get(path);
  if (!page) return null;
  const more = page.total - page.list.length;
  return h('ul', { class: 'tree', role: path === '/' ? 'tree' : 'group', 'aria-label': path === '/' ? 'template tree' : null },
    page.list.length === 0 ? h('li', { class: 'muted' }, 'Empty.') : null,
    page.list.map((e) => {
      if (e.type !== 'folder') {
        return h('li', { role: 'treeitem', class: 'leaf', 'data-path': e.path },
          h('span', { class: 'badge tone-unknown' }, 'template'), ' ', h('span', { class: 'name' }, e.name),
          h('span', { class: 'muted' }, ` ${e.imageRef} · ${e.createdTime} · `),
          listen(h('button', { type: 'button', class: 'link deploy', 'aria-label': `deploy ${e.path}` }, 'deploy'), 'click', () => chooseTemplate(e)));
      }
      const isOpen = open.has(e.path);
      const toggle = listen(h('button', { type: 'button', id: `open:${e.path}`, class: 'twisty', 'aria-expanded': String(isOpen), 'aria-label': `${isOpen ? 'close' : 'open'} ${e.path}` }, isOpen ? '▾' : '▸'), 'click', () => {
        if (open.has(e.path)) open.delete(e.path);
        else open.add(e.path);
        refreshNow();
      });
      return h('li', { role: 'treeitem', 'aria-expanded': String(isOpen), class: 'folder', 'data-path': e.path },
        toggle, ' ', listen(h('button', { type: 'button', class: 'link name', title: 'create in this folder' }, e.name), 'click', () => useFolder(e.path)),
        h('span', { class: 'muted' }, ` ${e.children ?? 0} ${e.children === 1 ? 'entry' : 'entries'} · `),
        h('a', { href: link('/delete', { path: e.path }) }, 'services under it'),
        isOpen ? branch(e.path, listing) : null);
    }),
    more > 0 ? h('li', { class: 'muted' }, `and ${more} more not shown`) : null);
}

export const templates = {
  title: () => 'Templates',
  head: () => h('div', {}, h('h1', {}, 'Templates'),
    h('p', { class: 'muted' }, 'The path-labelled tree of folders and templates. Choose a folder’s name to create in it.'),
    h('div', { class: 'two' },
      creationForm('New folder', [
        field('folder', 'path', 'Parent path', 'an absolute path such as /plant-a', { type: 'text', autocomplete: 'off', value: '/' }),
        field('folder', 'name', 'Folder name', null, { type: 'text', autocomplete: 'off' })],
      'Create folder',
      (fd) => call('POST', 'provision-template/path-label/folder', { body: { path: fd.get('path'), name: fd.get('name') } }),
      (r) => {
        // Open the way down to the new folder, so it shows in the tree.
        let at = '';
        for (const seg of r.path.split('/').slice(1, -1)) open.add((at += `/${seg}`));
        return h('p', {}, 'Created folder ', h('strong', { class: 'name' }, r.path), ` (id ${r.id}).`);
      }),
      creationForm('New templates from images', [
        field('batch', 'path', 'Folder', 'the folder the templates go in', { type: 'text', autocomplete: 'off', value: '/' }),
        field('batch', 'imageRefs', 'Images', 'one per line, as name@tag#os', { rows: 4, autocomplete: 'off' })],
      'Create templates',
      (fd) => {
        open.add(String(fd.get('path') || '/').replace(/(.)\/$/, '$1'));
        return call('POST', 'provision-template/path-label/service/batch', {
          body: { path: fd.get('path'), imageRefs: String(fd.get('imageRefs') || '').split('\n').map((x) => x.trim()).filter(Boolean) },
        });
      },
      (r) => h('p', {}, `Created ${(r.provisionTmplList || []).length} template(s): `,
        (r.provisionTmplList || []).map((t) => h('span', { class: 'name' }, `${t.name || t.id} `)))),
      deployForm())),
  async load(_, signal) {
    // The entries of every open folder that shows (its parents open too);
    // a folder gone since is closed.
    const shows = (p) => p === '/' || (open.has(p) && shows(p.slice(0, p.lastIndexOf('/')) || '/'));
    const listing = new Map();
    const paths = [...open].filter(shows);
    const pages = await Promise.all(paths.map((p) => get('provision-template/path-label', { path: p, pageSize: folderPage }, signal)
      .catch((err) => { if (err.status === 404 && p !== '/') { open.delete(p); return null; } throw err; })));
    paths.forEach((p, i) => pages[i] && listing.set(p, pages[i]));
    const root = listen(h('button', { type: 'button', class: 'link name', title: 'create in this folder' }, '/'), 'click', () => useFolder('/'));
    return h('section', { class: 'card' }, h('h2', {}, root, ` (${listing.get('/').total})`), branch('/', listing));
  },
};

// --- Delete by path ---------------------------------------------------------

// typed, done and changed keep, per path, the confirmation typed so far,
// the answer of a delete and a refusal because the services changed: the
// refresh redraws the view and must not lose them.
const typed = new Map();
const done = new Map();
const changed = new Map();

function deletionResults(path, result) {
  const names = new Map(result.listed.map((x) => [x.provisionId, x.name]));
  const failed = result.items.filter((x) => x.result !== 'successful').length;
  return h('div', {},
    h('div', { class: failed ? 'alert' : 'notice', role: 'status' },
      `Deleted ${result.items.length - failed} of ${result.items.length} service(s) under ${path}${failed ? `; ${failed} failed` : ''}. Transaction ${result.items[0]?.transactionId || '—'}.`),
    table(['Service', 'Id', 'Result', 'Error'], result.items.map((x) => [
      names.get(x.provisionId) || '—', x.provisionId, badge(x.result, { successful: 'good', failed: 'bad' }), text(x.error)]),
    'Nothing was under the path.'),
    listen(h('button', { type: 'button', class: 'after-table' }, 'List the services under the path again'), 'click', () => {
      done.delete(path);
      refreshNow();
    }));
}

export const del = {
  title: () => 'Delete services by path',
  head: (q) => h('div', {}, h('h1', {}, 'Delete services by path'),
    h('p', { class: 'muted' }, 'Force-deletes every service at or below a path, without waiting for agents to report its containers gone. You see the services first, and confirm by typing the path again.'),
    searchForm('/delete', 'path', q.path, 'a path such as /plant-a', {}, 'List services')),
  async load(q, signal) {
    if (!q.path) return h('p', { class: 'muted' }, 'Give a path to see the services under it.');
    const path = q.path;
    if (done.has(path)) return deletionResults(path, done.get(path));
    const res = await get('service/path', { path, pageSize: -1 }, signal);
    const listed = res.list;
    const input = h('input', { id: 'confirm-path', type: 'text', autocomplete: 'off', spellcheck: 'false', value: typed.get(path) || '', 'aria-describedby': 'confirm-hint' });
    const button = h('button', { type: 'submit', class: 'danger', disabled: (typed.get(path) || '') !== path }, `Delete ${listed.length} service(s)`);
    const answer = h('div', { 'aria-live': 'polite' });
    listen(input, 'input', () => {
      typed.set(path, input.value);
      button.disabled = input.value !== path;
    });
    const form = h('form', { class: 'card confirm' },
      h('label', { for: 'confirm-path' }, 'Type ', h('code', {}, path), ' to confirm'), input,
      h('div', { class: 'muted hint', id: 'confirm-hint' }, 'Only the services listed above are deleted: if others appeared or some went meanwhile, nothing is, and the list is shown again.'),
      h('div', { class: 'field-error', 'data-field': 'provisionIds', role: 'status' }),
      button, answer);
    listen(form, 'submit', async (e) => {
      e.preventDefault();
      if (input.value !== path) return;
      button.disabled = true;
      try {
        const items = await call('DELETE', 'service/path', { body: { path, provisionIds: listed.map((x) => x.provisionId) } });
        typed.delete(path);
        changed.delete(path);
        done.set(path, { items, listed });
        refreshNow();
      } catch (err) {
        if (err.status === 409) {
          // Others appeared or some went: nothing was deleted. List them
          // again and ask again.
          typed.delete(path);
          changed.set(path, err.message);
          refreshNow();
          return;
        }
        button.disabled = false;
        answer.replaceChildren(showRefusal(form, err));
      }
    });
    const note = changed.get(path);
    return h('div', {},
      note ? h('div', { class: 'alert', role: 'alert' }, note, ' Below is the list as it is now.') : null,
      h('h2', {}, `${listed.length} service(s) at or below `, h('code', {}, path)),
      table(['Service', 'Path', 'Id', ''], listed.map((x) => [
        h('a', { href: link(`/service/${x.provisionId}`, { name: x.name }) }, x.name), x.path, x.provisionId,
        x.terminating ? h('span', { class: 'badge tone-busy' }, 'already terminating') : '']),
      'No service lies under this path.'),
      listed.length ? form : null);
  },
};
