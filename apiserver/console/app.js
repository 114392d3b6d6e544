// The console: a hash router over the views, a token form for facades
// that ask for one, and a refresh of what is on screen every few seconds
// while the tab is visible.
import { APIError, token } from './api.js';
import { h, listen } from './dom.js';
import * as views from './views.js';
import { services } from './services.js';

const refreshEvery = 5000;

// routes map a hash path to a view and its id, if any.
const routes = [
  [/^\/$/, views.overview],
  [/^\/nodes$/, views.nodes],
  [/^\/services$/, services],
  [/^\/node\/([^/]+)$/, views.node],
  [/^\/service\/([^/]+)$/, views.service],
  [/^\/container\/([^/]+)$/, views.container],
  [/^\/record\/([^/]+)$/, views.record],
  [/^\/diff$/, views.diff],
  [/^\/templates$/, views.templates],
  [/^\/delete$/, views.del],
];

function parse() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path, qs] = raw.split('?', 2);
  const q = Object.fromEntries(new URLSearchParams(qs || ''));
  for (const [re, view] of routes) {
    const m = re.exec(path);
    if (m) return { view, q, id: m[1] ? decodeURIComponent(m[1]) : undefined, path };
  }
  return { view: null, q, path };
}

const main = document.getElementById('view');
let current = null; // { route, live, controller, timer }

// problem shows a failed load: the token form on 401, which role may not
// do what on 403, and the envelope's message otherwise.
function problem(err) {
  if (!(err instanceof APIError)) return h('div', { class: 'alert', role: 'alert' }, `The console failed: ${err.message}`);
  if (err.status === 401) {
    return h('div', { class: 'alert', role: 'alert' },
      h('p', {}, token.get() ? 'The facade refused this token (401): it is not valid, or has expired.' : 'The facade asks for a token (401).'),
      tokenForm());
  }
  if (err.status === 403) {
    return h('div', { class: 'alert', role: 'alert' },
      h('p', {}, 'Your token was accepted, but its role may not do this (403):'), h('p', { class: 'detail' }, err.message),
      h('p', {}, 'Ask for a role that grants it, or use another token.'), tokenForm());
  }
  return h('div', { class: 'alert', role: 'alert' }, h('p', {}, `${err.message}`), err.status ? h('p', { class: 'muted' }, `status ${err.status}`) : null);
}

function tokenForm() {
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', 'aria-label': 'bearer token', placeholder: 'bearer token' });
  const form = h('form', { class: 'token' }, input, h('button', { type: 'submit' }, 'Use token'));
  return listen(form, 'submit', (e) => {
    e.preventDefault();
    token.set(input.value.trim());
    drawAuth();
    render();
  });
}

function drawAuth() {
  const el = document.getElementById('auth');
  if (!token.get()) {
    el.replaceChildren();
    return;
  }
  el.replaceChildren(h('span', { class: 'muted' }, 'token set '), listen(h('button', { type: 'button', class: 'link' }, 'forget'), 'click', () => {
    token.set('');
    drawAuth();
    render();
  }));
}

// load fetches the live part and swaps it in at once: no blank frame, and
// the page keeps its height, so the scroll position stays. A refresh in
// the background keeps what it fetched to itself when someone has put the
// focus in the live part meanwhile: a form they started to fill stays.
async function load(state, background = false) {
  state.controller?.abort();
  const controller = new AbortController();
  state.controller = controller;
  let next;
  try {
    next = await state.route.view.load(state.route.q, controller.signal, state.route.id);
  } catch (err) {
    if (err.name === 'AbortError') return;
    next = problem(err);
  }
  if (current !== state || controller.signal.aborted) return;
  if (background && state.live.contains(document.activeElement)) return;
  // A control with an id that had the focus keeps it across the redraw
  // (a tree's open button, a keyboard user's place).
  const focused = state.live.contains(document.activeElement) ? document.activeElement.id : '';
  state.live.replaceChildren(next);
  if (focused) document.getElementById(focused)?.focus({ preventScroll: true });
  state.live.setAttribute('aria-busy', 'false');
  document.getElementById('updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
}

function schedule(state) {
  clearTimeout(state.timer);
  if (document.hidden) return; // resumed by visibilitychange
  state.timer = setTimeout(async () => {
    // Someone typing in the live part (a checkbox, a form) is not
    // redrawn under them.
    if (!state.live.contains(document.activeElement)) await load(state, true);
    if (current === state) schedule(state);
  }, refreshEvery);
}

async function render() {
  if (current) {
    clearTimeout(current.timer);
    current.controller?.abort();
  }
  const route = parse();
  for (const a of document.querySelectorAll('header nav a')) {
    a.toggleAttribute('aria-current', a.getAttribute('href') === `#${route.path === '/' ? '/' : route.path}`);
  }
  if (!route.view) {
    current = null;
    main.replaceChildren(h('h1', {}, 'Not found'), h('p', {}, 'No view at this address. ', h('a', { href: '#/' }, 'Go to the overview.')));
    return;
  }
  document.title = `${route.view.title(route.q, route.id)} · edgeplane`;
  const live = h('div', { class: 'live', 'aria-live': 'polite', 'aria-busy': 'true' }, h('p', { class: 'muted' }, 'Loading…'));
  const state = { route, live };
  current = state;
  main.replaceChildren(route.view.head(route.q, route.id), live);
  await load(state);
  schedule(state);
}

// A view that changed something asks for its live part at once.
document.addEventListener('edgeplane:refresh', () => {
  if (current && !document.hidden) load(current).then(() => schedule(current));
});
document.addEventListener('visibilitychange', () => {
  if (!current) return;
  if (document.hidden) clearTimeout(current.timer);
  else load(current).then(() => schedule(current));
});
window.addEventListener('hashchange', () => {
  render();
  main.focus({ preventScroll: true });
  window.scrollTo(0, 0);
});
drawAuth();
render();
