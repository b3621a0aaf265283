/**
 * @baton/client/webhooks: webhooks declared in code, served by the HTTP API at
 * `POST /v1/webhooks/{name}` (docs/webhooks.md), and the signatures both ends of a signed POST use.
 *
 * @example
 * ```ts
 * import { defineWebhook, hmac } from '@baton/client/webhooks';
 *
 * export const payments = defineWebhook({
 *   name: 'payments',
 *   verify: hmac({ secret: process.env.PAYMENTS_WEBHOOK_SECRET, scheme: 'stripe' }),
 *   deliveryId: (req) => (req.json() as { id: string }).id,
 *   route: (req) => {
 *     const event = req.json() as { type: string; data: { object: { metadata: { token: string } } } };
 *     if (event.type !== 'payment_intent.succeeded') return { ignore: event.type };
 *     return { resolve: { token: event.data.object.metadata.token, value: event } };
 *   },
 * });
 * ```
 */
export {
  defineWebhook,
  hmac,
  isWebhook,
  type HmacOptions,
  type HmacScheme,
  type WebhookAction,
  type WebhookDefinition,
  type WebhookOptions,
  type WebhookRequest,
  type WebhookStart,
  type WebhookVerifier,
} from './define.js';
export {
  SIGNATURE_HEADER,
  SIGNATURE_TOLERANCE_MS,
  signBodyWebhook,
  signStandardWebhook,
  signWebhook,
  verifyWebhook,
  type SignatureCheck,
  type SignedRequest,
} from './signatures.js';
