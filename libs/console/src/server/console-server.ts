/**
 * The console's HTTP server (node:http): admits each request (security.ts), answers the JSON API
 * (one module per area: runs, run, fleet, actions, bulk) over a @baton/client Client, and serves the
 * built front-end. It has no store or bus access of its own: everything goes through the client.
 * With `api` (`baton serve`) it also serves the HTTP API under `/v1` (v1/http-api.ts), admitted by
 * the same rules (`gate`); with `console: false`, that API alone.
 *
 * Invariants:
 * 1. No handler runs for a request the security rules did not admit.
 * 2. No action runs in read-only mode, nor without a valid CSRF token.
 * 3. Every error message is redacted before it reaches the browser or the log.
 * 4. close() is safe to call twice; it closes the server, not the client (the caller owns it).
 * 5. A token is checked only for an address the sign-in limiter lets try (sign-in-limiter.ts);
 *    otherwise the answer is 429 with Retry-After and the token is not looked at.
 * 6. A store call that outlasts its bound is a 503 with Retry-After, never a hung request. The
 *    bound is the client's store's: wrap it with boundedStore (bounded-store.ts) when building the
 *    client, as `baton console` does.
 * 7. A malformed request (a bad percent-escape in the path, a body that is not JSON) is a 400.
 * 8. Without `api` nothing under `/v1` is served by the API (`baton console` stays as it was).
 */
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Client } from '@baton/client';
import type { AnyWorkflowDefinition } from '@baton/core';
import type { WebhookDefinition } from '@baton/client/webhooks';
import { CONSOLE_ENV, type ResolvedConsoleOptions } from '../config.js';
import { ACTION_ROUTES } from './api-actions.js';
import { BULK_ROUTES } from './api-bulk.js';
import { BulkJobs } from './bulk-jobs.js';
import { FLEET_ROUTES } from './api-fleet.js';
import { RUN_ROUTES } from './api-run.js';
import { RUNS_ROUTES } from './api-runs.js';
import { SCHEDULE_ROUTES } from './api-schedules.js';
import { SEARCH_ROUTES } from './api-search.js';
import { START_ROUTES } from './api-start.js';
import { decodePathPart, HttpError, parseJsonBody, readBody, sendJson, type Route } from './http-kit.js';
import { loginPage } from './login-page.js';
import { MetricsHistory } from './metrics-history.js';
import { ConsoleSecurity, SECURITY_HEADERS, type Identity } from './security.js';
import { SignInLimiter, type SignInLimits } from './sign-in-limiter.js';
import { StoreTimeoutError } from './bounded-store.js';
import type { DevReport } from './dev-report.js';
import { DEFAULT_PUBLIC_DIR, staticFile } from './static-files.js';
import { consoleStreamEvents } from './run-stream-events.js';
import { API_CODES } from './v1/api-errors.js';
import { HttpApi, type ApiAdmission } from './v1/http-api.js';
import { WorkflowCatalog } from './v1/start-run.js';

const ROUTES: Route[] = [
  ...RUNS_ROUTES,
  ...RUN_ROUTES,
  ...FLEET_ROUTES,
  ...ACTION_ROUTES,
  ...BULK_ROUTES,
  ...SCHEDULE_ROUTES,
  ...START_ROUTES,
  ...SEARCH_ROUTES,
];

/** What the page learns about the fleet: the kinds of bus and store, never their URLs. */
export interface FleetDescription {
  transport: string;
  store: string;
}

export interface ConsoleServerOptions {
  client: Client;
  options: ResolvedConsoleOptions;
  fleet: FleetDescription;
  /** Where the built front-end is. @defaultValue libs/console/dist/public */
  publicDir?: string;
  /** Where the console logs (already redacted lines). @defaultValue stderr */
  log?: (line: string) => void;
  /** Time between two scrapes of each metrics URL (tests). @defaultValue 10 s */
  metricsIntervalMs?: number;
  /** The sign-in limiter's settings (tests). @defaultValue DEFAULT_SIGN_IN_LIMITS */
  signInLimits?: SignInLimits;
  /** The limiter's clock (tests). @defaultValue Date.now */
  now?: () => number;
  /**
   * Serve the HTTP API under `/v1` (`baton serve`, docs/http-api.md), with the workflows whose
   * input schemas its starts are checked against. @defaultValue not served (`baton console`)
   */
  api?: {
    workflows?: readonly AnyWorkflowDefinition[];
    /** Served at `POST /v1/webhooks/{name}` (docs/webhooks.md). */
    webhooks?: readonly WebhookDefinition[];
    maxWaitMs?: number;
  };
  /**
   * The workflows the start page generates its forms from (their input schemas) and checks starts
   * against, as the HTTP API does with its own (`baton console --workflows`).
   * @defaultValue `api.workflows`, else none (the form takes JSON, checked by the workers)
   */
  workflows?: readonly AnyWorkflowDefinition[];
  /** Serve the console's pages and its `/api` (false: the HTTP API alone). @defaultValue true */
  console?: boolean;
  /** `baton dev`: its last reload, for the page's banner (`GET /api/dev`). @defaultValue not dev */
  devReport?: () => DevReport;
  /** How often a run stream's events (the run page's, the API's) get a keep-alive comment (tests). @defaultValue 15 s */
  streamHeartbeatMs?: number;
}

