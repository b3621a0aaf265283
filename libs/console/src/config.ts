/**
 * The console's own settings: where it listens, who may use it and whether it may act. Resolved
 * once at start-up (flag > variable > default) into {@link ResolvedConsoleOptions}; every rule
 * that keeps it safe is checked there, so a console that would be open to the network without an
 * access control never starts.
 *
 * Invariants:
 * 1. A console bound to anything but loopback has an access token or a trusted proxy header.
 * 2. The token is never part of what the browser or the logs receive (see describeConsole).
 */
import { ConfigError } from '@baton/core';
import { CONSOLE_ENV } from '@baton/host';

/** The variables the console reads, besides the fleet's; declared in `@baton/host`'s VARIABLES. */
export { CONSOLE_ENV };

/** The default port (`baton console` with no `--port`). */
export const DEFAULT_CONSOLE_PORT = 8636;
/** The default host: loopback only, so nothing outside the machine reaches the console. */
export const DEFAULT_CONSOLE_HOST = '127.0.0.1';
/** Shorter tokens are refused: guessable by anyone the console is exposed to. */
export const MIN_TOKEN_LENGTH = 16;
/**
 * The default bound on one store call (server/bounded-store.ts): a healthy store answers in
 * milliseconds, and a person looking at the page should learn within seconds that it does not.
 */
export const DEFAULT_STORE_TIMEOUT_MS = 5_000;
/** The longest bound accepted: beyond it a request would outlast any proxy's and browser's patience. */
export const MAX_STORE_TIMEOUT_MS = 300_000;

export interface ConsoleOptions {
  /** @defaultValue {@link DEFAULT_CONSOLE_HOST} */
  host?: string;
  /** @defaultValue {@link DEFAULT_CONSOLE_PORT}; 0 picks a free port. */
  port?: number;
  /** The access token a browser or script must present; required beyond loopback unless `trustedHeader`. */
  token?: string;
  /** Refuse and hide every action. @defaultValue false */
  readOnly?: boolean;
  /**
   * A request header a reverse proxy sets to the authenticated user (e.g. `X-Forwarded-User`);
   * a request carrying it non-empty is let in. Only safe behind a proxy that strips it from clients.
   */
  trustedHeader?: string;
  /**
   * The workers' `/metrics` URLs (e.g. `http://worker-1:8080/metrics`) the workers page's
   * throughput and failure figures are scraped from; none: the page shows no figures.
   */
  metricsUrls?: string[];
  /**
   * How long one store call may take before the request that needs it is answered 503 with
   * `Retry-After` (a frozen or unreachable store), in ms.
   * @defaultValue {@link DEFAULT_STORE_TIMEOUT_MS}
   */
  storeTimeoutMs?: number;
  /**
   * A request header a reverse proxy sets to the client's address (`X-Forwarded-For`,
   * `X-Real-IP`): the sign-in limiter counts wrong tokens by its last entry (the address the
   * proxy saw) instead of the connection's address, which behind a proxy is the proxy's. Only
   * safe when the console is reachable only through that proxy: a client reaching it directly
   * could name any address. @defaultValue none: the connection's address
   */
  clientAddressHeader?: string;
  /**
   * The HTTP API's webhook secrets (`baton serve`): a POST under `/v1` carrying a valid
   * `Baton-Signature` made with one of them is let in without a token (docs/http-api.md). Several
   * while a secret is rotated. @defaultValue none: every request needs the console's access rules
   */
  webhookSecrets?: string[];
}

export interface ResolvedConsoleOptions {
  host: string;
  port: number;
  token: string | undefined;
  readOnly: boolean;
  /** Lower-cased, as node:http gives header names. */
  trustedHeader: string | undefined;
  /** True when the host is a loopback address (or `localhost`). */
  loopback: boolean;
  /** http(s) URLs of the workers' /metrics, in the order given. */
  metricsUrls: string[];
  /** The bound on one store call, in ms. */
  storeTimeoutMs: number;
  /** Lower-cased; undefined: the limiter uses the connection's address. */
  clientAddressHeader: string | undefined;
  /** The webhook secrets, in the order given (none: webhooks are not admitted). */
  webhookSecrets: string[];
}

/** The metrics URLs: the option, else the variable's comma-separated list; each must be http(s). */
function resolveMetricsUrls(option: string[] | undefined, text: string | undefined): string[] {
  const urls = option ?? (text ?? '').split(',');
  const cleaned = urls.map((u) => u.trim()).filter((u) => u !== '');
  for (const url of cleaned) {
    let protocol: string;
    try {
      protocol = new URL(url).protocol;
    } catch {
      protocol = '';
    }
    if (protocol !== 'http:' && protocol !== 'https:') {
      throw new ConfigError(
        `--metrics-url / ${CONSOLE_ENV.metricsUrls}: '${url.replace(/\/\/[^@/]*@/, '//***@')}' is not an http(s) URL; ` +
          "give each worker's /metrics, e.g. http://worker-1:8080/metrics",
      );
    }
  }
  return [...new Set(cleaned)];
}

