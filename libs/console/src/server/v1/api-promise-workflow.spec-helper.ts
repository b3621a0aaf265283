/**
 * The durable promise workflow of the HTTP API's spec: a run that makes a promise whose value must
 * be `{ approved: boolean }` (a hand-written Standard Schema with a JSON Schema form, so no
 * validation library is needed) and returns the value, or how it was rejected. Kept apart from
 * api-workflows.spec-helper.ts, which `baton serve --workflows` loads whole in the CLI's spec.
 */
import { defineWorkflow, PromiseRejectedError, type StandardSchemaV1 } from '@baton/core';

const approvalJson = {
  type: 'object',
  properties: { approved: { type: 'boolean' } },
  required: ['approved'],
};

const approval: StandardSchemaV1<{ approved: boolean }> = {
  '~standard': {
    version: 1,
    vendor: 'baton-spec',
    validate: (value) =>
      typeof (value as { approved?: unknown } | null)?.approved === 'boolean'
        ? { value: value as { approved: boolean } }
        : { issues: [{ message: 'must be boolean', path: ['approved'] }] },
    ...{ jsonSchema: { input: () => approvalJson, output: () => approvalJson } },
  },
};

/** Waits for its promise; returns the value, or `{ rejected: message }`. */
export const apiPromise = defineWorkflow({
  name: 'api_promise',
  version: 1,
  run: async (ctx, _input: unknown) => {
    const decision = ctx.promise({ schema: approval });
    try {
      return await decision.value;
    } catch (err) {
      if (err instanceof PromiseRejectedError) return { rejected: err.failure.message };
      throw err;
    }
  },
});
