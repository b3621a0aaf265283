/**
 * @baton/client: start runs, signal and cancel them, wait for results, read their history.
 *
 * @example
 * ```ts
 * import { Client } from '@baton/client';
 *
 * const client = new Client({ transport, store });
 * const run = await client.start(loanApproval, { applicantId: 'A-7291' }, { idempotencyKey: 'loan-A-7291' });
 * await client.signal(run.runId, 'human_review', true);
 * const decision = await run.result({ timeoutMs: 60_000 });
 * ```
 */
export type {
  ClientOptions,
  ForkOptions,
  ResultOptions,
  RunDescription,
  StartOptions,
  WorkflowRef,
} from './client.js';
export type { ForkPoint } from './time-travel.js';
export { Client, RunHandle } from './client.js';