/** The webhook secrets: the option, else the variable's comma-separated list; each long enough. */
function resolveWebhookSecrets(option: string[] | undefined, text: string | undefined): string[] {
  const secrets = (option ?? (text ?? '').split(',')).map((s) => s.trim()).filter((s) => s !== '');
  if (secrets.some((secret) => secret.length < MIN_TOKEN_LENGTH)) {
    throw new ConfigError(
      `${CONSOLE_ENV.apiWebhookSecret} must hold secrets of at least ${MIN_TOKEN_LENGTH} characters ` +
        '(e.g. `openssl rand -hex 32`), comma-separated while rotating; a short secret is guessable',
    );
  }
  return secrets;
}

/** True for the names and addresses that only this machine reaches. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

const TRUE_WORDS = ['1', 'true', 'yes', 'on'];
const FALSE_WORDS = ['0', 'false', 'no', 'off', ''];

function parseBoolean(name: string, value: string): boolean {
  const v = value.trim().toLowerCase();
  if (TRUE_WORDS.includes(v)) return true;
  if (FALSE_WORDS.includes(v)) return false;
  throw new ConfigError(`${name} must be true or false (1/0, yes/no), got '${value}'`);
}

/** A header name as node:http gives it (lower-cased), or ConfigError naming the variable. */
function headerName(variable: string, text: string | undefined): string | undefined {
  if (text !== undefined && !/^[A-Za-z0-9-]+$/.test(text)) {
    throw new ConfigError(`${variable} must be a header name (letters, digits, '-'), got '${text}'`);
  }
  return text?.toLowerCase();
}

/** Options over variables over defaults; ConfigError names the setting that is wrong and the fix. */
export function resolveConsoleOptions(
  options: ConsoleOptions,
  env: Record<string, string | undefined>,
): ResolvedConsoleOptions {
  const host = options.host ?? env[CONSOLE_ENV.host] ?? DEFAULT_CONSOLE_HOST;
  if (host.trim() === '') throw new ConfigError(`--host / ${CONSOLE_ENV.host} is empty; give an address`);
  const portText = env[CONSOLE_ENV.port];
  const port = options.port ?? (portText === undefined ? DEFAULT_CONSOLE_PORT : Number(portText));
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new ConfigError(
      `--port / ${CONSOLE_ENV.port} must be a whole number from 0 to 65535, got '${String(options.port ?? portText)}'`,
    );
  }
  const token = options.token ?? (env[CONSOLE_ENV.token] || undefined);
  if (token !== undefined && token.length < MIN_TOKEN_LENGTH) {
    throw new ConfigError(
      `--token / ${CONSOLE_ENV.token} must be at least ${MIN_TOKEN_LENGTH} characters ` +
        '(e.g. `openssl rand -hex 24`); a short token is guessable',
    );
  }
  const readOnlyText = env[CONSOLE_ENV.readOnly];
  const readOnly =
    options.readOnly ??
    (readOnlyText === undefined ? false : parseBoolean(CONSOLE_ENV.readOnly, readOnlyText));
  const trustedHeader = headerName(
    CONSOLE_ENV.trustedHeader,
    options.trustedHeader ?? (env[CONSOLE_ENV.trustedHeader] || undefined),
  );
  const clientAddressHeader = headerName(
    CONSOLE_ENV.clientAddressHeader,
    options.clientAddressHeader ?? (env[CONSOLE_ENV.clientAddressHeader] || undefined),
  );
  const loopback = isLoopbackHost(host);
  if (!loopback && token === undefined && trustedHeader === undefined) {
    throw new ConfigError(
      `the console would listen on ${host}, beyond this machine, with no access control: set an access ` +
        `token (--token or ${CONSOLE_ENV.token}) or, behind an authenticating proxy, ` +
        `${CONSOLE_ENV.trustedHeader}; or keep the default host ${DEFAULT_CONSOLE_HOST}`,
    );
  }
  const metricsUrls = resolveMetricsUrls(options.metricsUrls, env[CONSOLE_ENV.metricsUrls]);
  const timeoutText = env[CONSOLE_ENV.storeTimeoutMs];
  const storeTimeoutMs =
    options.storeTimeoutMs ??
    (timeoutText === undefined || timeoutText.trim() === '' ? DEFAULT_STORE_TIMEOUT_MS : Number(timeoutText));
  if (!Number.isInteger(storeTimeoutMs) || storeTimeoutMs < 1 || storeTimeoutMs > MAX_STORE_TIMEOUT_MS) {
    throw new ConfigError(
      `--store-timeout / ${CONSOLE_ENV.storeTimeoutMs} must be a whole number of milliseconds from 1 to ` +
        `${MAX_STORE_TIMEOUT_MS}, got '${String(options.storeTimeoutMs ?? timeoutText)}' ` +
        `(default ${DEFAULT_STORE_TIMEOUT_MS})`,
    );
  }
  const webhookSecrets = resolveWebhookSecrets(options.webhookSecrets, env[CONSOLE_ENV.apiWebhookSecret]);
  return {
    host,
    port,
    token,
    readOnly,
    trustedHeader,
    loopback,
    metricsUrls,
    storeTimeoutMs,
    clientAddressHeader,
    webhookSecrets,
  };
}
