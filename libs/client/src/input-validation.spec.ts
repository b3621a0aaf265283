import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ConfigError,
  defineSignal,
  defineWorkflow,
  InvalidInputError,
  type StandardSchemaV1,
} from '@baton/core';
import { decodeMessage } from '@baton/core/runtime';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Client } from './index.js';

const order = defineWorkflow({
  name: 'order',
  version: 3,
  input: z.object({
    customer: z.object({ id: z.string().min(1) }),
    items: z.array(z.object({ sku: z.string(), quantity: z.number().int().positive() })),
    express: z.boolean().default(false),
  }),
  run: async (_ctx, input) => input.items.length,
});

async function messages(transport: ReturnType<typeof memoryTransport>): Promise<unknown[]> {
  const deliveries = await transport.runQueue.fetch({ max: 100, expiresMs: 50 });
  return deliveries.map((d) => decodeMessage(d.data));
}

describe('client.start with an input schema (zod, through Standard Schema)', () => {
  it('refuses an invalid input with an error naming the workflow and every issue path; nothing is sent', async () => {
    const transport = memoryTransport();
    const client = new Client({ transport, store: memoryStore() });
    const bad = {
      customer: { id: '' },
      items: [
        { sku: 'A', quantity: 1 },
        { sku: 'B', quantity: -2 },
      ],
    };
    const error = await client.start(order, bad).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    const invalid = error as InvalidInputError;
    expect(invalid.code).toBe('BATON_INVALID_INPUT');
    expect(invalid.workflow).toBe('order@3');
    expect(invalid.issues).toHaveLength(2);
    expect(invalid.issues[0]).toMatch(/^\$\.customer\.id: /);
    expect(invalid.issues[1]).toMatch(/^\$\.items\[1\]\.quantity: /);
    expect(invalid.message).toContain('input of workflow order@3 does not match its input schema');
    expect(invalid.message).toContain('$.items[1].quantity');
    expect(await messages(transport)).toEqual([]);
  });

  it('sends the validated value: the schema output, with its defaults filled in', async () => {
    const transport = memoryTransport();
    const client = new Client({ transport });
    const run = await client.start(order, { customer: { id: 'C-1' }, items: [{ sku: 'A', quantity: 2 }] });
    expect(await messages(transport)).toEqual([
      expect.objectContaining({
        kind: 'start',
        runId: run.runId,
        workflow: 'order',
        version: 3,
        input: { customer: { id: 'C-1' }, items: [{ sku: 'A', quantity: 2 }], express: false },
      }),
    ]);
  });

  it('awaits an asynchronous validator and reads paths given as { key } segments', async () => {
    const evenOnly: StandardSchemaV1<number> = {
      '~standard': {
        version: 1,
        vendor: 'baton-spec',
        validate: async (value) =>
          typeof value === 'number' && value % 2 === 0
            ? { value }
            : { issues: [{ message: 'must be even', path: [{ key: 'n' }, 0, 'odd key'] }] },
      },
    };
    const even = defineWorkflow({ name: 'even', version: 1, input: evenOnly, run: async (_ctx, n) => n });
    const transport = memoryTransport();
    const client = new Client({ transport });
    await expect(client.start(even, 3)).rejects.toThrow(
      'input of workflow even@1 does not match its input schema: $.n[0]["odd key"]: must be even',
    );
    expect(await messages(transport)).toEqual([]);
    await client.start(even, 4);
    expect(await messages(transport)).toEqual([expect.objectContaining({ input: 4 })]);
  });

  it('does not validate a start by { name, version }: the producer does not have the schema', async () => {
    const transport = memoryTransport();
    const client = new Client({ transport });
    await client.start({ name: 'order', version: 3 }, { not: 'checked' });
    expect(await messages(transport)).toEqual([expect.objectContaining({ input: { not: 'checked' } })]);
  });
});

describe("client.start refuses what a worker would refuse (the decoder's own check)", () => {
  const cases: Array<[string, { name: unknown; version: unknown }, Record<string, unknown>, string, RegExp]> =
    [
      [
        'version 0',
        { name: 'order', version: 0 },
        {},
        'version',
        /order@0\): version must be a positive integer/,
      ],
      [
        'a name defineWorkflow refuses',
        { name: 'has spaces', version: 1 },
        {},
        'workflow',
        /the workflow name must be 1-128 characters .*; found "has spaces"/,
      ],
      ['an empty key', { name: 'order', version: 1 }, { idempotencyKey: '' }, 'idempotencyKey', /found ""/],
      ['a numeric key', { name: 'order', version: 1 }, { idempotencyKey: 42 }, 'idempotencyKey', /found 42/],
      [
        'an object key',
        { name: 'order', version: 1 },
        { idempotencyKey: {} },
        'idempotencyKey',
        /found an object/,
      ],
      [
        'a bad run id',
        { name: 'order', version: 1 },
        { runId: 'a/b' },
        'runId',
        /runId must be .*found "a\/b"/,
      ],
    ];
  it.each(cases)(
    'refuses %s with InvalidInputError naming the field; nothing is sent',
    async (_what, ref, options, field, message) => {
      const transport = memoryTransport();
      const client = new Client({ transport });
      const error = await client.start(ref as never, null, options as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error).toMatchObject({ code: 'BATON_INVALID_INPUT', field });
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).toContain('A worker would refuse this start, so nothing was sent');
      expect(await messages(transport)).toEqual([]);
    },
  );

  it('sends what the worker accepts: every start the client sends decodes', async () => {
    const transport = memoryTransport();
    const client = new Client({ transport });
    await client.start({ name: 'a.b:c-d_e', version: 1 }, null, { idempotencyKey: ' ' });
    expect(await messages(transport)).toEqual([
      expect.objectContaining({ workflow: 'a.b:c-d_e', version: 1, idempotencyKey: ' ' }),
    ]);
  });
});

describe('definitions', () => {
  it('defineWorkflow refuses an input that is not a Standard Schema', () => {
    expect(() =>
      defineWorkflow({
        name: 'bad',
        version: 1,
        input: { parse: () => 1 } as unknown as StandardSchemaV1,
        run: async () => null,
      }),
    ).toThrow(ConfigError);
  });

  it('defineSignal keeps the name and refuses an empty one', () => {
    expect(defineSignal<boolean>('human_review')).toEqual({ kind: 'signal', name: 'human_review' });
    expect(() => defineSignal('')).toThrow(/defineSignal needs a non-empty name/);
  });

  it('client.signal sends a defined signal under its name', async () => {
    const transport = memoryTransport();
    const client = new Client({ transport });
    const paid = defineSignal<{ cents: number }>('paid');
    await client.signal('run-1', paid, { cents: 500 }, { signalId: 's1' });
    expect(await messages(transport)).toEqual([
      { kind: 'signal', runId: 'run-1', name: 'paid', payload: { cents: 500 }, signalId: 's1' },
    ]);
  });
});