/**
 * The console's rules applied to one request: who it is, or the refusal. A 429 (an address
 * waiting after wrong tokens) carries its Retry-After seconds.
 */
type Gate =
  | { ok: true; identity: Identity }
  | { ok: false; status: number; message: string; code?: string; retryAfterS?: number };

/** The statuses of the client's error codes: what the operator asked for cannot be done as is. */
const STATUS_OF_CODE: Record<string, number> = {
  BATON_NOT_FOUND: 404,
  BATON_RUN_STATE: 409,
  BATON_CONFIG: 400,
  BATON_VALIDATION: 400,
};

/**
 * The request's URL. A path is taken as a path even when it starts with `//` (which URL parsing
 * would read as a host: `//x:y` is not a valid URL); an absolute URL is parsed as one; anything
 * that does not parse is the client's mistake, a 400.
 */
function requestUrl(target: string): URL {
  try {
    return target.startsWith('/') ? new URL(`http://console.invalid${target}`) : new URL(target);
  } catch {
    throw new HttpError(400, `the request target is not a path or a URL: ${JSON.stringify(target)}`);
  }
}

export class ConsoleServer {
  private readonly server: Server;
  private readonly security: ConsoleSecurity;
  private readonly log: (line: string) => void;
  private readonly bulk = new BulkJobs();
  private readonly metrics: MetricsHistory;
  private readonly signIns: SignInLimiter;
  private readonly now: () => number;
  /** The HTTP API under /v1, when this server serves it. */
  private readonly api: HttpApi | undefined;
  /** What the start page may start, and the input schemas it checks starts against. */
  private readonly workflows: WorkflowCatalog;
  private closing: Promise<void> | undefined;

  constructor(private readonly config: ConsoleServerOptions) {
    this.security = new ConsoleSecurity(config.options);
    this.log = config.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.signIns = new SignInLimiter(config.signInLimits, (line) => this.log(line));
    this.now = config.now ?? Date.now;
    this.metrics = new MetricsHistory(config.options.metricsUrls, {
      ...(config.metricsIntervalMs !== undefined && { intervalMs: config.metricsIntervalMs }),
      log: (line) => this.log(this.security.redact(line)),
    });
    this.workflows = new WorkflowCatalog(
      config.workflows ?? config.api?.workflows ?? [],
      () => config.client.fleet.workers(),
      this.now,
    );
    this.api =
      config.api === undefined
        ? undefined
        : new HttpApi({
            client: config.client,
            admit: (req) => this.apiAdmission(req),
            readOnly: config.options.readOnly,
            webhookSecrets: config.options.webhookSecrets,
            ...(config.api.workflows !== undefined && { workflows: config.api.workflows }),
            ...(config.api.webhooks !== undefined && { webhooks: config.api.webhooks }),
            ...(config.api.maxWaitMs !== undefined && { maxWaitMs: config.api.maxWaitMs }),
            log: (line) => this.log(this.security.redact(line)),
            redact: (text) => this.security.redact(text),
            ...(config.now !== undefined && { now: config.now }),
            ...(config.streamHeartbeatMs !== undefined && { streamHeartbeatMs: config.streamHeartbeatMs }),
          });
    this.server = createServer((req, res) => {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
      this.answer(req, res).catch((err: unknown) => this.fail(res, err, req.method));
    });
  }

  /** Listens on the configured host and port; resolves the URL to open. */
  async listen(): Promise<string> {
    const publicDir = this.config.publicDir ?? DEFAULT_PUBLIC_DIR;
    if (this.servesConsole && !existsSync(join(publicDir, 'index.html')))
      this.log(`console: the front-end is not built (no ${publicDir}/index.html): run \`npm run build\``);
    const { host, port } = this.config.options;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.metrics.start();
    return this.url;
  }

