import { describe, expect, it } from 'vitest';
import { isRetriableKafkaError, withKafkaRetries, type RetryPolicy } from './retry.js';

/** Errors shaped as kafkajs raises them (KafkaJSProtocolError carries `type` and `retriable`). */
function protocolError(type: string, retriable: boolean): Error {
  return Object.assign(new Error(`broker said ${type}`), { name: 'KafkaJSProtocolError', type, retriable });
}

const POLICY: RetryPolicy = { budgetMs: 1_000, firstDelayMs: 50, maxDelayMs: 200 };

/** A clock that only moves when the retry loop sleeps, so nothing waits for real. */
function fakeTime() {
  let now = 0;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
  };
}

describe('withKafkaRetries', () => {
  it('tries a read again after leader errors right after topic creation, with doubling delays', async () => {
    const time = fakeTime();
    const failures = [
      protocolError('UNKNOWN_TOPIC_OR_PARTITION', true),
      protocolError('LEADER_NOT_AVAILABLE', true),
      protocolError('NOT_LEADER_FOR_PARTITION', true),
    ];
    let calls = 0;
    const result = await withKafkaRetries(
      { brokers: 'k:9092', operation: 'listDeadLetters', policy: POLICY, ...time },
      async () => {
        calls++;
        const failure = failures.shift();
        if (failure) throw failure;
        return 'letters';
      },
    );
    expect(result).toBe('letters');
    expect(calls).toBe(4);
    expect(time.sleeps).toEqual([50, 100, 200]);
  });

  it('throws a non-retriable error at once, unchanged', async () => {
    const time = fakeTime();
    const refused = protocolError('TOPIC_AUTHORIZATION_FAILED', false);
    let calls = 0;
    await expect(
      withKafkaRetries({ brokers: 'k:9092', operation: 'read', policy: POLICY, ...time }, async () => {
        calls++;
        throw refused;
      }),
    ).rejects.toBe(refused);
    expect(calls).toBe(1);
    expect(time.sleeps).toEqual([]);
  });

  it('gives up when the budget is spent, naming the operation, the attempts and what to check', async () => {
    const time = fakeTime();
    let calls = 0;
    const failure = await withKafkaRetries(
      { brokers: 'k:9092', operation: 'listDeadLetters', policy: POLICY, ...time },
      async () => {
        calls++;
        throw protocolError('NOT_LEADER_FOR_PARTITION', true);
      },
    ).catch((err: unknown) => err);
    // 50 + 100 + 200 + 200 + 200 + 200 = 950 ms slept; another 200 would pass the 1,000 ms budget.
    expect(calls).toBe(7);
    expect(time.sleeps).toEqual([50, 100, 200, 200, 200, 200]);
    expect(failure).toMatchObject({
      code: 'BATON_KAFKA_REQUEST',
      retryable: true,
      message: expect.stringMatching(
        /kafka transport \(k:9092\): listDeadLetters failed: broker said NOT_LEADER_FOR_PARTITION \(still failing after 7 attempts over 950 ms.*have leaders/,
      ),
    });
  });

  it('recognises a retriable error wrapped by kafkajs after its own retries', () => {
    const inner = protocolError('LEADER_NOT_AVAILABLE', true);
    const wrapped = Object.assign(new Error('gave up'), {
      name: 'KafkaJSNonRetriableError',
      retriable: false,
      originalError: inner,
    });
    expect(isRetriableKafkaError(wrapped)).toBe(true);
    expect(isRetriableKafkaError(protocolError('NOT_LEADER_OR_FOLLOWER', false))).toBe(true);
    expect(isRetriableKafkaError(protocolError('INVALID_TOPIC_EXCEPTION', false))).toBe(false);
    expect(isRetriableKafkaError(new Error('plain'))).toBe(false);
    expect(isRetriableKafkaError(undefined)).toBe(false);
  });
});
