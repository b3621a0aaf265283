/**
 * The idempotency keys Baton derives for the runs it starts itself, and what reads them back: a
 * child's key names its parent and the step that started it (author/child-workflows.ts, invariants
 * 1, 6 and 7), a successor's names the run that continued as it (author/continue-as-new.ts,
 * invariant 1). The worker and the client derive and read them; a workflow author never does.
 * Each run id then follows from its key (`runIdForKey`), so a replayed or retried start makes no
 * second run.
 */
import { ConfigError } from '../shared/errors.js';
import { runIdForKey } from '../shared/ids.js';
import { CONTINUED_AS, type ContinueAsNew, type ContinuedAsNew } from '../author/continue-as-new.js';

/** The idempotency key of the child started by step `seq` of run `parentRunId` (child invariant 1). */
export function childKey(parentRunId: string, seq: number): string {
  return `${childKeyPrefix(parentRunId)}${seq}`;
}

/** What the keys of a run's children start with: `runs.list({ idempotencyKeyPrefix })` finds them. */
export function childKeyPrefix(parentRunId: string): string {
  return `child:${parentRunId}:`;
}

/**
 * A child's key, or the key of a run its chain continued as: `continue-as-new:<run>|child:<parent>:<seq>`
 * (child invariant 7). The run part holds no `|` (run ids never do).
 */
const CHILD_KEY = /^(?:continue-as-new:[^|]*\|)?(child:(.+):(\d+))$/s;

/** The parent a run was started by, read from its idempotency key (child invariants 6 and 7). */
export function parentOfKey(key: string | null | undefined): { runId: string; seq: number } | undefined {
  const match = key === null || key === undefined ? null : CHILD_KEY.exec(key);
  return match ? { runId: match[2]!, seq: Number(match[3]) } : undefined;
}

/**
 * The part of a run's key that links it to a parent (`child:<parent>:<seq>`), which its successor's
 * key carries on (child invariant 7); undefined for a run no parent waits for.
 */
export function parentLinkOfKey(key: string | null | undefined): string | undefined {
  const match = key === null || key === undefined ? null : CHILD_KEY.exec(key);
  return match ? match[1] : undefined;
}

/** The idempotency key of a run's successor (continue-as-new invariant 1). */
export function continuationKey(runId: string): string {
  return `continue-as-new:${runId}`;
}

/** The recorded result of a run that returned `next` (continue-as-new invariant 1 names the successor). */
export function continuedResult(
  runId: string,
  workflow: { name: string; version: number },
  next: ContinueAsNew,
): ContinuedAsNew {
  const version = next.version ?? workflow.version;
  if (!Number.isInteger(version) || version < 1) {
    throw new ConfigError(
      `ctx.continueAsNew in ${workflow.name}@${workflow.version}: version ${String(version)} is not a positive integer`,
    );
  }
  return {
    [CONTINUED_AS]: {
      runId: runIdForKey(workflow.name, continuationKey(runId)),
      workflow: workflow.name,
      version,
      input: next.input,
    },
  };
}
