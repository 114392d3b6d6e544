// The /api/v1 contract, as any client calls it. URLs are relative to the
// console's own, so the same assets work at /console/ and under
// kube-apiserver's /apis/facade.edge.edgeplane.io/v1/console/.
const base = new URL('../api/v1/', document.baseURI);
const tokenKey = 'edgeplane.token';

// APIError is a refusal in the contract's envelope.
export class APIError extends Error {
  constructor(status, message, fieldErrors) {
    super(message || `HTTP ${status}`);
    this.status = status;
    this.fieldErrors = fieldErrors || null;
  }
}

// The bearer token lives in sessionStorage only: never a URL, never
// localStorage, gone with the tab.
export const token = {
  get: () => sessionStorage.getItem(tokenKey) || '',
  set: (t) => (t ? sessionStorage.setItem(tokenKey, t) : sessionStorage.removeItem(tokenKey)),
};

// url builds an endpoint's URL; array values repeat their key with [].
export function url(path, params = {}) {
  const u = new URL(path, base);
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) v.forEach((x) => u.searchParams.append(`${k}[]`, x));
    else u.searchParams.set(k, String(v));
  }
  return u;
}

// call sends one request and returns the envelope's data, or throws an
// APIError carrying the envelope's status, message and fieldErrors.
export async function call(method, path, { params, body, signal } = {}) {
  const headers = { Accept: 'application/json' };
  const t = token.get();
  if (t) headers.Authorization = `Bearer ${t}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(url(path, params), {
      method, headers, signal, credentials: 'same-origin', cache: 'no-store',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new APIError(0, 'The facade cannot be reached.');
  }
  let env = null;
  try {
    env = await res.json();
  } catch {
    // Not the envelope: a proxy's page, or kube-apiserver's own refusal.
  }
  if (env && typeof env === 'object' && 'status' in env && 'data' in env) {
    if (env.status === 200) return env.data;
    throw new APIError(env.status, env.message, env.fieldErrors);
  }
  if (res.ok) throw new APIError(res.status, 'The answer was not the contract\'s envelope.');
  // kube-apiserver answers its own refusals with a Status object.
  throw new APIError(res.status, (env && env.message) || `HTTP ${res.status} ${res.statusText}`);
}

export const get = (path, params, signal) => call('GET', path, { params, signal });
