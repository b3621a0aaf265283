/**
 * Webhook signatures: how a sender proves a POST is its own, and how a receiver checks it. Three
 * layouts are understood, each the one a family of senders uses:
 *
 * - `timestamped` (Baton's own, and the layout Stripe's `Stripe-Signature` has):
 *   `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
 * - `standard` (the Standard Webhooks layout: Svix and the senders built on it): headers
 *   `webhook-id`, `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256(key,
 *   "<id>.<t>.<raw body>")>` (several, space-separated), the key being the secret's bytes after a
 *   `whsec_` prefix, base64-decoded.
 * - `body` (GitHub's `X-Hub-Signature-256`): `sha256=<hex HMAC-SHA256(secret, raw body)>`, with no
 *   timestamp.
 *
 * Invariants:
 * 1. The MAC covers the body's exact bytes, and in the timestamped layouts the timestamp too: a
 *    captured request cannot be replayed once its timestamp is more than the tolerance away from
 *    the receiver's clock, either way (a sender's clock may run ahead). The `body` layout has no
 *    timestamp, so no window: a replay of one is absorbed only by its delivery id (webhooks.md).
 * 2. Signatures compare in constant time; a header may carry several signatures (a sender
 *    rotating its secret) and a receiver may hold several secrets (the receiver rotating): any
 *    pair that matches admits the request, and every pair is compared.
 * 3. Nothing here logs or returns a secret or an expected MAC; a refusal says what is wrong with
 *    the header, never what it should have been.
 * 4. What the signature covers is what may be trusted: the `standard` layout signs its delivery
 *    id, so a check returns it (`signedId`); the others sign none.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header a Baton sender signs its POST in (node:http gives header names lower-cased). */
export const SIGNATURE_HEADER = 'baton-signature';

/** How far a signature's timestamp may be from the receiver's clock: 5 minutes, either way. */
export const SIGNATURE_TOLERANCE_MS = 5 * 60_000;

/** The signature layouts {@link checkSignature} understands (see the file's head). */
export type SignatureLayout = 'timestamped' | 'standard' | 'body';

/** Whether a signature admits a request, and if not, why; `signedId` when the layout signs one. */
export type SignatureCheck = { ok: true; signedId?: string } | { ok: false; reason: string };

/** The hex HMAC-SHA256 of `<t>.<body>` under `secret`: what a `v1=` carries. */
export function webhookMac(secret: string, timestamp: number, body: Buffer | string): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
}

/**
 * The `Baton-Signature` header for `body` sent at `atMs` (ms since the epoch): what a sender
 * written in TypeScript puts on its POST. Other languages: docs/webhooks.md.
 */
export function signWebhook(secret: string, body: Buffer | string, atMs: number = Date.now()): string {
  const t = Math.floor(atMs / 1000);
  return `t=${t},v1=${webhookMac(secret, t, body)}`;
}

/**
 * The three Standard Webhooks headers for `body` with delivery `id` sent at `atMs`: what a sender
 * of that layout puts on its POST (for tests and senders of one's own).
 */
export function signStandardWebhook(
  secret: string,
  id: string,
  body: Buffer | string,
  atMs: number = Date.now(),
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const t = Math.floor(atMs / 1000);
  const mac = createHmac('sha256', standardKey(secret)).update(`${id}.${t}.`).update(body).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(t), 'webhook-signature': `v1,${mac}` };
}

