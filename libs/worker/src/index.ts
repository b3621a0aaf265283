/**
 * @baton/worker: the worker runtime. Claims runs, holds their leases, executes them, reaps the
 * runs of crashed workers and hands its own runs off on stop().
 *
 * @example
 * ```ts
 * import { memoryStore, memoryTransport } from '@baton/core/memory';
 * import { Worker } from '@baton/worker';
 *
 * const worker = new Worker({ transport, store, workflows: [loanApproval], concurrency: 100, leaseMs: 5_000 });
 * await worker.start();
 * process.on('SIGTERM', () => void worker.stop());
 * ```
 */
export type { WorkerHealth, WorkerState } from './worker.js';
export { Worker } from './worker.js';
export type { ResolvedWorkerOptions, WorkerOptions } from './options.js';
export { resolveWorkerOptions } from './options.js';
export type { RunEventContext, WorkerEvent } from './events.js';
export type { FaultHook, FaultInfo, FaultPoint } from './faults.js';
export type { Logger } from './logger.js';
export { silentLogger } from './logger.js';
export type { LiveHeapSource } from './memory-budget.js';
export { defaultMemoryBudgetBytes, PRIOR_BYTES_PER_RUN } from './memory-budget.js';
