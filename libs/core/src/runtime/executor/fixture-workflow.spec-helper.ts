/**
 * The workflow behind the recorded journal in fixtures/order-v1.journal.json. Changing its step
 * order breaks replay of that recording, which is exactly what the fixture test guards.
 */
import { defineActivity, defineWorkflow } from '../../author/workflow.js';

export const executions: string[] = [];

const price = defineActivity({
  name: 'price',
  run: (item: number) => (executions.push(`price:${item}`), item * 100),
});

const reserve = defineActivity({
  name: 'reserve',
  idempotent: false,
  run: (input: { orderId: string; total: number }, io) => (
    executions.push('reserve'),
    { reservation: `res-${io.idempotencyKey}`, total: input.total }
  ),
});

export const orderV1 = defineWorkflow({
  name: 'fixture_order',
  version: 1,
  run: async (ctx, input: { items: number[] }) => {
    const orderId = ctx.uuid();
    const prices = await Promise.all(input.items.map((item) => ctx.run(price, item)));
    const total = prices.reduce((a, b) => a + b, 0);
    const { reservation } = await ctx.run(reserve, { orderId, total });
    await ctx.sleep('1h');
    const approved = await ctx.waitForSignal<boolean>('approve', { timeout: '1d' });
    return { orderId, total, reservation, approved, decidedAt: ctx.now(), roll: ctx.random() < 2 };
  },
});
