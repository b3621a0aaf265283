/**
 * The HTTP API (`/v1/…`) for producers and tools in any language: start runs, read them, wait for
 * their results, signal and cancel them (run-routes.ts), complete durable promises by their tokens
 * (promise-routes.ts), described by an OpenAPI document served
 * at `/v1/openapi.json` (openapi.ts). `baton serve` mounts it in the console's server, beside the
 * pages; anything else that serves HTTP (a `baton dev`) mounts it with {@link HttpApi.answer}.
 *
 * Who may call is decided by the server it is mounted in (`admit`: the console's rules, a token
 * or a trusted proxy header, loopback when neither is set), with two rules of the API's own:
 * a browser's session cookie is not accepted (the API has no CSRF token: a script sends
 * `Authorization: Bearer`), and a POST signed with a webhook secret (webhook-signature.ts) is
 * let in without either.
 *
 * Invariants:
 * 1. No route runs for a request that was not admitted; `/v1/openapi.json` (a fixed document,
 *    nothing of the fleet in it) is the one thing served to anyone.
 * 2. No write runs in read-only mode (403), nor for a POST a browser could have sent cross-site:
 *    an Origin that is not this server's, `Sec-Fetch-Site: cross-site`, or a body that is not JSON
 *    (a form's) is refused before anything is read.
 * 3. Every answer but a run stream's events (text/event-stream) is JSON; every error is `{ "error": { "code", "message" } }` with the status of
 *    its code (api-errors.ts), its message redacted. A caller's mistake is never a 500.
 * 4. A long poll ends when its caller hangs up or the API closes, not only at its deadline; so
 *    does a run stream's events (stream-routes.ts), the one answer that is not JSON.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AnyWorkflowDefinition } from '@baton/core';
import type { WebhookDefinition } from '@baton/client/webhooks';
import type { Client } from '@baton/client';
import { decodePathPart, readBodyBytes, sendJson } from '../http-kit.js';
import { API_CODES, ApiError, errorAnswer } from './api-errors.js';
import { OPENAPI_DOCUMENT } from './openapi.js';
import { RUN_ROUTES, type ApiAnswer, type ApiRoute } from './run-routes.js';
import { loggedPath, PROMISE_ROUTES } from './promise-routes.js';
import { STREAM_ROUTES } from './stream-routes.js';
import { WorkflowCatalog } from './start-run.js';
import { SIGNATURE_HEADER, verifyWebhook } from './webhook-signature.js';
import { WebhookCatalog } from './webhook-catalog.js';
import { WEBHOOK_ROUTES } from './webhook-routes.js';

/** The API's path prefix: every path it answers is this or below it. */
export const API_PREFIX = '/v1';
/** Where the OpenAPI document is served. */
export const OPENAPI_PATH = '/v1/openapi.json';
/** The longest a result request waits by default (`?wait=` beyond it is cut to it). */
export const DEFAULT_MAX_WAIT_MS = 60_000;

/** Who a request was let in as (the console's identities, and `webhook` for a signed POST). */
export interface ApiIdentity {
  via: string;
  /** The proxy's user, or a fixed name for the other ways. */
  name: string;
}

/** What the mounting server decided about a request. */
export type ApiAdmission =
  | { ok: true; identity: ApiIdentity }
  | {
      ok: false;
      status: number;
      message: string;
      /** @defaultValue by status: BATON_UNAUTHORIZED (401), BATON_FORBIDDEN (403) */
      code?: string;
      headers?: Record<string, string>;
    };

