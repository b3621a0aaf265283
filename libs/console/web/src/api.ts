/**
 * The page's side of the console's JSON API: GETs, and POSTs that carry the CSRF token the
 * server handed this session. Every failure becomes an ApiError with the server's message, which
 * the pages show as is (it says what was wrong and what to do).
 */

/** What GET /api/session says about this console and this browser. */
export interface SessionInfo {
  csrfToken: string;
  readOnly: boolean;
  signedInVia: string;
  fleet: { transport: string; store: string };
  /** True when `baton dev` serves the page (its banner polls /api/dev). */
  dev?: boolean;
}

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    message: string,
    /** The whole error answer (`issues` of an input its schema refused). */
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

let session: Promise<SessionInfo> | undefined;

async function answer<T>(res: Response): Promise<T> {
  if (res.status === 401) {
    // Signed out (the console restarted, so the cookie is stale): sign in again.
    window.location.assign('/login');
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError(res.status, `the console answered ${res.status} with no JSON`);
  }
  if (!res.ok) {
    const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const message = typeof fields['error'] === 'string' ? fields['error'] : `HTTP ${res.status}`;
    throw new ApiError(res.status, message, fields);
  }
  return body as T;
}

/** The session, fetched once per page load. */
export function getSession(): Promise<SessionInfo> {
  session ??= fetch('/api/session', { credentials: 'same-origin' }).then((r) => answer<SessionInfo>(r));
  return session;
}

export async function get<T>(path: string): Promise<T> {
  return answer<T>(await fetch(path, { credentials: 'same-origin' }));
}

/** An action: POST with the CSRF token and a JSON body; resolves the server's answer. */
export async function post<T = { done: string }>(path: string, body: unknown = {}): Promise<T> {
  const { csrfToken } = await getSession();
  return answer<T>(
    await fetch(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrfToken },
      body: JSON.stringify(body),
    }),
  );
}

/** `/api/runs/<id>` with the id escaped. */
export function runPath(runId: string, rest = ''): string {
  return `/api/runs/${encodeURIComponent(runId)}${rest}`;
}
