/**
 * An example workflow module for a fleet started with Docker Compose (BATON_WORKFLOWS points at
 * its build output, `apps/worker/dist/examples/orders.js`), and what the producer enqueues.
 *
 * `order_fulfilment` v1 takes an order through four activities: reserve stock, charge the card,
 * ship, send the confirmation e-mail. The external systems are simulated: each activity waits a
 * random 300-1500 ms (so a run is in flight for a few seconds and a killed worker usually leaves
 * some behind) and returns what a real system would. Nothing here logs: the worker reports claims,
 * completions and hand-offs itself.
 *
 * Every identifier an activity hands out is derived from its idempotency key, the way a real
 * provider answers a repeated request with the same key: an activity that runs again after a crash
 * returns the same reservation, charge, shipment and message as the first time.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import { defineActivity, defineWorkflow, type ActivityIO } from '@baton/core';

export interface OrderLine {
  sku: string;
  quantity: number;
  /** Price of one unit, in cents. */
  unitPriceCents: number;
}

export interface OrderInput {
  orderId: string;
  customerEmail: string;
  currency: string;
  lines: OrderLine[];
}

export interface OrderOutcome {
  orderId: string;
  reservationId: string;
  chargeId: string;
  amountCents: number;
  trackingNumber: string;
  emailMessageId: string;
  /** Workflow time (journaled) when the order was done. */
  fulfilledAt: number;
}

/** Shortest and longest simulated call to an external system. */
export const MIN_ACTIVITY_MS = 300;
export const MAX_ACTIVITY_MS = 1_500;

/** Waits a random 300-1500 ms, like a call to a remote system; ends early when the attempt is aborted. */
async function simulatedCall(signal: AbortSignal): Promise<void> {
  const ms = MIN_ACTIVITY_MS + Math.floor(Math.random() * (MAX_ACTIVITY_MS - MIN_ACTIVITY_MS + 1));
  await sleep(ms, undefined, { signal }).catch((err: unknown) => {
    throw signal.aborted ? signal.reason : err;
  });
}

/** A stable identifier for what the simulated system created under this idempotency key. */
function idFor(prefix: string, io: ActivityIO, length = 16): string {
  return `${prefix}_${createHash('sha256').update(io.idempotencyKey).digest('hex').slice(0, length)}`;
}

/** The order's total in cents. */
export function orderTotalCents(lines: readonly OrderLine[]): number {
  return lines.reduce((sum, line) => sum + line.quantity * line.unitPriceCents, 0);
}

const retry = { maxAttempts: 5, initialDelayMs: 200, maxDelayMs: 5_000 };

export const reserveStock = defineActivity({
  name: 'reserve_stock',
  retry,
  timeoutMs: 10_000,
  run: async (input: { orderId: string; lines: OrderLine[] }, io) => {
    await simulatedCall(io.signal);
    return {
      reservationId: idFor('res', io),
      units: input.lines.reduce((sum, line) => sum + line.quantity, 0),
    };
  },
});

export const chargeCard = defineActivity({
  name: 'charge_card',
  retry,
  timeoutMs: 10_000,
  // The money has moved once this completes: snapshot the run so a resume never reads further back.
  checkpoint: true,
  run: async (input: { orderId: string; amountCents: number; currency: string }, io) => {
    // A payment provider takes the idempotency key with the request and answers a repeat of it
    // with the original charge; that is what makes a charge safe to retry or resume.
    await simulatedCall(io.signal);
    return {
      chargeId: idFor('ch', io),
      idempotencyKey: io.idempotencyKey,
      amountCents: input.amountCents,
      currency: input.currency,
    };
  },
});

export const shipOrder = defineActivity({
  name: 'ship_order',
  retry,
  timeoutMs: 10_000,
  run: async (_input: { orderId: string; reservationId: string }, io) => {
    await simulatedCall(io.signal);
    return { trackingNumber: idFor('TRK', io, 12).toUpperCase() };
  },
});

export const sendConfirmation = defineActivity({
  name: 'send_confirmation_email',
  retry,
  timeoutMs: 10_000,
  run: async (_input: { to: string; orderId: string; trackingNumber: string }, io) => {
    await simulatedCall(io.signal);
    return { messageId: idFor('msg', io) };
  },
});

export const orderFulfilment = defineWorkflow({
  name: 'order_fulfilment',
  version: 1,
  run: async (ctx, input: OrderInput): Promise<OrderOutcome> => {
    const { reservationId } = await ctx.run(reserveStock, { orderId: input.orderId, lines: input.lines });
    const amountCents = orderTotalCents(input.lines);
    const { chargeId } = await ctx.run(chargeCard, {
      orderId: input.orderId,
      amountCents,
      currency: input.currency,
    });
    const { trackingNumber } = await ctx.run(shipOrder, { orderId: input.orderId, reservationId });
    const { messageId } = await ctx.run(sendConfirmation, {
      to: input.customerEmail,
      orderId: input.orderId,
      trackingNumber,
    });
    return {
      orderId: input.orderId,
      reservationId,
      chargeId,
      amountCents,
      trackingNumber,
      emailMessageId: messageId,
      fulfilledAt: ctx.now(),
    };
  },
});

const CATALOGUE: readonly OrderLine[] = [
  { sku: 'BAT-TSHIRT-M', quantity: 1, unitPriceCents: 2_400 },
  { sku: 'BAT-MUG', quantity: 2, unitPriceCents: 1_250 },
  { sku: 'BAT-STICKERS', quantity: 5, unitPriceCents: 199 },
  { sku: 'BAT-HOODIE-L', quantity: 1, unitPriceCents: 5_900 },
];

/**
 * A demo order: the `n`th one a producer sends, with `orderId` unique per producer. One to three
 * lines, picked from `n` so the same `n` always gives the same order.
 */
export function demoOrder(orderId: string, n: number): OrderInput {
  const count = 1 + (n % 3);
  const lines = Array.from({ length: count }, (_, i) => CATALOGUE[(n + i) % CATALOGUE.length]!);
  return { orderId, customerEmail: `customer-${n % 1_000}@example.com`, currency: 'EUR', lines };
}
