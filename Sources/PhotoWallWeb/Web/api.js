// The Parse REST API on this origin: JSON in, JSON out, Parse {code, error} errors as ApiError.

/** An error from the server ({code, error}) or from the network (code 100). */
export class ApiError extends Error {
  constructor(code, message, status = 0) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

/** Reads a failed response's message: Parse's {code, error}, the engine's {error}, or the status;
 *  and its Retry-After (delay-seconds, RFC 9110 §10.2.3) as `retryAfterMs`, when sent. */
export async function errorFrom(res) {
  let body = null;
  try { body = await res.json(); } catch { /* not JSON */ }
  const message = body?.error ?? body?.message ?? `The server answered ${res.status}.`;
  const error = new ApiError(body?.code ?? res.status, message, res.status);
  const after = Number.parseInt(res.headers.get('Retry-After') ?? '', 10);
  if (after >= 0) error.retryAfterMs = after * 1000;
  return error;
}

export class Api {
  /** @param config the page config (appId, serverPath); @param getToken returns the session token or null. */
  constructor(config, getToken) {
    this.config = config;
    this.getToken = getToken;
  }

  headers(json = true) {
    const h = { 'X-Parse-Application-Id': this.config.appId };
    const token = this.getToken();
    if (token) h['X-Parse-Session-Token'] = token;
    if (json) h['Content-Type'] = 'application/json';
    return h;
  }

  /** One call, e.g. api.call('POST', '/functions/feed', {limit: 12}). Throws ApiError. */
  async call(method, path, body) {
    let res;
    try {
      res = await fetch(this.config.serverPath + path, {
        method,
        headers: this.headers(body !== undefined),
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      throw new ApiError(100, 'The server cannot be reached. Check your connection and try again.');
    }
    if (!res.ok) throw await errorFrom(res);
    return res.json();
  }

  /** GET /classes/<name>?where=…&order=… */
  query(className, params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) q.set(k, typeof v === 'string' ? v : JSON.stringify(v));
    return this.call('GET', `/classes/${className}?${q}`);
  }
}
