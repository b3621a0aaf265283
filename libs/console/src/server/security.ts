/**
 * Who may use the console and how a request is checked, as pure functions over the request's
 * method and headers, so every rule is unit-tested without a socket.
 *
 * The rules, in the order {@link ConsoleSecurity.admit} applies them:
 * 1. Loopback with no token and no trusted header (the default): any request whose Host header
 *    names this machine (`localhost`, `127.x.x.x`, `[::1]`) is let in. Any other Host is refused,
 *    which defeats DNS rebinding (a web page whose name resolves to 127.0.0.1 sends its own Host).
 * 2. With a trusted header: a request carrying it non-empty is let in as that user.
 * 3. With a token: `Authorization: Bearer <token>`, or the HttpOnly SameSite=Strict session
 *    cookie that the login form sets. The cookie holds an HMAC of the token under a secret of this
 *    process, never the token, and stops working when the console restarts.
 * 4. Every POST (every action) also carries `X-CSRF-Token` equal to the token `/api/session` gave
 *    this identity (an HMAC under the process secret, so a page on another site cannot read or
 *    forge it), a JSON content type (a cross-site form cannot send one without a preflight) and,
 *    when the browser sends an Origin, one naming this console's own host.
 * Secrets compare in constant time. Nothing here ever echoes the token.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { maskUrlSecret } from '@baton/client';
import { CONSOLE_ENV, isLoopbackHost, type ResolvedConsoleOptions } from '../config.js';

/** The name of the session cookie the login form sets. */
export const SESSION_COOKIE = 'baton_console_session';
/** The header every POST carries the CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';

/** Who a request was let in as. */
export interface Identity {
  /** How it proved itself. */
  via: 'loopback' | 'proxy' | 'bearer' | 'cookie';
  /** The proxy's user, or a fixed name for the other ways. */
  name: string;
}

/** A refusal: the HTTP status and a message that says what to do. */
export interface Refusal {
  status: 401 | 403;
  message: string;
  /** True when the request presented a token and it was wrong (counted by the sign-in limiter). */
  wrongToken?: boolean;
}

export type Admission = { ok: true; identity: Identity } | { ok: false; refusal: Refusal };

