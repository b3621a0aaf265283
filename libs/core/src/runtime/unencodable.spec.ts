/**
 * Values with no JSON form: the codec raises UnencodableValueError naming the entry or message and
 * the problem's path, found by walking the value only after JSON.stringify refused it.
 */
import { describe, expect, it } from 'vitest';
import { encodeEntries, encodeJson, encodeMessage } from './codec.js';
import { UnencodableValueError } from '../author/errors.js';
import type { JournalEntry } from '../shared/journal.js';
import { findUnencodable } from './unencodable.js';

const completed = (seq: number, name: string, result: unknown): JournalEntry => ({
  type: 'ActivityCompleted',
  seq,
  name,
  result,
  attempts: 1,
  epoch: 1,
  at: 0,
});

function thrown(fn: () => unknown): UnencodableValueError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UnencodableValueError);
    return err as UnencodableValueError;
  }
  throw new Error('expected an UnencodableValueError, nothing was thrown');
}

describe('UnencodableValueError', () => {
  it('has a stable code, is never retryable, and says what to do', () => {
    const err = new UnencodableValueError('result of activity a (step #1)', 'a BigInt at $.n', {
      cause: new TypeError('x'),
    });
    expect(err).toMatchObject({
      name: 'UnencodableValueError',
      code: 'BATON_UNENCODABLE',
      retryable: false,
      what: 'result of activity a (step #1)',
      problem: 'a BigInt at $.n',
    });
    expect(err.cause).toBeInstanceOf(TypeError);
    expect(err.message).toBe(
      'result of activity a (step #1) cannot be encoded as JSON: a BigInt at $.n. Return plain JSON data ' +
        '(strings, finite numbers, booleans, null, arrays and plain objects): convert a BigInt to a string ' +
        'or number, break circular references, and make toJSON return such data',
    );
  });
});

describe('findUnencodable', () => {
  it('finds a BigInt nested in arrays and objects, with its path', () => {
    expect(findUnencodable(1n)).toBe('a BigInt at $');
    expect(findUnencodable({ a: [1, { b: [null, 2n] }] })).toBe('a BigInt at $.a[1].b[1]');
    expect(findUnencodable({ 'odd key': { x: Object(5n) } })).toBe('a BigInt at $["odd key"].x');
  });

  it('names the first problem in the order JSON.stringify meets them', () => {
    expect(findUnencodable({ first: { deep: 1n }, second: 2n })).toBe('a BigInt at $.first.deep');
    expect(findUnencodable([[3n], 4n])).toBe('a BigInt at $[0][0]');
  });

  it('finds a cycle and says where it leads back to; a shared (acyclic) object is fine', () => {
    const customer: Record<string, unknown> = { name: 'ada' };
    customer.self = customer;
    expect(findUnencodable({ order: { customer } })).toBe(
      'a circular reference at $.order.customer.self (back to $.order.customer)',
    );
    const list: unknown[] = [];
    list.push({ back: list });
    expect(findUnencodable(list)).toBe('a circular reference at $[0].back (back to $)');
    const shared = { n: 1 };
    expect(findUnencodable({ a: shared, b: shared })).toBeUndefined();
  });

  it('reports a throwing toJSON, and follows what a toJSON returns', () => {
    const bad = {
      toJSON: () => {
        throw new Error('no date');
      },
    };
    expect(findUnencodable({ when: bad })).toBe('toJSON threw at $.when: Error: no date');
    expect(findUnencodable({ wrapped: { toJSON: () => ({ inner: 9n }) } })).toBe(
      'a BigInt at $.wrapped.inner',
    );
    expect(findUnencodable({ when: new Date(0), gone: undefined, f: () => 1 })).toBeUndefined();
  });

  it('reports a throwing getter', () => {
    const value = {
      get broken(): never {
        throw new RangeError('nope');
      },
    };
    expect(findUnencodable(value)).toBe('reading $.broken threw RangeError: nope');
  });

  it('walks a value nested deeper than JSON.stringify can without overflowing', () => {
    let deep: unknown = 1n;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const problem = findUnencodable(deep)!;
    expect(problem.startsWith('a BigInt at $[0][0][0]')).toBe(true);
    expect(problem.endsWith('…')).toBe(true);
    expect(problem.length).toBeLessThan(240);
  });
});

describe('the codec on values with no JSON form', () => {
  it('encodeEntries names the entry at fault in a batch', () => {
    const err = thrown(() =>
      encodeEntries([completed(0, 'ok', 'fine'), completed(3, 'charge_card', { amount: 10n })]),
    );
    expect(err.what).toBe('result of activity charge_card (step #3)');
    expect(err.problem).toBe('a BigInt at $.amount');
    expect(err.cause).toBeInstanceOf(TypeError);
    const run = thrown(() => encodeEntries([{ type: 'RunCompleted', result: [1n], epoch: 1, at: 0 }]));
    expect(run.what).toBe('result of the workflow');
  });

  it('encodeEntries falls back to what JSON.stringify said when the walk finds nothing', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const err = thrown(() => encodeEntries([completed(1, 'deep', deep)]));
    expect(err.what).toBe('result of activity deep (step #1)');
    expect(err.problem).toMatch(/^it is nested too deeply for JSON \(RangeError: /);
  });

  it('encodeMessage names the input of a start and the payload of a signal', () => {
    const start = thrown(() =>
      encodeMessage({
        kind: 'start',
        runId: 'r1',
        workflow: 'loan',
        version: 2,
        input: { id: 1n },
        enqueuedAt: 0,
      }),
    );
    expect(start).toMatchObject({ what: 'input of run r1 (workflow loan@2)', problem: 'a BigInt at $.id' });
    const payload: Record<string, unknown> = {};
    payload.me = payload;
    const signal = thrown(() =>
      encodeMessage({ kind: 'signal', runId: 'r1', name: 'approve', payload, signalId: 's' }),
    );
    expect(signal).toMatchObject({
      what: "payload of signal 'approve' to run r1",
      problem: 'a circular reference at $.me (back to $)',
    });
  });

  it('encodeJson names what it was told, and encodes plain data as before', () => {
    expect(thrown(() => encodeJson({ n: 1n }, 'checkpoint entries')).what).toBe('checkpoint entries');
    expect(new TextDecoder().decode(encodeJson({ a: [1, 'x', null], d: undefined }))).toBe(
      '{"a":[1,"x",null]}',
    );
  });
});
