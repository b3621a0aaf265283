/**
 * Webhooks declared in code (docs/webhooks.md): `defineWebhook({ name, verify, route })` names an
 * endpoint of the HTTP API, `POST /v1/webhooks/{name}`, says how a sender's request is verified
 * (`hmac(...)`, or a function of one's own) and turns a verified request into one action on a
 * run: start one, signal one, resolve or reject a durable promise, or ignore the delivery.
 * `baton serve --workflows` and `baton dev` load definitions from the same modules as workflows.
 *
 * Invariants:
 * 1. A definition is checked when it is made: a name that cannot be a path segment, a missing
 *    `verify` or `route`, an `hmac` without a secret (an unset variable) are a ConfigError at
 *    load, never a webhook that admits anyone or refuses everyone.
 * 2. Every delivery has an id, and by default it comes from what the signature covers (the HTTP
 *    API's webhook route, libs/console/src/server/v1/webhook-routes.ts, derives it).
 */
import { ConfigError } from '@baton/core';
import type { SignalDefinition } from '@baton/core';
import type { WorkflowRef } from '../validate-input.js';
import {
  checkSignature,
  SIGNATURE_HEADER,
  SIGNATURE_TOLERANCE_MS,
  type SignatureCheck,
  type SignatureLayout,
  type SignedRequest,
} from './signatures.js';

/** A delivery as the verifier and the route see it. */
export interface WebhookRequest extends SignedRequest {
  /** The webhook's name (the path's last segment). */
  readonly webhook: string;
  /** Header names lower-cased; a repeated header's first value. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The body's exact bytes, as the sender signed them. */
  readonly body: Buffer;
  /** The URL's query parameters. */
  readonly query: URLSearchParams;
  /** The delivery's id: duplicates of one delivery share it (invariant 2). */
  readonly deliveryId: string;
  /** The body as UTF-8 text. */
  text(): string;
  /** The body as JSON; a body that is not JSON refuses the delivery with a 400 naming the error. */
  json(): unknown;
  /** The body as `application/x-www-form-urlencoded` fields. */
  form(): URLSearchParams;
}

/** Starts a run; its idempotency key defaults to `webhook:<name>:<deliveryId>`. */
export interface WebhookStart {
  workflow: string | WorkflowRef;
  /** With a name: the version (else the highest the server loaded or a live worker registers). */
  version?: number;
  input?: unknown;
  idempotencyKey?: string;
}

/** What a route does with a verified delivery: one action, or nothing (`ignore`), or a refusal. */
export type WebhookAction =
  | { start: WebhookStart }
  /** Signals a run; the signal's id is `webhook:<name>:<deliveryId>`, so a repeat is received once. */
  | { signal: { runId: string; name: string | SignalDefinition<unknown, unknown>; payload?: unknown } }
  /** Resolves a durable promise by its token (a repeat with the same value is a no-op). */
  | { resolve: { token: string; value?: unknown } }
  | { reject: { token: string; error: { message: string; name?: string; code?: string } } }
  /** Answers 200 and does nothing: an event this webhook does not act on. */
  | { ignore: string }
  /** Answers 422 with the reason: a delivery this webhook will not take (the sender may retry). */
  | { refuse: string };

/** Verifies a delivery: `{ ok: true }` admits it, `{ ok: false, reason }` is a 401 with the reason. */
export type WebhookVerifier = (req: SignedRequest, nowMs: number) => SignatureCheck | Promise<SignatureCheck>;

export interface WebhookOptions {
  /** The endpoint's name: `POST /v1/webhooks/<name>`; letters, digits, `-`, `_` and `.`. */
  name: string;
  /** How a delivery is verified: `hmac({...})`, or a function of one's own. Required. */
  verify: WebhookVerifier;
  /** The action for a verified delivery. May be async; a throw is a 500 (the server's bug). */
  route: (req: WebhookRequest) => WebhookAction | undefined | Promise<WebhookAction | undefined>;
  /**
   * The delivery's id, from the request (for example an event id in a signed body:
   * `(req) => (req.json() as { id: string }).id`). Undefined falls back to the default
   * (invariant 2). @defaultValue the id the signature signs, else `sha256:<hex of the body>`
   */
  deliveryId?: (req: SignedRequest & { json(): unknown }) => string | undefined;
}

