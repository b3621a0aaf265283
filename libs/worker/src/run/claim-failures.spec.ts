import { LeaseLostError, ResumeFailedError } from '@baton/core/runtime';
import { FencedWriteError, JournalConflictError } from '@baton/core/adapter';
import { describe, expect, it } from 'vitest';
import { BatonError } from '@baton/core';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { countsAsResumeFailure, resumeBackoffMs } from './claim-failures.js';
import { resolveWorkerOptions } from '../options.js';

describe('which errors count as a failed resume', () => {
  it('counts errors of the run, not a lost lease, a fenced write, a conflict, a shutdown or an outage', () => {
    expect(countsAsResumeFailure(new TypeError('bad value'))).toBe(true);
    expect(countsAsResumeFailure(new BatonError('BATON_REDIS_COMMAND', 'script failed'))).toBe(true);
    expect(countsAsResumeFailure('a thrown string')).toBe(true);
    expect(countsAsResumeFailure(new LeaseLostError('r', 2))).toBe(false);
    expect(countsAsResumeFailure(new FencedWriteError('r', 2, 'checkpoints.write'))).toBe(false);
    expect(countsAsResumeFailure(new JournalConflictError('r', 3, 4))).toBe(false);
    expect(countsAsResumeFailure(new BatonError('BATON_SHUTDOWN', 'worker shutting down'))).toBe(false);
    expect(
      countsAsResumeFailure(new BatonError('BATON_REDIS_UNAVAILABLE', 'down', { retryable: true })),
    ).toBe(false);
  });

  it('waits base * 2^(n-1), capped', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => resumeBackoffMs(n, 1_000, 60_000))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000,
    ]);
  });

  it('names the run, the count, the last error and the way out', () => {
    const err = new ResumeFailedError('r1', 5, 'TypeError: bad value', { cause: new TypeError('bad value') });
    expect(err).toMatchObject({
      name: 'ResumeFailedError',
      code: 'BATON_RESUME_FAILED',
      runId: 'r1',
      failures: 5,
    });
    expect(err.message).toBe(
      'run r1: its resume failed on 5 claims in a row (the limit, BATON_MAX_RESUME_FAILURES); last error: ' +
        'TypeError: bad value. Fix the cause, then call client.timeTravel.retry(runId)',
    );
    expect(err.cause).toBeInstanceOf(TypeError);
  });
});

describe('resume failure options', () => {
  const base = {
    transport: memoryTransport(),
    store: memoryStore(),
    workflows: [{ name: 'w', version: 1 } as never],
  };

  it('defaults to 5 failures, 1 s doubling up to 60 s', () => {
    expect(resolveWorkerOptions(base)).toMatchObject({
      maxResumeFailures: 5,
      resumeBackoffMs: 1_000,
      resumeBackoffMaxMs: 60_000,
    });
  });

  it('refuses a non-positive count and a cap below the base, naming the option', () => {
    expect(() => resolveWorkerOptions({ ...base, maxResumeFailures: 0 })).toThrow(
      /maxResumeFailures must be a positive integer/,
    );
    expect(() => resolveWorkerOptions({ ...base, resumeBackoffMs: 500, resumeBackoffMaxMs: 100 })).toThrow(
      /resumeBackoffMaxMs \(100\) must be at least resumeBackoffMs \(500\)/,
    );
  });
});
