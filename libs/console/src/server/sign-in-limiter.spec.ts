/**
 * The sign-in limiter's rules on an injected clock: free tries, the doubling wait and its cap (a
 * correct token is never kept out for good), forgetting a quiet address, the bound on memory, one
 * log line per burst, and how addresses are grouped.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_SIGN_IN_LIMITS, SignInLimiter, addressKey } from './sign-in-limiter.js';

const LIMITS = {
  freeFailures: 3,
  baseDelayMs: 1_000,
  maxDelayMs: 8_000,
  forgetAfterMs: 60_000,
  maxAddresses: 4,
};

describe('the sign-in limiter', () => {
  it('lets the free wrong tokens through, then makes the address wait, doubling up to the cap', () => {
    const limiter = new SignInLimiter(LIMITS);
    const waits: (number | undefined)[] = [];
    let now = 0;
    for (let i = 0; i < 8; i++) {
      expect(limiter.waitOf('10.0.0.1', now)).toBeUndefined();
      limiter.failed('10.0.0.1', now);
      waits.push(limiter.waitOf('10.0.0.1', now));
      now += waits.at(-1) ?? 0;
    }
    // Failures 1 and 2 are free; the 3rd waits 1 s, then 2, 4, and the cap of 8 from there on.
    expect(waits).toEqual([undefined, undefined, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
    expect(limiter.waitOf('10.0.0.2', now)).toBeUndefined();
  });

  it('never keeps an address out longer than the cap after its last wrong token, however many it sent', () => {
    const limiter = new SignInLimiter(LIMITS);
    for (let i = 0; i < 5_000; i++) limiter.failed('10.0.0.1', 1_000);
    expect(limiter.waitOf('10.0.0.1', 1_000)).toBe(LIMITS.maxDelayMs);
    expect(limiter.waitOf('10.0.0.1', 1_000 + LIMITS.maxDelayMs)).toBeUndefined();
  });

  it('forgets an address quiet for forgetAfterMs: its next burst has its free tries again', () => {
    const limiter = new SignInLimiter(LIMITS);
    for (let i = 0; i < 5; i++) limiter.failed('10.0.0.1', 0);
    expect(limiter.waitOf('10.0.0.1', 0)).toBe(4_000);
    limiter.failed('10.0.0.1', LIMITS.forgetAfterMs);
    expect(limiter.waitOf('10.0.0.1', LIMITS.forgetAfterMs)).toBeUndefined();
  });

  it('keeps at most maxAddresses, forgetting the one whose last wrong token is oldest', () => {
    const limiter = new SignInLimiter(LIMITS);
    for (let n = 1; n <= 4; n++) for (let i = 0; i < 3; i++) limiter.failed(`10.0.0.${n}`, n);
    limiter.failed('10.0.0.1', 10); // the oldest becomes the newest
    for (let i = 0; i < 3; i++) limiter.failed('10.0.0.5', 11);
    expect(limiter.size).toBe(4);
    expect(limiter.waitOf('10.0.0.2', 11)).toBeUndefined(); // forgotten
    expect(limiter.waitOf('10.0.0.1', 11)).toBeGreaterThan(0);
    expect(limiter.waitOf('10.0.0.5', 11)).toBeGreaterThan(0);
  });

  it('logs one line per burst, not one per attempt', () => {
    const lines: string[] = [];
    const limiter = new SignInLimiter(DEFAULT_SIGN_IN_LIMITS, (line) => lines.push(line));
    for (let i = 0; i < 1_000; i++) limiter.failed('192.0.2.7', i);
    limiter.failed('192.0.2.8', 1_000);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^console: a wrong access token from 192\.0\.2\.7; further wrong tokens .* not logged/,
    );
    limiter.failed('192.0.2.7', 1_000 + DEFAULT_SIGN_IN_LIMITS.forgetAfterMs);
    expect(lines).toHaveLength(3);
  });

  it('counts IPv4 (mapped or not) alone and IPv6 by its /64', () => {
    expect(addressKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey(undefined)).toBe('unknown');
    const limiter = new SignInLimiter(LIMITS);
    for (let i = 0; i < 3; i++) limiter.failed(`2001:db8:1:2::${i + 1}`, 0);
    expect(limiter.waitOf('2001:db8:1:2::99', 0)).toBe(1_000);
  });
});
