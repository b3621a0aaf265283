import { describe, expect, it } from 'vitest';
import type { InboxSignal } from '../adapter/contracts/waits.js';
import { ConfigError } from '../shared/errors.js';
import { PendingWaits, type RefusedSignal } from '../runtime/executor/pending-waits.js';
import { defineSignal } from './signal.js';
import type { StandardSchemaV1 } from './standard-schema.js';

/** Numbers only, doubled; answers asynchronously, as some validators do. */
const doubled: StandardSchemaV1<number, number> = {
  '~standard': {
    version: 1,
    vendor: 'baton-spec',
    validate: async (value) =>
      typeof value === 'number'
        ? { value: value * 2 }
        : { issues: [{ message: 'expected a number', path: ['n'] }] },
  },
};

const inbox = (...signals: Array<[string, unknown]>): InboxSignal[] =>
  signals.map(([signalId, payload], i) => ({ signalId, name: 'n', payload, receivedAt: i }));

function signalWait(waits: PendingWaits, seq: number, schema?: StandardSchemaV1): { got: unknown[] } {
  const got: unknown[] = [];
  waits.add(seq, {
    kind: 'signal',
    name: 'n',
    timeoutAt: null,
    schema,
    resolve: (v) => got.push(v),
    reject: () => {},
  });
  return { got };
}

describe('defineSignal with a schema', () => {
  it('keeps the schema, and leaves it out of a definition without one', () => {
    expect(defineSignal('n', { schema: doubled })).toEqual({ kind: 'signal', name: 'n', schema: doubled });
    expect(defineSignal<number>('n')).toEqual({ kind: 'signal', name: 'n' });
  });

  it('refuses a schema that is not a Standard Schema, naming the signal', () => {
    expect(() => defineSignal('n', { schema: { parse: () => 1 } as unknown as StandardSchemaV1 })).toThrow(
      ConfigError,
    );
    expect(() => defineSignal('n', { schema: {} as StandardSchemaV1 })).toThrow(
      /defineSignal\('n'\): schema must be a Standard Schema/,
    );
  });
});

describe('a signal wait with a schema (pending-waits.ts)', () => {
  it('skips a refused payload, reports it once, takes the next valid one as the schema output', async () => {
    const waits = new PendingWaits('run-1', new Set());
    const wait = signalWait(waits, 3, doubled);
    const refused: RefusedSignal[] = [];
    const signals = inbox(['bad', 'x'], ['good', 21]);
    await waits.checkSignals(signals, (r) => refused.push(r));
    await waits.checkSignals(signals, (r) => refused.push(r)); // checked once per execution
    expect(refused).toEqual([{ name: 'n', signalId: 'bad', seq: 3, issues: ['$.n: expected a number'] }]);
    const ready = waits.takeReady(0, signals);
    expect(ready.map((r) => r.entry)).toEqual([
      { type: 'SignalReceived', seq: 3, name: 'n', signalId: 'good', payload: 42 },
    ]);
    ready[0]!.settle();
    expect(wait.got).toEqual([42]);
    // The refused signal does not count as pending when the run suspends.
    expect(waits.settledSignalIds.sort()).toEqual(['bad', 'good']);
  });

  it('takes nothing before the payloads are checked, and nothing a schema refused', async () => {
    const waits = new PendingWaits('run-1', new Set());
    signalWait(waits, 0, doubled);
    const signals = inbox(['bad', 'x']);
    expect(waits.takeReady(0, signals)).toEqual([]);
    await waits.checkSignals(signals, () => {});
    expect(waits.takeReady(0, signals)).toEqual([]);
    expect(waits.size).toBe(1);
  });

  it('lets a wait by plain name take what a schema refused, as it always could', async () => {
    const waits = new PendingWaits('run-1', new Set());
    signalWait(waits, 0, doubled);
    const plain = signalWait(waits, 1);
    const signals = inbox(['bad', 'x']);
    await waits.checkSignals(signals, () => {});
    const ready = waits.takeReady(0, signals);
    expect(ready.map((r) => r.seq)).toEqual([1]);
    ready[0]!.settle();
    expect(plain.got).toEqual(['x']);
  });

  it('reports a validator that throws as a refusal, not a crash of the run', async () => {
    const throwing: StandardSchemaV1 = {
      '~standard': {
        version: 1,
        vendor: 'baton-spec',
        validate: () => {
          throw new Error('boom');
        },
      },
    };
    const waits = new PendingWaits('run-1', new Set());
    signalWait(waits, 0, throwing);
    const refused: RefusedSignal[] = [];
    await waits.checkSignals(inbox(['s', 1]), (r) => refused.push(r));
    expect(refused.map((r) => r.issues)).toEqual([["the schema's validate threw: boom"]]);
  });
});
