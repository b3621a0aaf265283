/**
 * A payment flow driven by a provider's webhooks (docs/webhooks.md): the provider tells us an
 * invoice was requested (a run starts), the run sends the customer a payment link carrying a
 * durable promise's token, and the provider's "payment succeeded" event resolves that promise by
 * the token. Both events come to `POST /v1/webhooks/payments`, signed in Stripe's layout
 * (`Stripe-Signature: t=…,v1=…`) with PAYMENTS_WEBHOOK_SECRET; a provider retrying an event
 * (same event id) starts nothing twice and pays nothing twice.
 *
 * Run it: PAYMENTS_WEBHOOK_SECRET=$(openssl rand -hex 24) npx baton dev ./examples/webhooks/payments.ts
 * then send events with examples/webhooks/send.sh (README.md beside this file).
 */
import { defineActivity, defineWorkflow } from '@baton/core';
import { defineWebhook, hmac } from '@baton/client/webhooks';

interface Invoice {
  customer: string;
  cents: number;
}

/** Stands in for an email or SMS: prints the link the customer pays through. */
const sendPaymentLink = defineActivity({
  name: 'send_payment_link',
  run: async ({ customer, token }: { customer: string; token: string }) => {
    const link = `https://pay.example.com/checkout?ref=${token}`;
    console.log(`payment link for ${customer}: ${link}`);
    return link;
  },
});

export const invoice = defineWorkflow({
  name: 'invoice',
  version: 1,
  run: async (ctx, input: Invoice) => {
    // The provider echoes `ref` back in its event: the token completes this promise.
    const paid = ctx.promise<{ paymentId: string }>({ timeout: '7d' });
    await ctx.run(sendPaymentLink, { customer: input.customer, token: paid.token });
    const { paymentId } = await paid.value;
    return { customer: input.customer, cents: input.cents, paymentId };
  },
});

/** The provider's events, as much of them as this flow reads. */
type ProviderEvent =
  | { id: string; type: 'invoice.requested'; data: Invoice }
  | { id: string; type: 'payment.succeeded'; data: { ref: string } }
  | { id: string; type: string; data: unknown };

export const payments = defineWebhook({
  name: 'payments',
  verify: hmac({ secret: process.env.PAYMENTS_WEBHOOK_SECRET, scheme: 'stripe' }),
  // The event id is inside the signed body: a retried event has the same one.
  deliveryId: (req) => (req.json() as ProviderEvent).id,
  route: (req) => {
    const event = req.json() as ProviderEvent;
    if (event.type === 'invoice.requested')
      return { start: { workflow: invoice, input: event.data as Invoice } };
    if (event.type === 'payment.succeeded')
      return { resolve: { token: (event.data as { ref: string }).ref, value: { paymentId: event.id } } };
    return { ignore: `event type ${event.type}` };
  },
});
