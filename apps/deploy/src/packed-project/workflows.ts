// A user's workflow module in erasable TypeScript, copied into the empty project that installed the
// packed tarballs (packed-packages.serial.int.spec.ts), where the installed `baton dev` runs it with
// Node's type stripping and nothing else: no build, no loader, no server.
import { defineActivity, defineWorkflow } from '@baton/core';

interface Order {
  id: string;
  items: number[];
}

const total = defineActivity({
  name: 'total',
  idempotent: true,
  run: async (order: Order) => order.items.reduce((sum, item) => sum + item, 0),
});

export const checkout = defineWorkflow({
  name: 'checkout',
  version: 1,
  run: async (ctx, order: Order) => {
    const amount: number = await ctx.run(total, order);
    return { order: order.id, amount };
  },
});