/** The headers every answer carries: no inline script, no framing, no sniffing, no referrer. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The value of one cookie in a Cookie header. */
export function readCookie(headers: IncomingHttpHeaders, name: string): string | undefined {
  for (const part of (header(headers, 'cookie') ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** The host name of a Host header (`name:port`, `[v6]:port`), lower-cased. */
export function hostNameOf(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.lastIndexOf(':');
  return colon < 0 ? h : h.slice(0, colon);
}

export class ConsoleSecurity {
  private readonly secret: Buffer;

  constructor(
    private readonly options: ResolvedConsoleOptions,
    secret: Buffer = randomBytes(32),
  ) {
    this.secret = secret;
  }

  private mac(text: string): string {
    return createHmac('sha256', this.secret).update(text).digest('base64url');
  }

  /** True when the console asks for a token (the login form is offered). */
  get needsLogin(): boolean {
    return this.options.token !== undefined;
  }

  /** Decides whether a request is let in, and as whom. */
  admit(headers: IncomingHttpHeaders): Admission {
    const { token, trustedHeader } = this.options;
    if (trustedHeader !== undefined) {
      const user = header(headers, trustedHeader)?.trim();
      if (user) return { ok: true, identity: { via: 'proxy', name: user } };
    }
    if (token !== undefined) {
      const authorization = header(headers, 'authorization') ?? '';
      const bearer = /^Bearer\s+(.+)$/i.exec(authorization)?.[1]?.trim();
      if (bearer !== undefined) {
        if (safeEqual(bearer, token)) return { ok: true, identity: { via: 'bearer', name: 'token' } };
        return {
          ok: false,
          refusal: {
            status: 401,
            message: 'the access token in the Authorization header is wrong',
            wrongToken: true,
          },
        };
      }
      const cookie = readCookie(headers, SESSION_COOKIE);
      if (cookie !== undefined && safeEqual(cookie, this.sessionValue()))
        return { ok: true, identity: { via: 'cookie', name: 'token' } };
      return refuse(
        401,
        'this console needs its access token: sign in at /login, or send Authorization: Bearer <token>',
      );
    }
    if (trustedHeader !== undefined) {
      return refuse(
        401,
        `this console only admits requests its proxy authenticated (header ${trustedHeader})`,
      );
    }
    // Open on loopback: only a Host naming this machine, so no rebinding page gets in.
    const host = header(headers, 'host');
    if (host === undefined || !isLoopbackHost(hostNameOf(host))) {
      return refuse(
        403,
        `the console listens on loopback and answers requests for localhost only, not for host ` +
          `'${host ?? ''}'; to serve other names set an access token (${CONSOLE_ENV.token})`,
      );
    }
    return { ok: true, identity: { via: 'loopback', name: 'local' } };
  }

  /**
   * True when the request presents a token this console checks (`Authorization: Bearer`, with a
   * token configured): the sign-in limiter applies to it. A session cookie is not a guessable
   * token (an HMAC under a 256-bit secret) and is not limited.
   */
  presentsToken(headers: IncomingHttpHeaders): boolean {
    if (this.options.token === undefined) return false;
    return /^Bearer\s+\S/i.test(header(headers, 'authorization') ?? '');
  }

  /** True when `candidate` is the console's access token (the login form). */
  checkToken(candidate: string): boolean {
    return this.options.token !== undefined && safeEqual(candidate, this.options.token);
  }

  /** The session cookie's value: derived from the token under this process's secret. */
  sessionValue(): string {
    return this.mac(`session\0${this.options.token ?? ''}`);
  }

  /** The Set-Cookie header of a signed-in browser. */
  sessionCookie(secure: boolean): string {
    return (
      `${SESSION_COOKIE}=${this.sessionValue()}; Path=/; HttpOnly; SameSite=Strict` +
      (secure ? '; Secure' : '')
    );
  }

  /** The CSRF token of an identity; `/api/session` hands it to the page, every POST returns it. */
  csrfToken(identity: Identity): string {
    return this.mac(`csrf\0${identity.via}\0${identity.name}`);
  }

  /** Checks a POST: the CSRF token, a JSON body, and a same-origin Origin when one is sent. */
  checkPost(identity: Identity, headers: IncomingHttpHeaders): Refusal | undefined {
    const origin = header(headers, 'origin');
    const host = header(headers, 'host');
    if (origin !== undefined && origin !== 'null') {
      let originHost: string;
      try {
        originHost = new URL(origin).host.toLowerCase();
      } catch {
        originHost = '';
      }
      if (host === undefined || originHost !== host.toLowerCase()) {
        return { status: 403, message: `cross-site request refused: Origin ${origin} is not this console` };
      }
    } else if (origin === 'null') {
      return { status: 403, message: 'cross-site request refused: Origin null' };
    }
    const sent = header(headers, CSRF_HEADER);
    if (sent === undefined || !safeEqual(sent, this.csrfToken(identity))) {
      return {
        status: 403,
        message: `missing or wrong CSRF token: send the ${CSRF_HEADER} header with the csrfToken of GET /api/session`,
      };
    }
    const type = header(headers, 'content-type') ?? '';
    if (!/^application\/json\b/i.test(type)) {
      return {
        status: 403,
        message: `an action's body must be JSON (Content-Type: application/json), got '${type}'`,
      };
    }
    return undefined;
  }

  /**
   * Text with every secret this console knows removed: URL passwords (and lone URL users, a NATS
   * token), the access token and the webhook secrets. Applied to every error message before it
   * leaves the server.
   */
  redact(text: string): string {
    let out = text.replace(/[a-z][a-z0-9+.-]*:\/\/[^\s'"<>]+/gi, (url) =>
      maskUrlSecret(url, { userIsSecret: true }),
    );
    const { token, webhookSecrets } = this.options;
    for (const secret of [...(token === undefined ? [] : [token]), ...webhookSecrets])
      out = out.split(secret).join('***');
    return out;
  }
}

function refuse(status: 401 | 403, message: string): Admission {
  return { ok: false, refusal: { status, message } };
}
