/**
 * The workflows the HTTP API's specs run: a greeting whose input has a schema (a hand-written
 * Standard Schema, so no validation library is needed), in two versions; a run that waits for the
 * signal `go` and returns its payload; a counter that answers the update `add`; a run that fails;
 * and one only the workers register (the
 * API server does not load it), for the version rules of POST /v1/runs. The integration spec
 * (apps/cli/src/http-api.serial.int.spec.ts) gives this module to the worker processes and to `baton
 * serve --workflows`, so it imports nothing but @baton/core and uses only erasable TypeScript
 * (node runs it without a loader).
 */
import { defineQuery, defineWorkflow, type StandardSchemaV1 } from '@baton/core';

/** `{ name: string }` with a name of 1 to 40 characters. */
const greetingInput: StandardSchemaV1<{ name: string }> = {
  '~standard': {
    version: 1,
    vendor: 'baton-spec',
    validate: (value) => {
      const name = (value as { name?: unknown } | null)?.name;
      if (typeof value !== 'object' || value === null) return { issues: [{ message: 'must be an object' }] };
      if (typeof name !== 'string') return { issues: [{ message: 'must be a string', path: ['name'] }] };
      if (name.length < 1 || name.length > 40)
        return { issues: [{ message: 'must be 1 to 40 characters', path: ['name'] }] };
      return { value: { name } };
    },
  },
};

export const apiGreetV1 = defineWorkflow({
  name: 'api_greet',
  version: 1,
  input: greetingInput,
  run: async (ctx, input) => ctx.activity('greet', async () => `hello, ${input.name} (v1)`),
});

export const apiGreetV2 = defineWorkflow({
  name: 'api_greet',
  version: 2,
  input: greetingInput,
  run: async (ctx, input) => ctx.activity('greet', async () => `hello, ${input.name}`),
});

/**
 * Waits for the signal `go` (forever), then returns its payload. Its queries: `waiting_for` answers
 * what it waits for (its args, when given, echoed), `broken` throws.
 */
export const apiWait = defineWorkflow({
  name: 'api_wait',
  version: 1,
  run: async (ctx, _input: unknown) => {
    ctx.onQuery(defineQuery<{ waitingFor: string; args: unknown }, unknown>('waiting_for'), (args) => ({
      waitingFor: 'go',
      args: args ?? null,
    }));
    ctx.onQuery(defineQuery<never>('broken'), () => {
      throw new Error('broken on purpose');
    });
    return ctx.waitForSignal<unknown>('go');
  },
});

/**
 * Adds each update `add`'s whole number (≥ 1; its validator refuses anything else but `"boom"`,
 * whose handler throws) and answers the total; returns the total on the signal `go`.
 */
export const apiCounter = defineWorkflow({
  name: 'api_counter',
  version: 1,
  run: async (ctx, _input: unknown) => {
    let total = 0;
    ctx.onUpdate(
      'add',
      (n: unknown) => {
        if (n === 'boom') throw new Error('add fails on purpose');
        total += n as number;
        return total;
      },
      {
        validate: (n: unknown) => {
          if (n !== 'boom' && !(Number.isInteger(n) && (n as number) >= 1))
            throw new Error(`add takes a whole number ≥ 1, got ${JSON.stringify(n)}`);
        },
      },
    );
    await ctx.waitForSignal('go');
    return total;
  },
});

/** Fails at once, with a message the result route answers. */
export const apiFail = defineWorkflow({
  name: 'api_fail',
  version: 1,
  run: async (_ctx, input: { why: string }) => {
    throw new Error(`api_fail fails on purpose: ${input.why}`);
  },
});

/** Registered by the workers only (not loaded by the API server): its input is not checked. */
export const apiWorkerOnly = defineWorkflow({
  name: 'api_worker_only',
  version: 3,
  run: async (_ctx, input: unknown) => ({ echoed: input }),
});

/** What the API server loads (`baton serve --workflows` in the integration spec loads them all). */
export const API_SERVER_WORKFLOWS = [apiGreetV1, apiGreetV2, apiWait, apiCounter, apiFail];