export interface WebhookDefinition extends Readonly<WebhookOptions> {
  readonly kind: 'webhook';
}

/** The shapes of a webhook name: one path segment, nothing to escape. */
const WEBHOOK_NAME = /^[A-Za-z0-9][\w.-]{0,99}$/;

/** Declares a webhook (see the file's head); ConfigError for a definition that cannot serve. */
export function defineWebhook(options: WebhookOptions): WebhookDefinition {
  const name: unknown = options?.name;
  if (typeof name !== 'string' || !WEBHOOK_NAME.test(name))
    throw new ConfigError(
      `defineWebhook: name ${JSON.stringify(name)} cannot be a path segment of /v1/webhooks/<name>: ` +
        'use 1-100 letters, digits, -, _ or ., starting with a letter or digit',
    );
  for (const field of ['verify', 'route'] as const) {
    if (typeof options[field] !== 'function')
      throw new ConfigError(
        `defineWebhook('${name}'): '${field}' must be a function` +
          (field === 'verify'
            ? ': hmac({ secret }) for a signed sender, or your own check; a webhook without one would admit anyone'
            : ': (req) => ({ start }) | ({ signal }) | ({ resolve }) | ({ reject }) | ({ ignore })'),
      );
  }
  if (options.deliveryId !== undefined && typeof options.deliveryId !== 'function')
    throw new ConfigError(`defineWebhook('${name}'): 'deliveryId' must be a function of the request`);
  return Object.freeze({ ...options, kind: 'webhook' as const });
}

/** True for what {@link defineWebhook} returns (how modules' exports are told apart). */
export function isWebhook(value: unknown): value is WebhookDefinition {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { kind?: unknown }).kind === 'webhook' &&
    typeof (value as { name?: unknown }).name === 'string' &&
    typeof (value as { route?: unknown }).route === 'function'
  );
}

/** Which sender's layout {@link hmac} checks. */
export type HmacScheme = 'baton' | 'stripe' | 'standard' | 'github';

export interface HmacOptions {
  /** The shared secret; several while rotating (any one admits). */
  secret: string | readonly string[] | undefined;
  /**
   * The sender's layout: `baton` (`Baton-Signature: t=…,v1=…`), `stripe` (the same layout in
   * `Stripe-Signature`), `standard` (Standard Webhooks' `webhook-*` headers), `github`
   * (`X-Hub-Signature-256: sha256=…`, no timestamp). @defaultValue 'baton'
   */
  scheme?: HmacScheme;
  /** The header the signature is in. @defaultValue the scheme's */
  header?: string;
  /** How far a timestamp may be from this server's clock. @defaultValue 5 minutes */
  toleranceMs?: number;
}

const SCHEMES: Record<HmacScheme, { layout: SignatureLayout; header: string }> = {
  baton: { layout: 'timestamped', header: SIGNATURE_HEADER },
  stripe: { layout: 'timestamped', header: 'stripe-signature' },
  standard: { layout: 'standard', header: 'webhook-signature' },
  github: { layout: 'body', header: 'x-hub-signature-256' },
};

/** A verifier of HMAC-SHA256 signatures in a sender's layout (see {@link HmacOptions}). */
export function hmac(options: HmacOptions): WebhookVerifier {
  const scheme = options.scheme ?? 'baton';
  const chosen = SCHEMES[scheme];
  if (chosen === undefined)
    throw new ConfigError(
      `hmac: scheme '${String(scheme)}' is not one of ${Object.keys(SCHEMES).join(', ')}`,
    );
  const secrets = typeof options.secret === 'string' ? [options.secret] : [...(options.secret ?? [])];
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s.length < 8))
    throw new ConfigError(
      'hmac: the secret is missing or shorter than 8 characters (an unset variable?): give the ' +
        "secret your sender's webhook settings show, e.g. hmac({ secret: process.env.MY_WEBHOOK_SECRET })",
    );
  const toleranceMs = options.toleranceMs ?? SIGNATURE_TOLERANCE_MS;
  if (!Number.isFinite(toleranceMs) || toleranceMs <= 0)
    throw new ConfigError(`hmac: toleranceMs must be a positive number of milliseconds, got ${toleranceMs}`);
  const header = (options.header ?? chosen.header).toLowerCase();
  return (req, nowMs) => checkSignature(chosen.layout, secrets, header, req, nowMs, toleranceMs);
}