/** GitHub's `X-Hub-Signature-256` value for `body`. */
export function signBodyWebhook(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** A Standard Webhooks key: the bytes base64-encoded after `whsec_`, or the secret as it is. */
function standardKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8');
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** True when any of `given` equals any of `expected`, every pair compared (invariant 2). */
function anyMatch(given: readonly string[], expected: readonly string[]): boolean {
  let matched = false;
  for (const e of expected) for (const g of given) if (sameText(g, e)) matched = true;
  return matched;
}

/** A refusal of a timestamp too far from `nowMs`, or undefined when it is within `toleranceMs`. */
function staleness(header: string, seconds: string, nowMs: number, toleranceMs: number): string | undefined {
  const skewMs = Math.abs(nowMs - Number(seconds) * 1000);
  if (skewMs <= toleranceMs) return undefined;
  return (
    `the ${header} timestamp is ${Math.round(skewMs / 1000)} s from this server's clock ` +
    `(at most ${Math.round(toleranceMs / 1000)} s): sign each request when it is sent, and keep clocks in sync`
  );
}

/**
 * Checks a `t=…,v1=…` header (Baton's, Stripe's layout) against the body's bytes, the secrets and
 * the clock. The reason of a refusal names the part of the header that is wrong.
 */
export function verifyWebhook(
  secrets: readonly string[],
  header: string,
  body: Buffer,
  nowMs: number,
  options: { headerName?: string; toleranceMs?: number } = {},
): SignatureCheck {
  const name = options.headerName ?? SIGNATURE_HEADER;
  let timestamp: string | undefined;
  const macs: string[] = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    const key = part.slice(0, Math.max(at, 0)).trim();
    const value = part.slice(at + 1).trim();
    if (key === 't') timestamp = value;
    else if (key === 'v1') macs.push(value.toLowerCase());
  }
  if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp))
    return { ok: false, reason: `the ${name} header has no t=<unix seconds>` };
  if (macs.length === 0) return { ok: false, reason: `the ${name} header has no v1=<hex HMAC-SHA256>` };
  const stale = staleness(name, timestamp, nowMs, options.toleranceMs ?? SIGNATURE_TOLERANCE_MS);
  if (stale !== undefined) return { ok: false, reason: stale };
  const t = Number(timestamp);
  return anyMatch(
    macs,
    secrets.map((secret) => webhookMac(secret, t, body)),
  )
    ? { ok: true }
    : {
        ok: false,
        reason: `the ${name} does not match the body: sign "<t>.<raw body>" with the shared secret (HMAC-SHA256, hex)`,
      };
}

/** The request parts a signature check reads: lower-cased header names, the body's exact bytes. */
export interface SignedRequest {
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: Buffer;
}

/** Checks a Standard Webhooks signature (`webhook-id`, `webhook-timestamp`, `webhook-signature`). */
function verifyStandard(
  secrets: readonly string[],
  req: SignedRequest,
  nowMs: number,
  toleranceMs: number,
): SignatureCheck {
  const id = req.headers['webhook-id'];
  const timestamp = req.headers['webhook-timestamp'];
  const signature = req.headers['webhook-signature'];
  if (id === undefined || id === '') return { ok: false, reason: 'the request has no webhook-id header' };
  if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp))
    return { ok: false, reason: 'the webhook-timestamp header is not <unix seconds>' };
  if (signature === undefined) return { ok: false, reason: 'the request has no webhook-signature header' };
  const macs = signature
    .split(' ')
    .filter((part) => part.startsWith('v1,'))
    .map((part) => part.slice(3));
  if (macs.length === 0)
    return { ok: false, reason: 'the webhook-signature header has no v1,<base64 HMAC-SHA256>' };
  const stale = staleness('webhook-timestamp', timestamp, nowMs, toleranceMs);
  if (stale !== undefined) return { ok: false, reason: stale };
  const expected = secrets.map((secret) =>
    createHmac('sha256', standardKey(secret)).update(`${id}.${timestamp}.`).update(req.body).digest('base64'),
  );
  return anyMatch(macs, expected)
    ? { ok: true, signedId: id }
    : {
        ok: false,
        reason:
          'the webhook-signature does not match: sign "<webhook-id>.<webhook-timestamp>.<raw body>" (HMAC-SHA256, base64)',
      };
}

/** Checks GitHub's `sha256=<hex>` over the body alone. */
function verifyBody(
  secrets: readonly string[],
  header: string,
  value: string | undefined,
  body: Buffer,
): SignatureCheck {
  if (value === undefined) return { ok: false, reason: `the request has no ${header} header` };
  const macs = value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.startsWith('sha256='))
    .map((part) => part.slice(7).toLowerCase());
  if (macs.length === 0) return { ok: false, reason: `the ${header} header has no sha256=<hex HMAC-SHA256>` };
  return anyMatch(
    macs,
    secrets.map((secret) => createHmac('sha256', secret).update(body).digest('hex')),
  )
    ? { ok: true }
    : {
        ok: false,
        reason: `the ${header} does not match the body: sign the raw body with the shared secret (HMAC-SHA256, hex)`,
      };
}

/** Checks a request's signature in `layout`, its header named `header` (not used by `standard`). */
export function checkSignature(
  layout: SignatureLayout,
  secrets: readonly string[],
  header: string,
  req: SignedRequest,
  nowMs: number,
  toleranceMs: number,
): SignatureCheck {
  if (layout === 'standard') return verifyStandard(secrets, req, nowMs, toleranceMs);
  const value = req.headers[header];
  if (layout === 'body') return verifyBody(secrets, header, value, req.body);
  if (value === undefined) return { ok: false, reason: `the request has no ${header} header` };
  return verifyWebhook(secrets, value, req.body, nowMs, { headerName: header, toleranceMs });
}
