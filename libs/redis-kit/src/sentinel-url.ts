/**
 * `redis+sentinel://` URLs: the Redis store and the Redis transport find their primary by asking
 * Redis Sentinel, so a failover (Sentinel promoting the replica) moves them to the new primary
 * without a new URL. Shared here (it does no I/O) so both read the same URLs the same way.
 *
 *   redis+sentinel://[user:password@]host:port[,host:port…]/<master name>[/<db>]
 *   rediss+sentinel://…   (TLS to the sentinels and to the data nodes)
 *
 * User and password are the data nodes' (percent-decoded); the sentinels' own password, when
 * they have one, is the adapter's `sentinelPassword` option. WHATWG URL parsing cannot read a host
 * list, so this parser is a small one of its own.
 */
import { maskUrlSecret, invalidOption } from '@baton/core/adapter';

/** The schemes that name a primary through Sentinel. */
export const SENTINEL_SCHEMES = ['redis+sentinel', 'rediss+sentinel'] as const;

const SENTINEL_FORM =
  'expected redis+sentinel://[user:password@]host:port[,host:port…]/<master name>[/<db>] ' +
  '(rediss+sentinel://… for TLS)';

/** Where Sentinel mode looks for the primary. */
export interface SentinelTarget {
  sentinels: Array<{ host: string; port: number }>;
  masterName: string;
}

export interface ParsedSentinelUrl extends SentinelTarget {
  db: number;
  username: string | undefined;
  password: string | undefined;
  tls: boolean;
}

/** True when the URL's scheme is one of {@link SENTINEL_SCHEMES}. */
export function isSentinelUrl(url: string): boolean {
  return /^rediss?\+sentinel:/i.test(url);
}

/**
 * Parses a Sentinel URL; ConfigError naming the URL (password masked), the fault and the form,
 * after `owner` (the adapter's builder, `redisStore`, `redisTransport`).
 */
export function parseSentinelUrl(url: string, owner: string): ParsedSentinelUrl {
  const shown = maskUrlSecret(url);
  const invalid = (reason: string, cause?: unknown) =>
    invalidOption(
      {
        component: owner,
        option: 'url',
        value: shown,
        expected: `it is not a valid Redis Sentinel URL: ${reason}; ${SENTINEL_FORM}`,
      },
      `url '${shown}' is not a valid Redis Sentinel URL: ${reason}; ${SENTINEL_FORM}`,
      cause === undefined ? undefined : { cause },
    );
  const match = /^(rediss?)\+sentinel:\/\/(?:([^@/]*)@)?([^/?#]*)(\/[^?#]*)?([?#].*)?$/i.exec(url);
  if (!match) throw invalid('it does not start with redis+sentinel:// or rediss+sentinel://');
  const [, scheme = '', userInfo, hostList = '', path = '', rest] = match;
  if (rest !== undefined) throw invalid('query strings and fragments are not supported');
  if (hostList === '') throw invalid('it names no sentinel');
  const sentinels = hostList.split(',').map((entry) => parseHostPort(entry, invalid));
  const segments = path.replace(/^\//, '').split('/');
  const [name = '', db, ...extra] = segments;
  if (name === '')
    throw invalid('it names no master (the name after the sentinels, as in `sentinel monitor <name>`)');
  if (extra.length > 0) throw invalid(`the path '${path}' has more than a master name and a database number`);
  if (db !== undefined && !/^\d{1,5}$/.test(db)) throw invalid(`'${db}' is not a database number`);
  let username: string | undefined;
  let password: string | undefined;
  if (userInfo !== undefined && userInfo !== '') {
    const colon = userInfo.indexOf(':');
    const user = colon < 0 ? userInfo : userInfo.slice(0, colon);
    const secret = colon < 0 ? '' : userInfo.slice(colon + 1);
    try {
      username = user === '' ? undefined : decodeURIComponent(user);
      password = secret === '' ? undefined : decodeURIComponent(secret);
    } catch (err) {
      throw invalidOption(
        {
          component: owner,
          option: 'url',
          value: shown,
          expected: `it has a malformed percent-escape in its user or password; ${SENTINEL_FORM}`,
        },
        `url '${shown}' has a malformed percent-escape in its user or password; ${SENTINEL_FORM}`,
        { cause: err },
      );
    }
  }
  return {
    sentinels,
    masterName: decodeURIComponent(name),
    db: db === undefined ? 0 : Number(db),
    username,
    password,
    tls: scheme.toLowerCase() === 'rediss',
  };
}

function parseHostPort(entry: string, invalid: (reason: string) => Error): { host: string; port: number } {
  // host:port, or [v6]:port; a sentinel has no default port worth guessing, so it is required.
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]]+):(\d{1,5})$/i.exec(entry);
  if (!match) throw invalid(`sentinel '${entry}' is not host:port`);
  const port = Number(match[2]);
  if (port < 1 || port > 65_535) throw invalid(`sentinel '${entry}' has port ${port}, outside 1-65535`);
  return { host: (match[1] ?? '').replace(/^\[(.*)\]$/, '$1'), port };
}
