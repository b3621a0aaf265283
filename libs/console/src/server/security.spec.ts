import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { resolveConsoleOptions } from '../config.js';
import { ConsoleSecurity, CSRF_HEADER, SECURITY_HEADERS, SESSION_COOKIE, hostNameOf } from './security.js';

const TOKEN = 'console-token-0123456789abcdef';

const open = new ConsoleSecurity(resolveConsoleOptions({}, {}));
const guarded = new ConsoleSecurity(resolveConsoleOptions({ host: '0.0.0.0', token: TOKEN }, {}));
const proxied = new ConsoleSecurity(
  resolveConsoleOptions({ host: '0.0.0.0', trustedHeader: 'X-Forwarded-User' }, {}),
);

function admitted(security: ConsoleSecurity, headers: IncomingHttpHeaders): string {
  const a = security.admit(headers);
  return a.ok ? a.identity.via : `refused ${a.refusal.status}`;
}

describe('who the console lets in', () => {
  it('on loopback without a token: requests for a loopback Host only (no DNS rebinding)', () => {
    expect(admitted(open, { host: '127.0.0.1:8636' })).toBe('loopback');
    expect(admitted(open, { host: 'localhost:8636' })).toBe('loopback');
    expect(admitted(open, { host: '[::1]:8636' })).toBe('loopback');
    expect(admitted(open, { host: 'attacker.example:8636' })).toBe('refused 403');
    expect(admitted(open, {})).toBe('refused 403');
  });

  it('with a token: the bearer token or the session cookie, nothing else', () => {
    expect(admitted(guarded, { host: 'x', authorization: `Bearer ${TOKEN}` })).toBe('bearer');
    expect(admitted(guarded, { host: 'x', authorization: 'Bearer wrong-token-of-some-length' })).toBe(
      'refused 401',
    );
    expect(admitted(guarded, { host: '127.0.0.1' })).toBe('refused 401');
    const cookie = guarded.sessionCookie(false).split(';')[0]!;
    expect(admitted(guarded, { cookie: `other=1; ${cookie}` })).toBe('cookie');
    expect(admitted(guarded, { cookie: `${SESSION_COOKIE}=forged` })).toBe('refused 401');
    // The token itself is not a valid cookie: the cookie is derived, never the token.
    expect(admitted(guarded, { cookie: `${SESSION_COOKIE}=${TOKEN}` })).toBe('refused 401');
  });

  it('sets an HttpOnly SameSite=Strict cookie that does not contain the token', () => {
    const cookie = guarded.sessionCookie(true);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Secure/);
    expect(cookie).not.toContain(TOKEN);
    expect(guarded.checkToken(TOKEN)).toBe(true);
    expect(guarded.checkToken(TOKEN.slice(1))).toBe(false);
    expect(open.checkToken('')).toBe(false);
  });

  it('behind a proxy: requests carrying the trusted header, as its user', () => {
    const a = proxied.admit({ 'x-forwarded-user': 'ada' });
    expect(a.ok && a.identity).toEqual({ via: 'proxy', name: 'ada' });
    expect(admitted(proxied, { 'x-forwarded-user': '  ' })).toBe('refused 401');
    expect(admitted(proxied, { host: '127.0.0.1' })).toBe('refused 401');
  });
});

describe('what every POST must carry', () => {
  const identity = { via: 'loopback', name: 'local' } as const;
  const csrf = open.csrfToken(identity);
  const good = { host: '127.0.0.1:8636', [CSRF_HEADER]: csrf, 'content-type': 'application/json' };

  it('passes with the identity’s CSRF token, JSON and a same-origin Origin', () => {
    expect(open.checkPost(identity, good)).toBeUndefined();
    expect(open.checkPost(identity, { ...good, origin: 'http://127.0.0.1:8636' })).toBeUndefined();
  });

  it('refuses a missing or foreign CSRF token, a cross-site Origin and a non-JSON body', () => {
    expect(open.checkPost(identity, { ...good, [CSRF_HEADER]: undefined })?.message).toMatch(/CSRF token/);
    const other = open.csrfToken({ via: 'proxy', name: 'eve' });
    expect(open.checkPost(identity, { ...good, [CSRF_HEADER]: other })?.status).toBe(403);
    // Another process's secret gives other tokens: a token does not outlive its console.
    const restarted = new ConsoleSecurity(resolveConsoleOptions({}, {}));
    expect(restarted.checkPost(identity, good)?.status).toBe(403);
    expect(open.checkPost(identity, { ...good, origin: 'https://evil.example' })?.message).toMatch(
      /cross-site/,
    );
    expect(open.checkPost(identity, { ...good, origin: 'null' })?.status).toBe(403);
    expect(open.checkPost(identity, { ...good, 'content-type': 'text/plain' })?.message).toMatch(/JSON/);
  });
});

describe('secrets and headers', () => {
  it('redacts URL passwords, NATS tokens and the access token from messages', () => {
    const text = `cannot reach redis://default:s3cret@db:6379 nor nats://tok3n@bus:4222, token ${TOKEN}`;
    const redacted = guarded.redact(text);
    expect(redacted).toBe('cannot reach redis://default:***@db:6379 nor nats://***@bus:4222, token ***');
  });

  it('sends a strict CSP (no inline script, no CDN, no framing) and the usual headers', () => {
    const csp = SECURITY_HEADERS['Content-Security-Policy']!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(SECURITY_HEADERS['X-Content-Type-Options']).toBe('nosniff');
    expect(SECURITY_HEADERS['Referrer-Policy']).toBe('no-referrer');
  });

  it('reads host names out of Host headers', () => {
    expect(hostNameOf('LocalHost:80')).toBe('localhost');
    expect(hostNameOf('[::1]:8636')).toBe('[::1]');
    expect(hostNameOf('127.0.0.1')).toBe('127.0.0.1');
  });
});
