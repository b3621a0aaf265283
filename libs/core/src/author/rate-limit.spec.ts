/** defineRateLimit and an activity's rateLimit: bad limits and names refused up front, with what to do. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../shared/errors.js';
import { defineRateLimit, rateLimitRequest } from './rate-limit.js';
import { defineActivity } from './workflow.js';

describe('defineRateLimit', () => {
  it('turns per into milliseconds and keeps the name', () => {
    expect(defineRateLimit({ name: 'bureau', limit: 100, per: '1s' })).toEqual({
      kind: 'rate-limit',
      name: 'bureau',
      limit: 100,
      perMs: 1000,
    });
    expect(defineRateLimit({ name: 'daily', limit: 10_000, per: '1d' }).perMs).toBe(86_400_000);
  });

  it.each([
    [{ name: 'x', limit: 0, per: '1s' }, /rate limit x: limit 0 is not an integer in 1\.\.10000; e\.g\./],
    [{ name: 'x', limit: 2.5, per: '1s' }, /limit 2.5 is not an integer/],
    [{ name: 'x', limit: 10_001, per: '1s' }, /limit 10001/],
    [{ name: 'x', limit: 5, per: '2d' }, /per 172800000 ms is not .*(one day)/],
    [{ name: 'x', limit: 5, per: '0ms' }, /per 0 ms/],
    [{ name: 'x', limit: 5, per: '1 sec' }, /rate limit x: per '1 sec' is not a duration/],
    [{ name: 'a b', limit: 5, per: '1s' }, /rate limit name "a b" is invalid/],
    [{ name: 'a|b', limit: 5, per: '1s' }, /is invalid/],
  ])('refuses %j', (spec, message) => {
    expect(() => defineRateLimit(spec as never)).toThrow(ConfigError);
    expect(() => defineRateLimit(spec as never)).toThrow(message);
  });
});

describe("an activity's rateLimit", () => {
  const bureau = defineRateLimit({ name: 'bureau', limit: 10, per: '1s' });
  const run = (input: { customer: string }) => input.customer;

  it('takes a limit, or a limit and a key function', () => {
    expect(defineActivity({ name: 'a', rateLimit: bureau, run }).rateLimit).toBe(bureau);
    const keyed = defineActivity({ name: 'b', rateLimit: { limit: bureau, key: (i) => i.customer }, run });
    expect(rateLimitRequest('b', keyed.rateLimit!, { customer: 'acme' })).toEqual({
      name: 'bureau',
      key: 'acme',
      limit: 10,
      perMs: 1000,
    });
    expect(rateLimitRequest('a', bureau, { customer: 'acme' }).key).toBe('');
  });

  it.each([
    [
      'bureau',
      /rateLimit must be a limit made with defineRateLimit.*got the string 'bureau'.*not by its name/,
    ],
    [null, /got null/],
    [{ name: 'bureau', limit: 10, per: '1s' }, /got \{"name":"bureau"/],
    [{ limit: 'bureau', key: () => 'k' }, /rateLimit must be/],
    [{ limit: bureau, key: 'customer' }, /rateLimit must be/],
  ])('refuses %j, never running unlimited', (rateLimit, message) => {
    expect(() => defineActivity({ name: 'c', rateLimit: rateLimit as never, run })).toThrow(message);
  });

  it('refuses a key that is empty, too long or not a string, naming the activity and the limit', () => {
    const keyed = { limit: bureau, key: (i: { customer: unknown }) => i.customer as string };
    expect(() => rateLimitRequest('d', keyed, { customer: '' })).toThrow(
      /activity d: rateLimit.key returned "" for limit bureau; it must return a string of 1-256 characters/,
    );
    expect(() => rateLimitRequest('d', keyed, { customer: 'k'.repeat(257) })).toThrow(/1-256/);
    expect(() => rateLimitRequest('d', keyed, { customer: 7 })).toThrow(/returned 7/);
  });
});
