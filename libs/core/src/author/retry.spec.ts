import { describe, expect, it } from 'vitest';
import { ActivityTimeoutError, NonRetryableError } from './errors.js';
import { runWithRetry, type RetryFailure } from './retry.js';

describe('runWithRetry', () => {
  it('times out an attempt that ignores its signal, then retries it', async () => {
    const signals: AbortSignal[] = [];
    const { result, attempts } = await runWithRetry(
      async ({ attempt, signal }) => {
        signals.push(signal);
        if (attempt === 1) return new Promise<string>(() => undefined); // hangs, ignores the signal
        return 'second time lucky';
      },
      { name: 'hang', timeoutMs: 30, policy: { initialDelayMs: 1, jitter: false } },
    );
    expect(result).toBe('second time lucky');
    expect(attempts).toBe(2);
    expect(signals[0]!.aborted).toBe(true);
    expect(signals[0]!.reason).toBeInstanceOf(ActivityTimeoutError);
  });

  it('stops at once when the outer signal aborts, with its reason, even during a backoff', async () => {
    const controller = new AbortController();
    let calls = 0;
    const pending = runWithRetry(
      () => {
        calls++;
        throw new Error('flaky');
      },
      { name: 'x', signal: controller.signal, policy: { maxAttempts: 10, initialDelayMs: 10_000 } },
    );
    await new Promise((r) => setTimeout(r, 20));
    controller.abort(new Error('lease lost'));
    const failure = (await pending.catch((f: unknown) => f)) as RetryFailure;
    expect((failure.error as Error).message).toBe('lease lost');
    expect(calls).toBe(1);
  });

  it('does not retry errors marked non-retryable or listed by name', async () => {
    let calls = 0;
    const byClass = (await runWithRetry(
      () => {
        calls++;
        throw new NonRetryableError('invalid card');
      },
      { name: 'x', policy: { maxAttempts: 5, initialDelayMs: 1 } },
    ).catch((f: unknown) => f)) as RetryFailure;
    expect(calls).toBe(1);
    expect(byClass.attempts).toBe(1);

    class ValidationError extends Error {
      override name = 'ValidationError';
    }
    calls = 0;
    await runWithRetry(
      () => {
        calls++;
        throw new ValidationError('bad input');
      },
      { name: 'x', policy: { maxAttempts: 5, initialDelayMs: 1, nonRetryable: ['ValidationError'] } },
    ).catch(() => undefined);
    expect(calls).toBe(1);
  });

  it('caps delays at maxDelayMs', async () => {
    const at: number[] = [];
    await runWithRetry(
      () => {
        at.push(Date.now());
        throw new Error('down');
      },
      {
        name: 'x',
        policy: { maxAttempts: 4, initialDelayMs: 20, maxDelayMs: 30, backoffFactor: 10, jitter: false },
      },
    ).catch(() => undefined);
    expect(at).toHaveLength(4);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(15);
    expect(Math.max(...gaps)).toBeLessThan(200); // 10x growth would be 2 s by the third gap
  });
});
