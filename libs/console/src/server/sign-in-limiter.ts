/**
 * Slows down guessing of the console's access token, per client address: the sign-in form
 * (`POST /login`) and `Authorization: Bearer` requests share one count of wrong tokens per address.
 * A few wrong tokens cost nothing (a person mistyping); after them, each further wrong token makes
 * the address wait before its next try, the wait doubling up to a cap; while it waits, every token
 * it presents is answered 429 with `Retry-After`, unchecked (checking it would tell a guesser when
 * it hit). Pure logic over an injected clock, so every rule is unit-tested without a socket.
 *
 * Invariants:
 * 1. No address waits longer than {@link SignInLimits.maxDelayMs} after its last wrong token: a
 *    correct token is never locked out for good, whatever the address sent before.
 * 2. An address that sent no wrong token for {@link SignInLimits.forgetAfterMs} is forgotten: its
 *    next wrong token starts a new burst with its free tries.
 * 3. Memory is bounded: at most {@link SignInLimits.maxAddresses} addresses are kept; past that the
 *    one whose last wrong token is oldest is forgotten first (a guesser rotating addresses costs
 *    memory no more than this, and is slowed per address only).
 * 4. One log line per burst (its first wrong token), never one per attempt: a guesser cannot fill
 *    the log.
 * 5. A correct token does not clear the count: an attacker sharing an address with a script that
 *    signs in must not get its free tries back each time the script does.
 *
 * Addresses: an IPv4 address (IPv4-mapped IPv6 included) counts alone; an IPv6 address counts by
 * its /64, the block one host or home network usually gets, so that walking the addresses of one
 * block does not escape the limit.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** The limiter's settings; {@link DEFAULT_SIGN_IN_LIMITS} is what the console uses. */
export interface SignInLimits {
  /** Wrong tokens an address may send before it has to wait. */
  freeFailures: number;
  /** The wait after the first wrong token past the free ones; it doubles with each further one. */
  baseDelayMs: number;
  /** The longest wait (invariant 1). */
  maxDelayMs: number;
  /** An address quiet this long is forgotten (invariant 2). */
  forgetAfterMs: number;
  /** The most addresses kept (invariant 3). */
  maxAddresses: number;
}

/**
 * 5 free wrong tokens, then 1 s doubling to 60 s, forgotten after 15 quiet minutes, 10,000
 * addresses kept. A guesser then tries about once a minute, under 1,500 tokens a day per address,
 * against a token of at least 16 characters; a person who mistypes a few times never waits.
 */
export const DEFAULT_SIGN_IN_LIMITS: Readonly<SignInLimits> = {
  freeFailures: 5,
  baseDelayMs: 1_000,
  maxDelayMs: 60_000,
  forgetAfterMs: 15 * 60_000,
  maxAddresses: 10_000,
};

/** What the limiter knows of one address. */
interface AddressState {
  /** Wrong tokens in the current burst. */
  failures: number;
  lastFailureAt: number;
  /** Tokens from this address are answered 429 until then. */
  blockedUntil: number;
}

/** The key an address is counted under: IPv4 alone, IPv6 by its /64, anything else as given. */
export function addressKey(address: string | undefined): string {
  if (address === undefined || address === '') return 'unknown';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return address;
  const [head = '', tail] = address.toLowerCase().split('%')[0]!.split('::');
  const front = head === '' ? [] : head.split(':');
  const back = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

export class SignInLimiter {
  /** Insertion order is the order of last wrong tokens, oldest first (re-inserted on each). */
  private readonly addresses = new Map<string, AddressState>();

  constructor(
    private readonly limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  /** How many addresses are kept (tests of invariant 3). */
  get size(): number {
    return this.addresses.size;
  }

  /**
   * Before a token from `address` is checked: undefined to go ahead, or how long it must still
   * wait (answer 429 with Retry-After, and do not check the token).
   */
  waitOf(address: string, now: number): number | undefined {
    const state = this.addresses.get(addressKey(address));
    if (state === undefined || now >= state.blockedUntil) return undefined;
    return state.blockedUntil - now;
  }

  /** A wrong token from `address`: counts it, and sets the wait once past the free ones. */
  failed(address: string, now: number): void {
    const key = addressKey(address);
    this.forgetQuiet(now);
    let state = this.addresses.get(key);
    this.addresses.delete(key);
    if (state === undefined) {
      state = { failures: 0, lastFailureAt: now, blockedUntil: 0 };
      const { freeFailures, baseDelayMs, maxDelayMs, forgetAfterMs } = this.limits;
      this.log(
        `console: a wrong access token from ${key}; further wrong tokens from it are not logged ` +
          `until it has been quiet ${Math.round(forgetAfterMs / 60_000)} min (after ${freeFailures} ` +
          `it waits ${baseDelayMs / 1000} s before each try, doubling to ${maxDelayMs / 1000} s: HTTP 429)`,
      );
    }
    state.failures += 1;
    state.lastFailureAt = now;
    const past = state.failures - this.limits.freeFailures;
    if (past >= 0) {
      // 2 ** past overflows to Infinity for a long burst, which min() caps.
      state.blockedUntil = now + Math.min(this.limits.maxDelayMs, this.limits.baseDelayMs * 2 ** past);
    }
    this.addresses.set(key, state);
    while (this.addresses.size > this.limits.maxAddresses) {
      const oldest = this.addresses.keys().next().value as string;
      this.addresses.delete(oldest);
    }
  }

  /** Forgets the addresses quiet for `forgetAfterMs`: the oldest come first (insertion order). */
  private forgetQuiet(now: number): void {
    for (const [key, state] of this.addresses) {
      if (now - state.lastFailureAt < this.limits.forgetAfterMs) return;
      this.addresses.delete(key);
    }
  }
}