  /** The URL the console answers on (after listen). */
  get url(): string {
    const address = this.server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}/`;
  }

  /** The workflows the HTTP API loaded, as `name@version` (none when it is not served). */
  get apiWorkflows(): string[] {
    return this.api?.loadedWorkflows ?? [];
  }

  /** The webhooks the HTTP API serves, by name (none when it is not served). */
  get apiWebhooks(): string[] {
    return this.api?.servedWebhooks ?? [];
  }

  /**
   * The HTTP API and the start page check starts against `definitions` from now on, and the API serves `webhooks` when given
   * (`baton dev` after a reload).
   */
  replaceApiWorkflows(
    definitions: readonly AnyWorkflowDefinition[],
    webhooks?: readonly WebhookDefinition[],
  ): void {
    this.api?.replaceWorkflows(definitions, webhooks);
    this.workflows.replace(definitions);
  }

  private get servesConsole(): boolean {
    return this.config.console !== false;
  }

  close(): Promise<void> {
    this.api?.close();
    this.bulk.abortAll();
    this.metrics.stop();
    this.closing ??= new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    return this.closing;
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = requestUrl(req.url ?? '/');
    const method = req.method ?? 'GET';
    if (this.api !== undefined && HttpApi.owns(url.pathname)) return this.api.answer(req, res, url);
    if (!this.servesConsole) {
      return sendJson(res, 404, {
        error: {
          code: API_CODES.noRoute,
          message: `only the HTTP API is served here (/v1): no ${url.pathname}`,
        },
      });
    }
    const address = this.clientAddress(req);
    if (url.pathname === '/login') return this.login(req, res, method, address);
    const gate = this.gate(req, address);
    if (!gate.ok) {
      const { status, message, code, retryAfterS } = gate;
      if (retryAfterS !== undefined)
        return sendJson(res, status, { error: message, code }, { 'Retry-After': String(retryAfterS) });
      if (!url.pathname.startsWith('/api/') && method === 'GET' && this.security.needsLogin) {
        res.writeHead(303, { Location: '/login' }).end();
        return;
      }
      return sendJson(res, status, { error: message });
    }
    if (url.pathname.startsWith('/api/')) return this.consoleApi(req, res, method, url, gate.identity);
    if (method !== 'GET' && method !== 'HEAD')
      return sendJson(res, 405, { error: `${method} is not served here` });
    const file = await staticFile(this.config.publicDir ?? DEFAULT_PUBLIC_DIR, url.pathname);
    if (file === 'missing') return sendJson(res, 404, { error: `no file ${url.pathname}` });
    if (file === undefined) {
      res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('The console front-end is not built: run `npx nx run @baton/console:build`.\n');
      return;
    }
    res.writeHead(200, {
      'Content-Type': file.type,
      'Cache-Control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    });
    res.end(method === 'HEAD' ? undefined : file.body);
  }

  /**
   * The console's access rules for one request (security.ts), with the sign-in limiter around the
   * token check: an address that must wait is answered 429 without its token being looked at, and
   * a wrong bearer token counts against its address. The pages, the console's `/api` and the HTTP
   * API all pass through here.
   */
  private gate(req: IncomingMessage, address: string): Gate {
    const presentsToken = this.security.presentsToken(req.headers);
    if (presentsToken) {
      const waitMs = this.signIns.waitOf(address, this.now());
      if (waitMs !== undefined) {
        const seconds = Math.ceil(waitMs / 1000);
        return {
          ok: false,
          status: 429,
          message: `too many wrong access tokens from this address: try again in ${seconds} s`,
          code: API_CODES.signInLimited,
          retryAfterS: seconds,
        };
      }
    }
    const admission = this.security.admit(req.headers);
    if (admission.ok) return admission;
    const { status, message, wrongToken } = admission.refusal;
    if (presentsToken && wrongToken === true) this.signIns.failed(address, this.now());
    return { ok: false, status, message };
  }

  /** {@link gate} as the HTTP API takes it. */
  private apiAdmission(req: IncomingMessage): ApiAdmission {
    const gate = this.gate(req, this.clientAddress(req));
    if (gate.ok) return gate;
    return {
      ok: false,
      status: gate.status,
      message: gate.message,
      ...(gate.code !== undefined && { code: gate.code }),
      ...(gate.retryAfterS !== undefined && { headers: { 'Retry-After': String(gate.retryAfterS) } }),
    };
  }

  private async consoleApi(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    url: URL,
    identity: Identity,
  ): Promise<void> {
    if (url.pathname === '/api/session' && method === 'GET') {
      return sendJson(res, 200, {
        csrfToken: this.security.csrfToken(identity),
        readOnly: this.config.options.readOnly,
        signedInVia: identity.via,
        fleet: this.config.fleet,
        dev: this.config.devReport !== undefined,
      });
    }
    if (url.pathname === '/api/dev' && method === 'GET') {
      const report = this.config.devReport?.();
      if (report === undefined) return sendJson(res, 404, { error: 'this console is not baton dev' });
      return sendJson(res, 200, {
        ...report,
        broken: report.broken.map((b) => ({ ...b, detail: this.security.redact(b.detail) })),
      });
    }
    const streamed = await consoleStreamEvents(req, res, url, {
      client: this.config.client,
      redact: (text) => this.security.redact(text),
      decode: (part) => decodePathPart(part, url.pathname),
      ...(this.config.streamHeartbeatMs !== undefined && { heartbeatMs: this.config.streamHeartbeatMs }),
    });
    if (streamed) return;
    let params: string[] | undefined;
    const route = ROUTES.find((r) => {
      if (r.method !== method) return false;
      const match = r.path.exec(url.pathname);
      if (match) params = match.slice(1).map((p) => decodePathPart(p, url.pathname));
      return match !== null;
    });
    if (route === undefined || params === undefined)
      return sendJson(res, 404, { error: `no API ${method} ${url.pathname}` });
    let body: unknown = undefined;
    if (method === 'POST') {
      const refusal = this.security.checkPost(identity, req.headers);
      if (refusal) return sendJson(res, refusal.status, { error: refusal.message });
      if (route.action && this.config.options.readOnly) {
        return sendJson(res, 403, {
          error: `the console is read-only (--read-only / ${CONSOLE_ENV.readOnly}): it takes no action`,
        });
      }
      body = parseJsonBody(await readBody(req));
      this.log(
        `console: ${identity.via}${identity.via === 'proxy' ? ` ${identity.name}` : ''} ${method} ${url.pathname}`,
      );
    }
    const answer = await route.handle({
      client: this.config.client,
      params,
      query: url.searchParams,
      body,
      bulk: this.bulk,
      metrics: this.metrics,
      workflows: this.workflows,
      redact: (text) => this.security.redact(text),
    });
    sendJson(res, 200, answer);
  }

  /**
   * The address the sign-in limiter counts a request under: the last entry of the configured
   * client-address header (the address the proxy in front of the console saw; entries before it
   * were written by the client and prove nothing), else the connection's own address.
   */
  private clientAddress(req: IncomingMessage): string {
    const header = this.config.options.clientAddressHeader;
    const value = header === undefined ? undefined : req.headers[header];
    const text = Array.isArray(value) ? value.at(-1) : value;
    const last = text?.split(',').at(-1)?.trim();
    return last !== undefined && last !== '' ? last : (req.socket.remoteAddress ?? '');
  }

  private async login(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    address: string,
  ): Promise<void> {
    if (!this.security.needsLogin) {
      res.writeHead(303, { Location: '/' }).end();
      return;
    }
    if (method === 'GET') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(loginPage(false));
      return;
    }
    if (method !== 'POST') return sendJson(res, 405, { error: 'GET or POST /login' });
    const waitMs = this.signIns.waitOf(address, this.now());
    if (waitMs !== undefined) {
      // The token is not even read: checking it while the address waits would tell a guesser when it hit.
      const seconds = Math.ceil(waitMs / 1000);
      res.writeHead(429, {
        'Content-Type': 'text/html; charset=utf-8',
        'Cache-Control': 'no-store',
        'Retry-After': String(seconds),
      });
      res.end(loginPage(false, seconds));
      return;
    }
    const token = new URLSearchParams(await readBody(req)).get('token') ?? '';
    if (!this.security.checkToken(token)) {
      this.signIns.failed(address, this.now());
      res.writeHead(401, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(loginPage(true));
      return;
    }
    const secure = req.headers['x-forwarded-proto'] === 'https';
    res.writeHead(303, { Location: '/', 'Set-Cookie': this.security.sessionCookie(secure) }).end();
  }

  private fail(res: ServerResponse, err: unknown, method = 'GET'): void {
    const code = (err as { code?: unknown } | null)?.code;
    if (err instanceof StoreTimeoutError) {
      // Logged (once per request) like any 5xx, so a frozen store shows in the console's log too.
      const action =
        method === 'POST'
          ? '; the action may still take effect when the store answers: reload before trying it again'
          : '';
      this.log(`console: ${this.security.redact(err.message)}`);
      if (res.headersSent) {
        res.end();
        return;
      }
      sendJson(
        res,
        503,
        { error: this.security.redact(`${err.message}${action}`), code: err.code },
        { 'Retry-After': String(Math.max(1, Math.ceil(err.timeoutMs / 1000))) },
      );
      return;
    }
    const status =
      err instanceof HttpError ? err.status : (typeof code === 'string' && STATUS_OF_CODE[code]) || 500;
    const message = this.security.redact(err instanceof Error ? err.message : String(err));
    if (status >= 500) this.log(`console: error: ${message}`);
    if (res.headersSent) {
      res.end();
      return;
    }
    const details = err instanceof HttpError ? err.details : {};
    sendJson(res, status, { ...details, error: message, ...(typeof code === 'string' && { code }) });
  }
}
