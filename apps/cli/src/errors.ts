/**
 * Exit codes and how errors map to them: 0 done, 1 refused or failed (an unknown run, a run in
 * the wrong state, an unreadable dead letter, a server that did not answer), 2 usage (a bad flag,
 * an invalid filter, a malformed cursor, a missing or invalid BATON_* variable), 130 interrupted
 * (Ctrl-C stopped a bulk action, a replay check or a `runs tail` before it reached every item:
 * 128 + SIGINT, as a shell reports a command SIGINT ended, so a script never takes a half-done walk
 * for a whole one).
 */
import { BatonError, ConfigError } from '@baton/core';

export const EXIT = { done: 0, refused: 1, usage: 2, interrupted: 130 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The command line itself is wrong: a flag, an argument or a combination of them. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The action was refused (wrong state, unknown id, unreadable letter); nothing was changed. */
export class RefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedError';
  }
}

/** The exit code of an error that ended a command. */
export function exitCodeOf(err: unknown): ExitCode {
  if (err instanceof UsageError || err instanceof ConfigError) return EXIT.usage;
  return EXIT.refused;
}

/** The one line printed for an error that ended a command: its message, prefixed by its kind. */
export function describeError(err: unknown): string {
  if (err instanceof UsageError) return `usage: ${err.message}`;
  if (err instanceof ConfigError) return `invalid: ${err.message}`;
  if (err instanceof RefusedError) return `refused: ${err.message}`;
  if (err instanceof BatonError) return `${err.code}: ${err.message}`;
  return `error: ${err instanceof Error ? err.message : String(err)}`;
}
