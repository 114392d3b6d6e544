// Building the page from data. Every string goes in as text (a text node
// or an attribute), never parsed as HTML: a node named
// <img src=x onerror=alert(1)> shows as those characters.

// h makes an element: h('a', {href: '#/'}, 'text', child, [more]).
// Attributes named on* are refused: handlers go through listen().
export function h(tag, attrs = {}, ...children) {
  return build(document.createElement(tag), attrs, children);
}

const svgNS = 'http://www.w3.org/2000/svg';

// s makes an SVG element, the same way.
export function s(tag, attrs = {}, ...children) {
  return build(document.createElementNS(svgNS, tag), attrs, children);
}

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) throw new Error(`attribute ${k}: use listen()`);
    if (k === 'class') el.setAttribute('class', Array.isArray(v) ? v.filter(Boolean).join(' ') : v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// listen adds an event handler and returns the element.
export function listen(el, type, fn) {
  el.addEventListener(type, fn);
  return el;
}

// text shows a value, or a dash for none.
export const text = (v) => (v === undefined || v === null || v === '' ? '—' : String(v));

// bytes shows a byte count in binary units.
export function bytes(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (Math.abs(n) >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
}

// duration shows seconds as the two largest units.
export function duration(sec) {
  if (typeof sec !== 'number' || !Number.isFinite(sec)) return '—';
  sec = Math.floor(sec);
  const d = Math.floor(sec / 86400), hr = Math.floor((sec % 86400) / 3600);
  const m = Math.floor((sec % 3600) / 60), x = sec % 60;
  if (d) return `${d}d ${hr}h`;
  if (hr) return `${hr}h ${m}m`;
  if (m) return `${m}m ${x}s`;
  return `${x}s`;
}
