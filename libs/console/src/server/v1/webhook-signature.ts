/**
 * Webhook signatures for the HTTP API: a sender that holds a shared secret signs each POST, and
 * the API lets it in without a token. The header, in the style Stripe and GitHub made familiar:
 *
 *   Baton-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
 *
 * Invariants:
 * 1. The MAC covers the timestamp and the body's exact bytes: neither can be changed, and a
 *    captured request cannot be replayed once its timestamp is more than
 *    {@link SIGNATURE_TOLERANCE_MS} away from this server's clock (either way: a sender's clock
 *    may run ahead).
 * 2. Signatures compare in constant time; a header may carry several `v1=` (a sender rotating its
 *    secret) and the server may hold several secrets (the server rotating): any pair that matches
 *    admits the request.
 * 3. Nothing here logs or returns a secret or the expected MAC; a refusal says what was wrong
 *    with the header, never what it should have been.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header a webhook sender signs its POST in (node:http gives header names lower-cased). */
export const SIGNATURE_HEADER = 'baton-signature';

/** How far a signature's timestamp may be from the server's clock: 5 minutes, either way. */
export const SIGNATURE_TOLERANCE_MS = 5 * 60_000;

/** The hex HMAC-SHA256 of `<t>.<body>` under `secret`: what a `v1=` carries. */
export function webhookMac(secret: string, timestamp: number, body: Buffer | string): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
}

/**
 * The `Baton-Signature` header for `body` sent at `atMs` (ms since the epoch): what a sender
 * written in TypeScript puts on its POST. Other languages: see docs/http-api.md.
 */
export function signWebhook(secret: string, body: Buffer | string, atMs: number = Date.now()): string {
  const t = Math.floor(atMs / 1000);
  return `t=${t},v1=${webhookMac(secret, t, body)}`;
}

/** Whether a signature admits the request, and if not, why (for the 401's message). */
export type SignatureCheck = { ok: true } | { ok: false; reason: string };

function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Checks a `Baton-Signature` header against the body's bytes, the server's secrets and its clock.
 * The reason of a refusal names the part of the header that is wrong.
 */
export function verifyWebhook(
  secrets: readonly string[],
  header: string,
  body: Buffer,
  nowMs: number,
): SignatureCheck {
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
    return { ok: false, reason: `the ${SIGNATURE_HEADER} header has no t=<unix seconds>` };
  if (macs.length === 0)
    return { ok: false, reason: `the ${SIGNATURE_HEADER} header has no v1=<hex HMAC-SHA256>` };
  const skewMs = Math.abs(nowMs - Number(timestamp) * 1000);
  if (skewMs > SIGNATURE_TOLERANCE_MS) {
    return {
      ok: false,
      reason:
        `the ${SIGNATURE_HEADER} timestamp is ${Math.round(skewMs / 1000)} s from this server's clock ` +
        `(at most ${SIGNATURE_TOLERANCE_MS / 1000} s): sign each request when it is sent, and keep clocks in sync`,
    };
  }
  // Every pair is compared (no early exit), so the time taken says nothing about which was close.
  let matched = false;
  for (const secret of secrets) {
    const expected = webhookMac(secret, Number(timestamp), body);
    for (const mac of macs) if (sameHex(mac, expected)) matched = true;
  }
  return matched
    ? { ok: true }
    : {
        ok: false,
        reason: `the ${SIGNATURE_HEADER} does not match the body: sign "<t>.<raw body>" with the shared secret (HMAC-SHA256, hex)`,
      };
}
