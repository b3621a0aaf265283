/**
 * @baton/console: the Baton web console, a small HTTP server over @baton/client's operator API
 * that serves the built front-end (runs, a run's step timeline, dead letters, the fleet, and the
 * actions on them), and the HTTP API (`/v1`) for producers and tools in any language. `baton
 * console` (apps/cli) is how operators start the console, `baton serve` the console and the API.
 *
 * @example
 * ```ts
 * import { boundedStore, DEFAULT_STORE_TIMEOUT_MS, startConsole } from '@baton/console';
 *
 * // Bound every store call, so a frozen store gives 503s instead of hung pages, and retry none
 * // in the client (the page retries after the 503's Retry-After).
 * const client = new Client({
 *   transport,
 *   store: boundedStore(store, DEFAULT_STORE_TIMEOUT_MS),
 *   retryUnavailableMs: 0,
 * });
 * const console = await startConsole({ client, options: { port: 8233 }, env: process.env });
 * // … later
 * await console.close();
 * ```
 */
import type { Client } from '@baton/client';
import { resolveConsoleOptions, type ConsoleOptions } from './config.js';
import { ConsoleServer, type ConsoleServerOptions, type FleetDescription } from './server/console-server.js';

export {
  CONSOLE_ENV,
  DEFAULT_CONSOLE_HOST,
  DEFAULT_CONSOLE_PORT,
  DEFAULT_STORE_TIMEOUT_MS,
  MAX_STORE_TIMEOUT_MS,
  MIN_TOKEN_LENGTH,
  isLoopbackHost,
  resolveConsoleOptions,
} from './config.js';
export type { ConsoleOptions, ResolvedConsoleOptions } from './config.js';
export { ConsoleServer } from './server/console-server.js';
export type { DevReport } from './server/dev-report.js';
export type { ConsoleServerOptions, FleetDescription } from './server/console-server.js';
export { StoreTimeoutError, boundedStore } from './server/bounded-store.js';
export { DEFAULT_SIGN_IN_LIMITS, SignInLimiter, addressKey } from './server/sign-in-limiter.js';
export type { SignInLimits } from './server/sign-in-limiter.js';
export { HISTORY_MINUTES, MetricsHistory, readTotals } from './server/metrics-history.js';
export type { MetricsHistorySnapshot, MinuteSample } from './server/metrics-history.js';
export { API_PREFIX, API_ROUTES, DEFAULT_MAX_WAIT_MS, HttpApi, OPENAPI_PATH } from './server/v1/http-api.js';
export type { ApiAdmission, ApiIdentity, HttpApiOptions } from './server/v1/http-api.js';
export type { ApiAnswer, ApiCall, ApiRoute } from './server/v1/run-routes.js';
export { API_CODES, STATUS_OF_CODE } from './server/v1/api-errors.js';
export { OPENAPI_DOCUMENT } from './server/v1/openapi.js';
export {
  SIGNATURE_HEADER,
  SIGNATURE_TOLERANCE_MS,
  signWebhook,
  verifyWebhook,
} from './server/v1/webhook-signature.js';
export type { SignatureCheck } from './server/v1/webhook-signature.js';

export interface StartConsoleOptions {
  client: Client;
  /** Flags; each overrides its BATON_CONSOLE_* variable. */
  options?: ConsoleOptions;
  /** Where BATON_CONSOLE_* and the fleet's URLs are read. @defaultValue process.env */
  env?: Record<string, string | undefined>;
  /** Where the built front-end is (tests). */
  publicDir?: string;
  log?: (line: string) => void;
  /** Time between two scrapes of each metrics URL (tests). @defaultValue 10 s */
  metricsIntervalMs?: number;
  /** Serve the HTTP API under `/v1` (ConsoleServerOptions.api). @defaultValue not served */
  api?: ConsoleServerOptions['api'];
  /** Serve the console's pages and `/api`. @defaultValue true */
  console?: boolean;
  /** `baton dev`'s last reload, for the page's banner (ConsoleServerOptions.devReport). */
  devReport?: ConsoleServerOptions['devReport'];
}

/** The kinds of bus and store the URLs name (`nats`, `redis`, …): all the page is told of them. */
export function fleetKinds(env: Record<string, string | undefined>): FleetDescription {
  const kind = (url: string | undefined): string =>
    /^([a-z][a-z0-9+.-]*):/i.exec(url ?? '')?.[1] ?? 'unknown';
  return { transport: kind(env['BATON_TRANSPORT_URL']), store: kind(env['BATON_STORE_URL']) };
}

/** Resolves the options (ConfigError names a bad one), starts the server and resolves it listening. */
export async function startConsole(start: StartConsoleOptions): Promise<ConsoleServer> {
  const env = start.env ?? process.env;
  const server = new ConsoleServer({
    client: start.client,
    options: resolveConsoleOptions(start.options ?? {}, env),
    fleet: fleetKinds(env),
    ...(start.publicDir !== undefined && { publicDir: start.publicDir }),
    ...(start.log !== undefined && { log: start.log }),
    ...(start.metricsIntervalMs !== undefined && { metricsIntervalMs: start.metricsIntervalMs }),
    ...(start.api !== undefined && { api: start.api }),
    ...(start.console !== undefined && { console: start.console }),
    ...(start.devReport !== undefined && { devReport: start.devReport }),
  });
  await server.listen();
  return server;
}
