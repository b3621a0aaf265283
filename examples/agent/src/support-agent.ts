/**
 * A customer-support agent: it looks an order up, refunds it (a refund of 20.00 or more waits for
 * a person's approval) and emails the customer. The systems it changes are stand-ins kept in
 * memory here (`memorySystems`); each honours the idempotency key it is handed, as a payment API
 * does, so a call repeated with the same key is answered with the first one's result.
 *
 * A worker loads this module (BATON_WORKFLOWS=./examples/agent/src/support-agent.ts) and runs
 * `support_agent`, the workflow it exports; `npm run agent` (src/main.ts) starts a conversation
 * with it and prints the tokens as they stream.
 */
import { NonRetryableError } from '@baton/core';
import { z } from 'zod';
import { defineAgent, type Agent, type AnyAgentTool } from './agent.js';
import { scriptedModel, type ScriptedModelOptions } from './scripted-model.js';

export interface Order {
  orderId: string;
  items: string;
  totalCents: number;
  paidOn: string;
  email: string;
}

export interface Refund {
  refundId: string;
  orderId: string;
  cents: number;
}

/** The outside systems the tools call; each change takes the call's idempotency key. */
export interface SupportSystems {
  orders: { get(orderId: string): Promise<Order | undefined> };
  payments: {
    refund(request: { orderId: string; cents: number }, idempotencyKey: string): Promise<Refund>;
    /** The refund made with this key, if there was one. */
    find(idempotencyKey: string): Promise<Refund | undefined>;
  };
  mail: {
    send(
      message: { to: string; subject: string; body: string },
      idempotencyKey: string,
    ): Promise<{ messageId: string }>;
  };
}

/** The systems kept in memory, with what was done to them (refunds and emails by key). */
export function memorySystems(): SupportSystems & {
  refunds: Map<string, Refund>;
  emails: Map<string, { to: string; subject: string; body: string }>;
} {
  const orders = new Map<string, Order>([
    [
      'A-1001',
      {
        orderId: 'A-1001',
        items: '2 mugs',
        totalCents: 4200,
        paidOn: '2026-03-02',
        email: 'ada@example.com',
      },
    ],
    [
      'A-1002',
      {
        orderId: 'A-1002',
        items: '1 tea towel',
        totalCents: 900,
        paidOn: '2026-03-04',
        email: 'bo@example.com',
      },
    ],
  ]);
  const refunds = new Map<string, Refund>();
  const emails = new Map<string, { to: string; subject: string; body: string }>();
  return {
    refunds,
    emails,
    orders: { get: async (orderId) => orders.get(orderId) },
    payments: {
      async refund(request, key) {
        // A second call with the same key gets the first one's refund: nothing is paid twice.
        const done = refunds.get(key);
        if (done) return done;
        const refund = { refundId: `re_${refunds.size + 1}`, ...request };
        refunds.set(key, refund);
        return refund;
      },
      find: async (key) => refunds.get(key),
    },
    mail: {
      async send(message, key) {
        emails.set(key, message);
        return { messageId: `msg_${key}` };
      },
    },
  };
}

/** The tools, over `systems`. */
export function supportTools(systems: SupportSystems): Record<string, AnyAgentTool> {
  return {
    lookup_order: {
      description: 'Looks an order up by its number: what was ordered, what it cost, when it was paid.',
      inputSchema: z.object({ orderId: z.string() }),
      run: async ({ orderId }: { orderId: string }) => {
        const order = await systems.orders.get(orderId);
        // Asking again will not make it exist: fail at once, and the model hears why.
        if (!order) throw new NonRetryableError(`there is no order ${orderId}`);
        return order;
      },
    },
    refund_payment: {
      description: "Refunds an order's payment, in full or in part, to the card it was paid with.",
      inputSchema: z.object({ orderId: z.string(), cents: z.number().int().positive() }),
      // Small refunds go through; from 20.00 on, a person approves first.
      needsApproval: ({ cents }: { cents: number }) => cents >= 2_000,
      run: (input: { orderId: string; cents: number }, io) =>
        systems.payments.refund(input, io.idempotencyKey),
      // A worker that died mid-refund leaves it in doubt: the payment system knows whether it happened.
      reconcile: (_input: { orderId: string; cents: number }, io) => systems.payments.find(io.idempotencyKey),
    },
    send_email: {
      description: 'Sends the customer an email.',
      inputSchema: z.object({ to: z.string(), subject: z.string(), body: z.string() }),
      run: (message: { to: string; subject: string; body: string }, io) =>
        systems.mail.send(message, io.idempotencyKey),
    },
  };
}

/** The support agent's system prompt. */
export const SUPPORT_INSTRUCTIONS =
  'You are the support desk of a small shop. Look orders up before acting on them, refund only ' +
  'what was paid, and tell the customer by email what you did.';

export interface SupportAgentOptions extends ScriptedModelOptions {
  /** @defaultValue 'support_agent' */
  name?: string;
  /** @defaultValue 2: a conversation of four turns continues as new once */
  turnsPerRun?: number;
  /** @defaultValue 1 */
  carryTurns?: number;
}

/** The support agent over `systems`, its model the offline script (scripted-model.ts). */
export function supportAgent(systems: SupportSystems, options: SupportAgentOptions = {}): Agent {
  return defineAgent({
    name: options.name ?? 'support_agent',
    model: () => scriptedModel(options),
    instructions: SUPPORT_INSTRUCTIONS,
    tools: supportTools(systems),
    turnsPerRun: options.turnsPerRun ?? 2,
    carryTurns: options.carryTurns ?? 1,
    approvalTimeout: '1h',
  });
}

/** The systems of this process: a worker's tools change these. */
export const systems = memorySystems();

/** What a worker loading this module runs. */
export const supportDesk = supportAgent(systems).workflow;
