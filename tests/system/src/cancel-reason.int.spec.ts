/**
 * client.cancel(id, reason) on a real bus and store: the reason travels in the cancel message,
 * is kept by the store with the cancel flag, and is what the cancelled run reports.
 */
import { describe, it } from 'vitest';
import { Worker } from '@baton/worker';
import {
  busyWorkflow,
  CANCEL_REASON_WORKFLOWS,
  expectCancelledWithReason,
  waitingWorkflow,
} from '../../../libs/worker/src/cancel-reason.spec-helper.js';
import { IN_PROCESS_PAIRS, inProcessNamespace } from './in-process.spec-helper.js';

for (const pair of IN_PROCESS_PAIRS.filter((p) => p.name !== 'kafka+redis')) {
  describe(`client.cancel(id, reason) on ${pair.name}`, () => {
    const ns = inProcessNamespace(pair.factory, 'cancelreason');

    async function startWorker(inProcessWaitMs: number): Promise<void> {
      const worker = new Worker({
        transport: ns.transport,
        store: ns.store,
        workflows: CANCEL_REASON_WORKFLOWS,
        leaseMs: 2_000,
        fetchWaitMs: 100,
        inProcessWaitMs,
      });
      ns.workers.push(worker);
      await worker.start();
    }

    it('ends a running run cancelled with the reason', { timeout: 30_000 }, async () => {
      await startWorker(1_000);
      await expectCancelledWithReason(ns.client, busyWorkflow, 'running', 'customer withdrew order 17');
    });

    it('ends a suspended run cancelled with the reason the store kept', { timeout: 30_000 }, async () => {
      await startWorker(0);
      await expectCancelledWithReason(ns.client, waitingWorkflow, 'suspended', 'duplicate application');
    });
  });
}
