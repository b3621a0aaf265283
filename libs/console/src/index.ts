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
 * const console = await startConsole({ client, options: { port: 8636 }, env: process.env });
 * // … later
 * await console.close();
 * ```
 */
import type { Client } from '@baton/client';
import { resolveConsoleOptions, type ConsoleOptions } from './config.js';
import { ConsoleServer, type ConsoleServerOptions, type FleetDescription } from './server/console-server.js';

// The door: starting the console (and the HTTP API) in one's own process, its options, the
// bounded store it reads through, the HTTP API's error codes and OpenAPI document for callers, and
// the webhook signature both ends of a signed POST use. Everything else is the server's own.
export {
  DEFAULT_CONSOLE_HOST,
  DEFAULT_CONSOLE_PORT,
  DEFAULT_STORE_TIMEOUT_MS,
  resolveConsoleOptions,
} from './config.js';
export type { ConsoleOptions, ResolvedConsoleOptions } from './config.js';
export { ConsoleServer } from './server/console-server.js';
export type { ConsoleServerOptions, FleetDescription } from './server/console-server.js';
export type { DevReport } from './server/dev-report.js';
export { StoreTimeoutError, boundedStore } from './server/bounded-store.js';
export type { MetricsHistorySnapshot } from './server/metrics-history.js';
export type { HttpApiOptions } from './server/v1/http-api.js';
export { API_CODES } from './server/v1/api-errors.js';
export { OPENAPI_DOCUMENT } from './server/v1/openapi.js';
export { SIGNATURE_HEADER, signWebhook, verifyWebhook } from './server/v1/webhook-signature.js';
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
  /** The workflows the start page's forms come from (ConsoleServerOptions.workflows). */
  workflows?: ConsoleServerOptions['workflows'];
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
    ...(start.workflows !== undefined && { workflows: start.workflows }),
    ...(start.devReport !== undefined && { devReport: start.devReport }),
  });
  await server.listen();
  return server;
}