export interface HttpApiOptions {
  client: Client;
  /**
   * Who may call: the mounting server's rules over the request's headers (the console's:
   * ConsoleServer). Called once per request, never for the OpenAPI document nor for a POST whose
   * webhook signature is valid.
   */
  admit: (req: IncomingMessage) => ApiAdmission;
  /** Workflow definitions whose input schemas starts are checked against. @defaultValue none */
  workflows?: readonly AnyWorkflowDefinition[];
  /** Webhooks served at `POST /v1/webhooks/{name}` (docs/webhooks.md). @defaultValue none */
  webhooks?: readonly WebhookDefinition[];
  /** Refuse every write with 403. @defaultValue false */
  readOnly?: boolean;
  /** Secrets a webhook sender signs its POSTs with. @defaultValue none: signatures are not accepted */
  webhookSecrets?: readonly string[];
  /** The longest `?wait=` of a result request. @defaultValue {@link DEFAULT_MAX_WAIT_MS} */
  maxWaitMs?: number;
  /** Where the API logs each write and each 5xx (already redacted lines). @defaultValue stderr */
  log?: (line: string) => void;
  /** Removes secrets from a message. @defaultValue none removed */
  redact?: (text: string) => string;
  /** The clock webhook timestamps are checked against (tests). @defaultValue Date.now */
  now?: () => number;
  /** How often a run stream's events get a keep-alive comment (tests). @defaultValue 15 s */
  streamHeartbeatMs?: number;
}

/** A route with its path template compiled: the names of its captures, in order. */
interface CompiledRoute {
  route: ApiRoute;
  pattern: RegExp;
  names: string[];
}

