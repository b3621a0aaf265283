/**
 * The webhooks of the HTTP API's specs (http-api.spec.ts over the in-memory fleet, and
 * http-api.serial.int.spec.ts, where `baton serve --workflows` loads this module), and the one
 * workflow only they use. Each webhook is a sender's layout:
 * - `orders`, Baton's `Baton-Signature`, its delivery id the event id in the signed body: starts
 *   `api_greet`, signals a run, ignores pings, refuses what it does not know and throws on `boom`;
 * - `approvals`, Standard Webhooks (the signed `webhook-id` is the delivery id): resolves a
 *   durable promise by the token in the body;
 * - `pushes`, GitHub's `X-Hub-Signature-256` (no timestamp, the body's hash is the delivery id):
 *   starts `api_greet` named by the body.
 */
import { defineWorkflow } from '@baton/core';
import { defineWebhook, hmac } from '@baton/client/webhooks';

export const ORDERS_SECRET = 'spec-orders-secret-9d1f3a77';
export const APPROVALS_SECRET = `whsec_${Buffer.from('spec-approvals-key-51c0e2b4').toString('base64')}`;
export const PUSHES_SECRET = 'spec-pushes-secret-0a6b8e13';

interface OrderEvent {
  id: string;
  type: string;
  name?: string;
  runId?: string;
}

export const orders = defineWebhook({
  name: 'orders',
  verify: hmac({ secret: ORDERS_SECRET }),
  deliveryId: (req) => (req.json() as OrderEvent).id,
  route: (req) => {
    const event = req.json() as OrderEvent;
    switch (event.type) {
      case 'order.created':
        return { start: { workflow: 'api_greet', version: 1, input: { name: event.name } } };
      case 'order.note':
        return { signal: { runId: event.runId!, name: 'note', payload: event.name } };
      case 'ping':
        return { ignore: 'a ping' };
      case 'boom':
        throw new Error('the route broke');
      default:
        return { refuse: `unknown event type '${event.type}'` };
    }
  },
});

export const approvals = defineWebhook({
  name: 'approvals',
  verify: hmac({ secret: APPROVALS_SECRET, scheme: 'standard' }),
  route: (req) => {
    const { token, approved } = req.json() as { token: string; approved: boolean };
    return { resolve: { token, value: { approved } } };
  },
});

export const pushes = defineWebhook({
  name: 'pushes',
  verify: hmac({ secret: PUSHES_SECRET, scheme: 'github' }),
  route: (req) => ({
    start: { workflow: 'api_greet', version: 1, input: { name: new URLSearchParams(req.text()).get('who') } },
  }),
});

/** Waits for two `note` signals and returns their payloads: a duplicate would be the second. */
export const apiTwoNotes = defineWorkflow({
  name: 'api_two_notes',
  version: 1,
  run: async (ctx, _input: unknown) => {
    const first = await ctx.waitForSignal<unknown>('note');
    const second = await ctx.waitForSignal<unknown>('note');
    return [first, second];
  },
});

export const API_WEBHOOKS = [orders, approvals, pushes];
