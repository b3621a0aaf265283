/**
 * The crash suite (`@baton/testing/crash`): real worker processes, real signals, invariants
 * checked from the outside against a Postgres ledger of side effects.
 */
export type { CrashSuiteOptions } from './crash-suite.js';
export { describeCrashSuite, describeSigtermHandOff } from './crash-suite.js';
export { describeUnencodableCrash } from './unencodable-scenario.js';
export { describePauseCrash } from './pause-scenario.js';
export { describeUpdateCrash } from './update-scenario.js';
export { describePromiseCrash } from './promise-scenario.js';
export { describeStreamCrash } from './stream-scenario.js';
export type { PauseCrashOptions } from './pause-scenario.js';
export { describeScheduleCrash, scheduledRuns } from './schedule-scenario.js';
export { describeChildCrash } from './child-scenario.js';
export { describeConcurrencyKeyCrash } from './concurrency-key-scenario.js';
export { describePriorityCrash } from './priority-scenario.js';
export { crashLoopFigures, describeCrashLoop, formatCrashLoopFigures } from './crash-loop-scenario.js';
export type { CrashLoopFigures, CrashLoopOptions } from './crash-loop-scenario.js';
export { describeRollout, MAX_WAIT_MS as ROLLOUT_MAX_WAIT_MS } from './rollout-scenario.js';
export type { RolloutFigures } from './rollout-scenario.js';
export type { CrashEnvironment, CrashEnvironmentFactory, ServerOverrides } from './harness.js';
export { CrashWorld, NO_VIOLATIONS, pollUntil } from './harness.js';
export { crashChain, crashParent, expectedOutput, expectedParentOutput } from './crash-workflow.js';
export { resumeLatencies } from './invariants.js';
export type { ChainInput, ParentInput } from './crash-workflow.js';
export type { LogLine } from './worker-processes.js';
export {
  CRASH_WORKFLOW_MODULE,
  nodeInvocation,
  REPO_ROOT,
  WorkerFleet,
  WorkerProcess,
  workerRuntime,
} from './worker-processes.js';
export type { WorkerRuntime } from './worker-processes.js';
export { describeRateLimitCrash, mostStartsInWindow } from './rate-limit-scenario.js';
export { describeAgentCrash } from './agent-scenario.js';
