/** Run ids: random, or derived from an idempotency key so the same key always names the same run. */
import { createHash, randomUUID } from 'node:crypto';
import { ConfigError } from './errors.js';

/** Run ids appear in bus subjects and keys, so only these characters are allowed. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

export function newRunId(): string {
  return randomUUID();
}

/** The run id for an idempotency key: the same workflow and key always give the same id. */
export function runIdForKey(workflow: string, idempotencyKey: string): string {
  const digest = createHash('sha256')
    .update(workflow)
    .update('\0')
    .update(idempotencyKey)
    .digest('base64url');
  return `k_${digest.slice(0, 32)}`;
}

export function assertRunId(runId: string): void {
  if (!RUN_ID_PATTERN.test(runId)) {
    throw new ConfigError(
      `run id '${runId}' is invalid: use 1-128 characters from letters, digits, '_' and '-' (it becomes part of bus subjects)`,
    );
  }
}
