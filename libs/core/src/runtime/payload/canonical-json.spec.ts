import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth by code unit, integer-like keys included', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null }, 10: 'x', 9: 'y', B: 0 })).toBe(
      '{"10":"x","9":"y","B":0,"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('gives the same text for the same value however it was built', () => {
    const built = { status: 'running', seq: 2, entries: [{ type: 'TimerFired', seq: 1 }] };
    const parsed = JSON.parse(
      '{"entries":[{"seq":1,"type":"TimerFired"}],"seq":2,"status":"running"}',
    ) as unknown;
    expect(canonicalJson(parsed)).toBe(canonicalJson(built));
  });

  it('follows JSON.stringify for values JSON cannot hold, so a value and its parsed copy agree', () => {
    const value = {
      gone: undefined,
      fn: () => 1,
      list: [undefined, () => 1, Number.NaN, -0, 1e21, , 'é\u2028"'], // eslint-disable-line no-sparse-arrays
      when: new Date(0),
      inf: Number.POSITIVE_INFINITY,
    };
    const text = canonicalJson(value);
    expect(text).toBe(
      '{"inf":null,"list":[null,null,null,0,1e+21,null,"é\u2028\\""],"when":"1970-01-01T00:00:00.000Z"}',
    );
    expect(canonicalJson(JSON.parse(JSON.stringify(value)))).toBe(text);
  });

  it('throws on cycles and BigInt, and on a value with no JSON form', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/cyclic/);
    expect(() => canonicalJson({ n: 1n })).toThrow(/BigInt/);
    expect(() => canonicalJson(undefined)).toThrow(/no JSON form/);
    // A repeated (not cyclic) reference is fine.
    const shared = { a: 1 };
    expect(canonicalJson([shared, shared])).toBe('[{"a":1},{"a":1}]');
  });
});
