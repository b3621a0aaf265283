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
// Where a file goes in src/:
// - the root: the Worker and the path a run message takes up to its claim (worker, claim-loop,
//   dispatch, claim, read in that order, with poison and put-back beside dispatch), what configures and observes the
//   worker (options, events, faults, logger), and what it keeps for all its runs at once
//   (lease-keeper, memory-budget, data-loss). The Worker's own specs (worker-*.spec.ts) sit here.
// - run/: one claimed run's life, from its session's recovery to its end: replay and journal,
//   unreadable data and failed resumes, concurrency slots, and the messages sent for runs.
// - fleet/: the worker among its peers, through the shared store: its fleet report, the
//   membership, version routing and redrive, the journal gate, the scans taken in turns, and the
//   store's clock every worker keeps time by.
// - queries/: the answers to queries (docs/queries.md): from a held run's session, or by a
//   replay of a run nobody holds that writes nothing.
// Imports go from the root into the wings; of the root a wing imports only options, events,
// faults, logger and lease-keeper's types, and of run/ fleet/ imports only run-messages. The claim path
// has no wing of its own: it is the reading path from worker.ts, and run/ starts where it ends.
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
