/**
 * The workflows of the schedules, versions, start and search specs (server/api-pages.spec.ts and
 * console-pages.int.spec.ts): an order whose input has a schema with a JSON Schema form (a
 * hand-written Standard Schema, so no validation library is needed), which tags the run with its
 * customer and waits for a `ship` signal (so it stays unfinished); and a report with no schema,
 * which a schedule starts and which ends at once.
 */
import { defineWorkflow, type StandardSchemaV1 } from '@baton/core';

export interface OrderInput {
  customerId: string;
  amount: number;
  express?: boolean;
}

/** The order input's JSON Schema, as a schema library would write it. */
export const ORDER_JSON_SCHEMA = {
  type: 'object',
  properties: {
    customerId: { type: 'string', description: 'who ordered' },
    amount: { type: 'integer', minimum: 1 },
    express: { type: 'boolean' },
  },
  required: ['customerId', 'amount'],
};

const orderInput: StandardSchemaV1<OrderInput> = {
  '~standard': {
    version: 1,
    vendor: 'baton-spec',
    validate: (value) => {
      const fields = (value ?? {}) as Record<string, unknown>;
      const issues: { message: string; path: string[] }[] = [];
      if (typeof fields['customerId'] !== 'string' || fields['customerId'] === '')
        issues.push({ message: 'a customer id is required', path: ['customerId'] });
      const amount = fields['amount'];
      if (typeof amount !== 'number' || !Number.isInteger(amount) || amount < 1)
        issues.push({ message: 'must be a whole number of at least 1', path: ['amount'] });
      return issues.length > 0 ? { issues } : { value: value as OrderInput };
    },
    ...{ jsonSchema: { input: () => ORDER_JSON_SCHEMA, output: () => ORDER_JSON_SCHEMA } },
  },
};

export const pagesOrder = defineWorkflow({
  name: 'pg_order',
  version: 1,
  input: orderInput,
  run: async (ctx, input) => {
    await ctx.setAttributes({ customerId: input.customerId });
    return ctx.waitForSignal<boolean>('ship');
  },
});

export const pagesReport = defineWorkflow({
  name: 'pg_report',
  version: 1,
  run: async (_ctx, input: unknown) => ({ reported: input }),
});