function compile(route: ApiRoute): CompiledRoute {
  const names: string[] = [];
  const source = route.path
    .replace(/[.*+?^${}()|[\]\\/]/g, (c) => `\\${c}`)
    .replace(/\\\{(\w+)\\\}/g, (_, n: string) => {
      names.push(n);
      return '([^/]+)';
    });
  return { route, pattern: new RegExp(`^${source}$`), names };
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** True for a JSON media type (`application/json`, `application/problem+json`, with parameters). */
function isJson(type: string): boolean {
  return /^application\/([\w.-]+\+)?json\s*(;|$)/i.test(type.trim());
}

/** The routes of the API, as the OpenAPI document lists them (openapi.spec.ts compares the two). */
export const API_ROUTES: readonly ApiRoute[] = [
  ...RUN_ROUTES,
  ...STREAM_ROUTES,
  ...PROMISE_ROUTES,
  ...WEBHOOK_ROUTES,
];

export class HttpApi {
  private readonly routes = API_ROUTES.map(compile);
  private readonly catalog: WorkflowCatalog;
  private readonly webhooks: WebhookCatalog;
  private readonly log: (line: string) => void;
  private readonly redact: (text: string) => string;
  private readonly now: () => number;
  /** The long polls in flight, aborted by close(). */
  private readonly inFlight = new Set<AbortController>();

  constructor(private readonly options: HttpApiOptions) {
    this.catalog = new WorkflowCatalog(options.workflows ?? [], () => options.client.fleet.workers());
    this.webhooks = new WebhookCatalog(options.webhooks ?? []);
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.redact = options.redact ?? ((text) => text);
    this.now = options.now ?? Date.now;
  }

  /** True for a path this API answers (`/v1` and below). */
  static owns(pathname: string): boolean {
    return pathname === API_PREFIX || pathname.startsWith(`${API_PREFIX}/`);
  }

  /** The loaded workflows as `name@version` (for a start-up line). */
  get loadedWorkflows(): string[] {
    return this.catalog.loadedKeys;
  }

  /** The webhooks served, by name (for a start-up line). */
  get servedWebhooks(): string[] {
    return this.webhooks.names;
  }

  /**
   * Checks starts against `definitions` from now on, and serves `webhooks` when given (`baton
   * dev`, after its modules reloaded).
   */
  replaceWorkflows(
    definitions: readonly AnyWorkflowDefinition[],
    webhooks?: readonly WebhookDefinition[],
  ): void {
    this.catalog.replace(definitions);
    if (webhooks !== undefined) this.webhooks.replace(webhooks);
  }

  /**
   * Answers one request under `/v1` (see {@link HttpApi.owns}); `url` is its parsed target. Never
   * rejects: every failure becomes a JSON error answer.
   */
  async answer(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const controller = new AbortController();
    const hungUp = (): void => controller.abort(new Error('the caller closed the connection'));
    res.once('close', hungUp);
    this.inFlight.add(controller);
    let identity: ApiIdentity | undefined;
    try {
      if (url.pathname === OPENAPI_PATH && (method === 'GET' || method === 'HEAD'))
        return sendJson(res, 200, OPENAPI_DOCUMENT);
      const own = method === 'POST' ? this.selfVerifying(url.pathname) : undefined;
      const signed = method === 'POST' && own === undefined ? await this.signedBody(req) : undefined;
      identity =
        own !== undefined
          ? { via: 'webhook', name: own.params['name'] ?? '' }
          : (signed?.identity ?? this.admitted(req));
      const { route, params } = own ?? this.route(method, url.pathname);
      let body: unknown = undefined;
      let rawBody: Buffer | undefined;
      if (own !== undefined) {
        this.checkReadOnly();
        rawBody = await readBodyBytes(req);
      } else if (method === 'POST') {
        this.checkWrite(req.headers, route.write);
        body = this.parseBody(signed?.bytes ?? (await readBodyBytes(req)));
      }
      const answer = await route.handle({
        client: this.options.client,
        params,
        query: url.searchParams,
        body,
        headers: req.headers,
        signal: controller.signal,
        workflows: this.catalog,
        webhooks: this.webhooks,
        ...(rawBody !== undefined && { rawBody }),
        now: this.now,
        maxWaitMs: this.options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
        ...(this.options.streamHeartbeatMs !== undefined && {
          streamHeartbeatMs: this.options.streamHeartbeatMs,
        }),
      });
      if (answer.stream !== undefined) {
        await answer.stream(res, (err) => errorAnswer(err, this.redact).body);
        return;
      }
      this.send(res, answer, method, url, identity);
    } catch (err) {
      if (controller.signal.aborted && res.destroyed) return;
      const { status, body, headers } = errorAnswer(err, this.redact);
      if (status >= 500)
        this.log(
          `api: ${method} ${loggedPath(url.pathname)}: ${status} ${body.error.code}: ${body.error.message}`,
        );
      this.send(res, { status, body, headers }, method, url, identity);
    } finally {
      res.off('close', hungUp);
      this.inFlight.delete(controller);
    }
  }

  /** Ends every long poll in flight (the server is closing). */
  close(): void {
    for (const controller of this.inFlight) controller.abort(new Error('the server is closing'));
  }

  private send(
    res: ServerResponse,
    answer: ApiAnswer,
    method: string,
    url: URL,
    identity: ApiIdentity | undefined,
  ): void {
    if (res.headersSent || res.destroyed) {
      res.end();
      return;
    }
    sendJson(res, answer.status, answer.body, answer.headers);
    if (method === 'POST' && identity !== undefined) {
      const who = `${identity.via}${identity.via === 'proxy' ? ` ${identity.name}` : ''}`;
      this.log(`api: ${who} ${method} ${loggedPath(url.pathname)} ${answer.status}`);
    }
  }

  /** A POST route that admits its callers itself (a webhook), with its captures; undefined for others. */
  private selfVerifying(pathname: string): { route: ApiRoute; params: Record<string, string> } | undefined {
    for (const { route, pattern, names } of this.routes) {
      if (route.verifiesItself !== true || route.method !== 'POST') continue;
      const match = pattern.exec(pathname);
      if (match === null) continue;
      const params: Record<string, string> = {};
      names.forEach((name, i) => (params[name] = decodePathPart(match[i + 1]!, pathname)));
      return { route, params };
    }
    return undefined;
  }

  /** The route for a method and path, with its captures; 404 for no such path, 405 for another method. */
  private route(method: string, pathname: string): { route: ApiRoute; params: Record<string, string> } {
    const allowed = new Set<string>();
    for (const { route, pattern, names } of this.routes) {
      const match = pattern.exec(pathname);
      if (match === null) continue;
      if (route.method !== method) {
        allowed.add(route.method);
        continue;
      }
      const params: Record<string, string> = {};
      names.forEach((name, i) => (params[name] = decodePathPart(match[i + 1]!, pathname)));
      return { route, params };
    }
    if (pathname === OPENAPI_PATH) allowed.add('GET');
    if (allowed.size > 0) {
      const allow = [...allowed].sort().join(', ');
      throw new ApiError(
        API_CODES.methodNotAllowed,
        `${method} is not served at ${pathname} (${allow} is)`,
        {},
        { Allow: allow },
      );
    }
    throw new ApiError(
      API_CODES.noRoute,
      `no API route ${method} ${pathname}; the routes are in ${OPENAPI_PATH}`,
    );
  }

  /**
   * A POST's body with the identity its webhook signature gives it; undefined when it carries no
   * signature or the API takes none (then the mounting server's rules apply). A signature that
   * does not verify is a 401: whoever sent it meant to be let in by it.
   */
  private async signedBody(
    req: IncomingMessage,
  ): Promise<{ bytes: Buffer; identity: ApiIdentity } | undefined> {
    const secrets = this.options.webhookSecrets ?? [];
    const signature = header(req.headers, SIGNATURE_HEADER);
    if (signature === undefined || secrets.length === 0) return undefined;
    const bytes = await readBodyBytes(req);
    const check = verifyWebhook(secrets, signature, bytes, this.now());
    if (!check.ok) throw new ApiError(API_CODES.badSignature, `webhook signature refused: ${check.reason}`);
    return { bytes, identity: { via: 'webhook', name: 'webhook' } };
  }

  /** The mounting server's decision, and the API's own refusal of a browser session. */
  private admitted(req: IncomingMessage): ApiIdentity {
    const admission = this.options.admit(req);
    if (!admission.ok) {
      const code =
        admission.code ?? (admission.status === 403 ? API_CODES.forbidden : API_CODES.unauthorized);
      throw new ApiError(code, admission.message, {}, admission.headers);
    }
    if (admission.identity.via === 'cookie') {
      throw new ApiError(
        API_CODES.unauthorized,
        'the HTTP API does not take the console session cookie: send Authorization: Bearer <token>',
      );
    }
    return admission.identity;
  }

  /**
   * A POST's preconditions: not something a browser sent cross-site, JSON, and, for a write (not a
   * query, which changes nothing), not read-only.
   */
  private checkWrite(headers: IncomingHttpHeaders, write: boolean): void {
    if (write) this.checkReadOnly();
    const origin = header(headers, 'origin');
    const host = header(headers, 'host');
    if (origin !== undefined) {
      let originHost = '';
      try {
        originHost = new URL(origin).host.toLowerCase();
      } catch {
        // 'null' (a sandboxed page) and garbage are not this server.
      }
      if (host === undefined || originHost !== host.toLowerCase())
        throw new ApiError(
          API_CODES.forbidden,
          `cross-site request refused: Origin ${origin} is not this server`,
        );
    }
    if (header(headers, 'sec-fetch-site') === 'cross-site')
      throw new ApiError(API_CODES.forbidden, 'cross-site request refused (Sec-Fetch-Site: cross-site)');
    const type = header(headers, 'content-type');
    if (type !== undefined && !isJson(type)) {
      throw new ApiError(
        API_CODES.unsupportedMediaType,
        `the body must be JSON (Content-Type: application/json), got '${type}'`,
      );
    }
  }

  /** 403 in read-only mode. */
  private checkReadOnly(): void {
    if (this.options.readOnly === true)
      throw new ApiError(
        API_CODES.readOnly,
        'this server is read-only (--read-only): the API takes no action',
      );
  }

  /** The body as JSON; empty is undefined. */
  private parseBody(bytes: Buffer): unknown {
    const text = bytes.toString('utf8');
    if (text.trim() === '') return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw new ApiError(API_CODES.badRequest, `the request body is not JSON: ${(err as Error).message}`);
    }
  }
}
