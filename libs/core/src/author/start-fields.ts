/**
 * The fields of a run's start that every side checks the same way: `defineWorkflow` (a name and
 * version a worker can register), the client (`client.start`, so `baton runs start` too, refuses
 * with InvalidInputError before anything is sent) and the worker's run-message decoder (a start a
 * non-Baton producer wrote with them wrong is poison, dead-lettered naming the field).
 *
 * Invariant: one function decides for all three, so a start the client sends is never one the
 * worker refuses on these fields, and a workflow a worker registers can always be started.
 */
import { RUN_ID_PATTERN } from '../shared/ids.js';

/** Workflow (and activity) names: they appear in keys, subjects and metric labels. */
export const WORKFLOW_NAME_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

/** The start fields {@link startFieldProblem} checks. */
export type StartField = 'workflow' | 'version' | 'idempotencyKey' | 'runId';

/** What is wrong with one start field: the field, and a phrase that follows its name. */
export interface StartFieldProblem {
  readonly field: StartField;
  /** E.g. `must be a positive integer; found 0`: read as `<field> <problem>`. */
  readonly problem: string;
}

/** What a refused value looked like, short: a string quoted (cut at 60 characters), else its kind. */
export function describeFound(value: unknown): string {
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  }
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return String(value);
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Why `name` cannot be a workflow name, or undefined when it can. */
export function workflowNameProblem(name: unknown): string | undefined {
  if (typeof name === 'string' && WORKFLOW_NAME_PATTERN.test(name)) return undefined;
  return (
    "must be 1-128 characters from letters, digits, '_', '.', ':' and '-' (what defineWorkflow accepts); " +
    `found ${describeFound(name)}`
  );
}

/** Why `version` cannot be a workflow version, or undefined when it can. */
export function workflowVersionProblem(version: unknown): string | undefined {
  if (typeof version === 'number' && Number.isInteger(version) && version >= 1) return undefined;
  return `must be a positive integer (what defineWorkflow accepts); found ${describeFound(version)}`;
}

/** Why `key` cannot be an idempotency key (undefined, "no key", is fine), or undefined. */
export function idempotencyKeyProblem(key: unknown): string | undefined {
  if (key === undefined || (typeof key === 'string' && key.length > 0)) return undefined;
  return `must be a non-empty string when given; found ${describeFound(key)}`;
}

/** Why `runId` cannot be a run id (undefined, "a new one", is fine), or undefined. */
export function runIdProblem(runId: unknown): string | undefined {
  if (runId === undefined || (typeof runId === 'string' && RUN_ID_PATTERN.test(runId))) return undefined;
  return (
    "must be 1-128 characters from letters, digits, '_' and '-' (it becomes part of bus subjects); " +
    `found ${describeFound(runId)}`
  );
}

/**
 * The first problem with a start's fields, in the order workflow, version, idempotencyKey, runId;
 * undefined when they are all fine.
 */
export function startFieldProblem(fields: {
  workflow: unknown;
  version: unknown;
  idempotencyKey?: unknown;
  runId?: unknown;
}): StartFieldProblem | undefined {
  const checks: Array<[StartField, string | undefined]> = [
    ['workflow', workflowNameProblem(fields.workflow)],
    ['version', workflowVersionProblem(fields.version)],
    ['idempotencyKey', idempotencyKeyProblem(fields.idempotencyKey)],
    ['runId', runIdProblem(fields.runId)],
  ];
  for (const [field, problem] of checks) if (problem !== undefined) return { field, problem };
  return undefined;
}
