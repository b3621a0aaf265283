/**
 * Server URLs: `nats://[user:pass@|token@]host[:port]` or `tls://…`, several separated by commas
 * or given as an array. nats.js ignores credentials inside a URL, so they are taken out here and
 * handed to it as options; the URLs it receives carry host and port only.
 */
import { type ConfigError } from '@baton/core';
import { maskUrlSecret, invalidOption } from '@baton/core/adapter';

/** The form every server URL must have; quoted in messages. */
export const EXPECTED_SERVER_FORM =
  'expected nats://[user:password@]host[:port] (or nats://token@host, or tls://… for TLS), ' +
  'several separated by commas';

/** Credentials found in a URL. */
export type UrlCredentials =
  { kind: 'none' } | { kind: 'userPass'; user: string; pass: string } | { kind: 'token'; token: string };

/** The servers option taken apart. */
export interface ParsedServers {
  /** `nats://host:port` for each server, without credentials: what nats.js dials. */
  urls: string[];
  /** The servers as given, credentials masked: the only form that appears in messages. */
  display: string;
  /** True when any URL has the tls:// scheme. */
  tls: boolean;
  credentials: UrlCredentials;
}

const DEFAULT_PORT = 4222;
const COMPONENT = 'natsTransport';

/** Splits and parses the servers option; throws ConfigError naming the URL (masked) and the form. */
export function parseServers(servers: string | string[]): ParsedServers {
  const list = (Array.isArray(servers) ? servers : [servers])
    .flatMap((entry) => entry.split(','))
    .map((entry) => entry.trim());
  const shown = list.map(maskServerUrl).join(',');
  if (list.length === 0 || list.some((entry) => entry === '')) {
    throw invalidOption(
      {
        component: COMPONENT,
        option: 'servers',
        value: shown,
        expected: `it contains an empty entry; ${EXPECTED_SERVER_FORM}`,
      },
      `servers '${shown}' contains an empty entry; ${EXPECTED_SERVER_FORM}`,
    );
  }
  const parsed = list.map(parseServerUrl);
  let credentials: UrlCredentials = { kind: 'none' };
  for (const server of parsed) {
    if (server.credentials.kind === 'none') continue;
    if (credentials.kind !== 'none' && !sameCredentials(credentials, server.credentials)) {
      // nats.js has one set of credentials per connection, so the URLs must agree.
      const expected =
        'put the same user:password (or token) in every URL, or pass them as the user/pass/token options';
      throw invalidOption(
        {
          component: COMPONENT,
          option: 'servers',
          value: shown,
          expected: `they carry different credentials; ${expected}`,
        },
        `servers '${shown}' carry different credentials; ${expected}`,
      );
    }
    credentials = server.credentials;
  }
  return {
    urls: parsed.map((server) => server.url),
    display: shown,
    tls: parsed.some((server) => server.tls),
    credentials,
  };
}

interface ParsedServer {
  url: string;
  tls: boolean;
  credentials: UrlCredentials;
}

function parseServerUrl(raw: string): ParsedServer {
  const shown = maskServerUrl(raw);
  const invalid = (reason: string, cause?: unknown): ConfigError =>
    invalidOption(
      {
        component: COMPONENT,
        option: 'servers',
        value: shown,
        expected: `it is not valid: ${reason}; ${EXPECTED_SERVER_FORM}`,
      },
      `server URL '${shown}' is not valid: ${reason}; ${EXPECTED_SERVER_FORM}`,
      cause === undefined ? undefined : { cause },
    );
  // nats.js accepts a bare host:port; so do we, as nats://.
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `nats://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch (err) {
    throw invalid('it cannot be parsed', err);
  }
  const scheme = url.protocol.replace(/:$/, '').toLowerCase();
  if (scheme !== 'nats' && scheme !== 'tls') throw invalid(`the scheme is '${scheme}'`);
  // Non-special schemes keep the host as given; an empty one means "nats://:4222" or "nats://".
  if (url.hostname === '') throw invalid('it names no host');
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') {
    throw invalid('paths, query strings and fragments are not supported');
  }
  const port = url.port === '' ? DEFAULT_PORT : Number(url.port);
  if (!Number.isInteger(port) || port < 1 || port > 65_535)
    throw invalid(`the port '${url.port}' is not valid`);
  return {
    url: `nats://${url.hostname}:${port}`,
    tls: scheme === 'tls',
    credentials: credentialsOf(url),
  };
}

function credentialsOf(url: URL): UrlCredentials {
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  if (user === '' && pass === '') return { kind: 'none' };
  // The NATS convention: a user without a password is a token.
  if (pass === '') return { kind: 'token', token: user };
  return { kind: 'userPass', user, pass };
}

function sameCredentials(a: UrlCredentials, b: UrlCredentials): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The URL with its secret replaced by `***`: the password of user:password, or a whole token.
 * Works on malformed URLs too: whatever sits between `://` and the last `@` is user information.
 */
export function maskServerUrl(url: string): string {
  return maskUrlSecret(url, { userIsSecret: true });
}
