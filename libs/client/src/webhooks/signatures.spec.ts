/**
 * Webhook signatures as pure functions: what a sender signs, what the server accepts, and each
 * way a header is refused (tampered body, another secret, a stale or future timestamp, a header
 * missing its parts), with rotation on both sides.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  SIGNATURE_TOLERANCE_MS,
  signBodyWebhook,
  signStandardWebhook,
  signWebhook,
  verifyWebhook,
  webhookMac,
} from './signatures.js';
import { defineWebhook, hmac } from './define.js';

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

describe('the other layouts, through hmac()', () => {
  const request = (headers: Record<string, string>, body = BODY) => ({ headers, body });

  it('Standard Webhooks: signs "<id>.<t>.<body>" in base64 under the whsec_ key, and hands back the signed id', async () => {
    const key = Buffer.from('standard-key-bytes-0123');
    const secret = `whsec_${key.toString('base64')}`;
    const verify = hmac({ secret, scheme: 'standard' });
    const headers = signStandardWebhook(secret, 'msg_42', BODY, NOW);
    const t = Math.floor(NOW / 1000);
    const mac = createHmac('sha256', key).update(`msg_42.${t}.${BODY.toString()}`).digest('base64');
    expect(headers).toEqual({
      'webhook-id': 'msg_42',
      'webhook-timestamp': String(t),
      'webhook-signature': `v1,${mac}`,
    });
    expect(await verify(request(headers), NOW)).toEqual({ ok: true, signedId: 'msg_42' });
    // The id is signed: another id with the same signature is refused; so is a stale timestamp.
    expect((await verify(request({ ...headers, 'webhook-id': 'msg_43' }), NOW)).ok).toBe(false);
    expect(await verify(request(headers), NOW + SIGNATURE_TOLERANCE_MS + 5000)).toEqual({
      ok: false,
      reason: expect.stringMatching(/webhook-timestamp timestamp is 30\d s/),
    });
    // Several signatures (the sender rotating): any one admits.
    const rotated = { ...headers, 'webhook-signature': `v1,bm90IGl0 ${headers['webhook-signature']}` };
    expect((await verify(request(rotated), NOW)).ok).toBe(true);
    expect(await verify(request({ 'webhook-id': 'msg_42' }), NOW)).toEqual({
      ok: false,
      reason: 'the webhook-timestamp header is not <unix seconds>',
    });
  });

  it("GitHub's: sha256=<hex> over the body alone, no clock; Stripe's: Baton's layout in Stripe-Signature", async () => {
    const github = hmac({ secret: SECRET, scheme: 'github' });
    const signature = signBodyWebhook(SECRET, BODY);
    expect(signature).toBe(`sha256=${createHmac('sha256', SECRET).update(BODY).digest('hex')}`);
    expect(await github(request({ 'x-hub-signature-256': signature }), NOW)).toEqual({ ok: true });
    expect(await github(request({ 'x-hub-signature-256': signature }), NOW + 86_400_000)).toEqual({
      ok: true,
    });
    expect((await github(request({ 'x-hub-signature-256': signature }, Buffer.from('{}')), NOW)).ok).toBe(
      false,
    );
    expect(await github(request({}), NOW)).toEqual({
      ok: false,
      reason: 'the request has no x-hub-signature-256 header',
    });

    const stripe = hmac({ secret: SECRET, scheme: 'stripe' });
    const header = signWebhook(SECRET, BODY, NOW);
    expect(await stripe(request({ 'stripe-signature': header }), NOW)).toEqual({ ok: true });
    expect(await stripe(request({ 'baton-signature': header }), NOW)).toEqual({
      ok: false,
      reason: 'the request has no stripe-signature header',
    });
    // A header of one's own, and a tolerance of one's own.
    const custom = hmac({ secret: SECRET, header: 'X-Signed', toleranceMs: 10_000 });
    expect((await custom(request({ 'x-signed': header }), NOW + 9_000)).ok).toBe(true);
    expect((await custom(request({ 'x-signed': header }), NOW + 11_000)).ok).toBe(false);
  });

  it('refuses a definition that could not serve: no secret, a bad name, no verify or route', () => {
    expect(() => hmac({ secret: undefined })).toThrow(/the secret is missing or shorter than 8 characters/);
    expect(() => hmac({ secret: [] })).toThrow(/the secret is missing/);
    expect(() => hmac({ secret: SECRET, scheme: 'svix' as never })).toThrow(
      /scheme 'svix' is not one of baton, stripe, standard, github/,
    );
    expect(() => hmac({ secret: SECRET, toleranceMs: 0 })).toThrow(/toleranceMs must be a positive number/);
    const route = () => ({ ignore: 'x' });
    const verify = hmac({ secret: SECRET });
    expect(() => defineWebhook({ name: 'a/b', verify, route })).toThrow(/cannot be a path segment/);
    expect(() => defineWebhook({ name: 'hook', verify: undefined as never, route })).toThrow(
      /'verify' must be a function: hmac\(\{ secret \}\)/,
    );
    expect(() => defineWebhook({ name: 'hook', verify, route: 'start' as never })).toThrow(
      /'route' must be a function/,
    );
    const hook = defineWebhook({ name: 'billing.v2', verify, route });
    expect(hook).toMatchObject({ kind: 'webhook', name: 'billing.v2' });
    expect(Object.isFrozen(hook)).toBe(true);
  });
});
