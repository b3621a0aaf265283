/**
 * Webhook signatures as pure functions: what a sender signs, what the server accepts, and each
 * way a header is refused (tampered body, another secret, a stale or future timestamp, a header
 * missing its parts), with rotation on both sides.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SIGNATURE_TOLERANCE_MS, signWebhook, verifyWebhook, webhookMac } from './webhook-signature.js';

const SECRET = 'whsec-unit-0123456789abcdef';
const NOW = 1_790_000_000_000;
const BODY = Buffer.from('{"event":"paid","amount":1200}');

describe('webhook signatures', () => {
  it('signs "<t>.<raw body>" with HMAC-SHA256 in hex, as openssl would', () => {
    const header = signWebhook(SECRET, BODY, NOW);
    const t = Math.floor(NOW / 1000);
    const expected = createHmac('sha256', SECRET).update(`${t}.${BODY.toString()}`).digest('hex');
    expect(header).toBe(`t=${t},v1=${expected}`);
    expect(webhookMac(SECRET, t, BODY)).toBe(expected);
    expect(verifyWebhook([SECRET], header, BODY, NOW)).toEqual({ ok: true });
  });

  it('refuses a changed body, another secret, and a changed timestamp', () => {
    const header = signWebhook(SECRET, BODY, NOW);
    const refused = (h: string, body = BODY, secrets = [SECRET]): string => {
      const check = verifyWebhook(secrets, h, body, NOW);
      if (check.ok) throw new Error(`accepted ${h}`);
      return check.reason;
    };
    expect(refused(header, Buffer.from('{"event":"paid","amount":9900}'))).toMatch(/does not match the body/);
    expect(refused(header, BODY, ['another-secret-0123456789'])).toMatch(/does not match/);
    const t = Math.floor(NOW / 1000);
    expect(refused(header.replace(`t=${t}`, `t=${t - 1}`))).toMatch(/does not match/);
  });

  it('accepts a timestamp within 5 minutes either way and refuses one beyond, naming the skew', () => {
    const at = (offsetMs: number): string => signWebhook(SECRET, BODY, NOW + offsetMs);
    expect(verifyWebhook([SECRET], at(-SIGNATURE_TOLERANCE_MS + 1000), BODY, NOW).ok).toBe(true);
    expect(verifyWebhook([SECRET], at(SIGNATURE_TOLERANCE_MS - 1000), BODY, NOW).ok).toBe(true);
    expect(verifyWebhook([SECRET], at(-SIGNATURE_TOLERANCE_MS - 2000), BODY, NOW)).toEqual({
      ok: false,
      reason: expect.stringMatching(/timestamp is 30[12] s from this server's clock \(at most 300 s\)/),
    });
    expect(verifyWebhook([SECRET], at(SIGNATURE_TOLERANCE_MS + 2000), BODY, NOW).ok).toBe(false);
  });

  it('names the part missing from a malformed header', () => {
    const mac = webhookMac(SECRET, Math.floor(NOW / 1000), BODY);
    expect(verifyWebhook([SECRET], `v1=${mac}`, BODY, NOW)).toEqual({
      ok: false,
      reason: expect.stringMatching(/no t=<unix seconds>/),
    });
    expect(verifyWebhook([SECRET], `t=soon,v1=${mac}`, BODY, NOW).ok).toBe(false);
    expect(verifyWebhook([SECRET], `t=${Math.floor(NOW / 1000)}`, BODY, NOW)).toEqual({
      ok: false,
      reason: expect.stringMatching(/no v1=<hex HMAC-SHA256>/),
    });
    expect(verifyWebhook([SECRET], '', BODY, NOW).ok).toBe(false);
  });

  it('takes any of several v1 signatures and any of several secrets (rotation on either side)', () => {
    const t = Math.floor(NOW / 1000);
    const old = webhookMac('old-secret-0123456789abc', t, BODY);
    const current = webhookMac(SECRET, t, BODY);
    expect(verifyWebhook([SECRET], `t=${t},v1=${old},v1=${current}`, BODY, NOW).ok).toBe(true);
    expect(verifyWebhook(['new-secret-0123456789abc', SECRET], `t=${t},v1=${current}`, BODY, NOW).ok).toBe(
      true,
    );
    expect(verifyWebhook([SECRET], `t=${t}, v1=${current.toUpperCase()}`, BODY, NOW).ok).toBe(true);
    expect(verifyWebhook([], `t=${t},v1=${current}`, BODY, NOW).ok).toBe(false);
  });
});
