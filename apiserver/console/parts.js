// Parts every view draws with: links, badges, tables, pagers, search
// and forms whose refusals show beside their fields.
import { h, listen } from './dom.js';

export const pageSize = 50;

// link builds a console URL (a hash route) from a path and parameters.
export function link(path, params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const qs = q.toString();
  return `#${path}${qs ? `?${qs}` : ''}`;
}

export const badge = (value, tones) => h('span', { class: ['badge', `tone-${tones[value] || 'unknown'}`] }, value === null || value === undefined ? 'unknown' : value);
// searchForm is a GET-like form that navigates to path with its field.
export function searchForm(path, field, value, label, params = {}, button = 'Search') {
  const input = h('input', { type: 'search', name: field, value: value || '', 'aria-label': label, placeholder: label, autocomplete: 'off' });
  const form = h('form', { class: 'search', role: 'search' }, input, h('button', { type: 'submit' }, button));
  return listen(form, 'submit', (e) => {
    e.preventDefault();
    location.hash = link(path, { ...params, [field]: input.value.trim(), page: 1 });
  });
}

// pager shows "page n of m" with links; total comes from the contract.
export function pager(path, params, page, total, size = pageSize) {
  const pages = Math.max(1, Math.ceil(total / size));
  return h('nav', { class: 'pager', 'aria-label': 'pages' },
    page > 1 ? h('a', { href: link(path, { ...params, page: page - 1 }), rel: 'prev' }, '‹ previous') : h('span', { class: 'muted' }, '‹ previous'),
    h('span', {}, `page ${page} of ${pages} · ${total} in all`),
    page < pages ? h('a', { href: link(path, { ...params, page: page + 1 }), rel: 'next' }, 'next ›') : h('span', { class: 'muted' }, 'next ›'));
}

export function table(headers, rows, empty = 'None.') {
  if (rows.length === 0) return h('p', { class: 'muted' }, empty);
  return h('div', { class: 'table-wrap' }, h('table', {},
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', { scope: 'col' }, x)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c) => h('td', {}, c)))))));
}

export const pageOf = (p) => Math.max(1, Number.parseInt(p, 10) || 1);

export const fact = (k, v) => [h('dt', {}, k), h('dd', {}, v)];

// field is a labelled input whose error, from the envelope's fieldErrors,
// is shown beside it. form keeps ids unique when two forms share a field.
export function field(form, name, label, hint, attrs = {}) {
  const id = `${form}-${name}`;
  const input = h(attrs.rows ? 'textarea' : 'input', { id, name, 'aria-describedby': `${id}-error`, ...attrs });
  return h('div', { class: 'field' }, h('label', { for: id }, label), input,
    hint ? h('div', { class: 'muted hint' }, hint) : null,
    h('div', { class: 'field-error', id: `${id}-error`, role: 'status', 'data-field': name }));
}

// refreshNow asks the console to reload what is on screen at once.
export const refreshNow = () => document.dispatchEvent(new Event('edgeplane:refresh'));

// showRefusal puts every fieldErrors entry next to its field
// (imageRefs[2] next to imageRefs) and returns the envelope's message.
export function showRefusal(form, err) {
  if (err.fieldErrors) {
    for (const [k, msg] of Object.entries(err.fieldErrors)) {
      const slot = form.querySelector(`.field-error[data-field="${k.replace(/\[\d+\]$/, '')}"]`);
      if (slot) slot.textContent = slot.textContent ? `${slot.textContent}; ${k}: ${msg}` : `${k}: ${msg}`;
    }
  }
  if (err.status === 403) {
    return h('div', { class: 'alert', role: 'alert' }, 'Your token was accepted, but its role may not do this (403); nothing was written. ',
      h('span', { class: 'detail' }, err.message), ' Ask for the editor role, or use another token.');
  }
  return h('div', { class: 'alert', role: 'alert' }, err.message, err.status ? ` (${err.status})` : '');
}
