// Side-by-side comparison of two deployment records: every key path of
// either, its value in each, and whether they differ.

// flatten maps nested objects and arrays to "a.b[2].c" -> leaf value.
export function flatten(v, prefix = '', out = new Map()) {
  if (Array.isArray(v)) {
    if (v.length === 0) out.set(prefix, '[]');
    v.forEach((x, i) => flatten(x, `${prefix}[${i}]`, out));
  } else if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v);
    if (keys.length === 0 && prefix) out.set(prefix, '{}');
    for (const k of keys) flatten(v[k], prefix ? `${prefix}.${k}` : k, out);
  } else {
    out.set(prefix, v === undefined ? '' : JSON.stringify(v));
  }
  return out;
}

// diffRows lines up two records key by key, in key order.
export function diffRows(a, b) {
  const fa = flatten(a), fb = flatten(b);
  const keys = [...new Set([...fa.keys(), ...fb.keys()])].sort();
  return keys.map((key) => {
    const x = fa.has(key) ? fa.get(key) : '—';
    const y = fb.has(key) ? fb.get(key) : '—';
    return { key, a: x, b: y, changed: x !== y };
  });
}
