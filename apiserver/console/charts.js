// Small pictures read at a glance, drawn as SVG and HTML from data: no
// charting library, nothing fetched.
import { h, s } from './dom.js';

// ring is a donut of part against whole, with the figures beside it, a
// link to the list behind it.
export function ring({ label, part, whole, href, tone = 'good' }) {
  const r = 36, c = 2 * Math.PI * r;
  const share = whole > 0 ? part / whole : 0;
  const text = percent(part, whole);
  return h('a', { class: 'card ring', href, 'aria-label': `${label}: ${part} of ${whole}` },
    s('svg', { viewBox: '0 0 100 100', width: 96, height: 96, 'aria-hidden': 'true' },
      s('circle', { cx: 50, cy: 50, r, class: 'ring-track' }),
      s('circle', {
        cx: 50, cy: 50, r, class: `ring-value tone-${tone}`,
        'stroke-dasharray': `${(share * c).toFixed(2)} ${c.toFixed(2)}`, transform: 'rotate(-90 50 50)',
      }),
      s('text', { x: 50, y: 56, 'text-anchor': 'middle', class: `ring-text${text.length > 3 ? ' ring-text-long' : ''}` }, text)),
    h('div', {},
      h('div', { class: 'card-label' }, label),
      h('div', { class: 'card-figure' }, `${part} / ${whole}`)));
}

// percent is part of whole rounded to a whole percent, except that a few
// never read as none nor all but a few as all: 3 of 1,004 is "<1%".
export function percent(part, whole) {
  if (whole <= 0) return '—';
  const p = Math.round((part / whole) * 100);
  if (p === 0 && part > 0) return '<1%';
  if (p === 100 && part < whole) return '>99%';
  return `${p}%`;
}

// bars is one stacked bar per row: [{label, parts: [{label, value, tone, href}]}].
export function bars(title, rows) {
  const max = Math.max(1, ...rows.map((r) => r.parts.reduce((a, p) => a + p.value, 0)));
  return h('section', { class: 'card bars', 'aria-label': title },
    h('h3', {}, title),
    rows.length === 0 ? h('p', { class: 'muted' }, 'None.') : null,
    rows.map((row) => {
      const sum = row.parts.reduce((a, p) => a + p.value, 0);
      return h('div', { class: 'bar-row' },
        h('span', { class: 'bar-label' }, row.label),
        h('span', { class: 'bar' }, row.parts.filter((p) => p.value > 0).map((p) => {
          const seg = h('a', { class: `bar-seg tone-${p.tone}`, href: p.href, title: `${row.label}: ${p.value} ${p.label}` });
          seg.style.width = `${(100 * p.value) / max}%`;
          return seg;
        })),
        h('span', { class: 'bar-figure' }, row.parts.map((p) => `${p.value} ${p.label}`).join(' · ') || String(sum)));
    }));
}

// grid is one square per node, coloured by its status, each a link to it;
// legend names the colours: [{tone, label}].
export function grid(title, items, legend = []) {
  return h('section', { class: 'card', 'aria-label': title },
    h('h3', {}, title),
    legend.length ? h('ul', { class: 'legend' }, legend.map((l) => h('li', {}, h('span', { class: `cell tone-${l.tone}`, 'aria-hidden': 'true' }), l.label))) : null,
    h('div', { class: 'grid' }, items.map((it) => h('a', {
      class: `cell tone-${it.tone}`, href: it.href, title: it.title, 'aria-label': it.title,
    }))));
}
