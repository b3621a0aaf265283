import { afterEach, describe, it } from 'vitest';
import {
  busyWorkflow,
  CANCEL_REASON_WORKFLOWS,
  expectCancelledWithReason,
  waitingWorkflow,
} from './cancel-reason.spec-helper.js';
import { fleet, type Fleet } from './fleet.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

describe('client.cancel(id, reason) (memory adapters)', () => {
  it('ends a running run cancelled with the reason', async () => {
    current = fleet({ workflows: CANCEL_REASON_WORKFLOWS, inProcessWaitMs: 1_000 });
    await current.spawn();
    await expectCancelledWithReason(current.client, busyWorkflow, 'running', 'customer withdrew order 17');
  });

  it('ends a suspended run cancelled with the reason its next owner reads from the store', async () => {
    current = fleet({ workflows: CANCEL_REASON_WORKFLOWS });
    await current.spawn();
    await expectCancelledWithReason(current.client, waitingWorkflow, 'suspended', 'duplicate application');
  });
});
