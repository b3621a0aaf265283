/**
 * SharedMembership's reading rhythm (invariant 5) against a scripted store: with a store that
 * tells of new lists, a reader in a large fleet reads rarely, yet reads at its next period after
 * being told, and still finds a free turn; with a store that does not tell, it reads every period.
 * The stores themselves (a real notification on Postgres) are covered by the presence conformance
 * section and shared-membership.int.spec.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PublishedMembership, ScanTurn } from '@baton/core/adapter';
import {
  MAX_POLL_PERIODS,
  POLLS_PER_PERIOD,
  pollPeriods,
  SharedMembership,
  type MembershipStore,
} from './shared-membership.js';

const PERIOD_MS = 250;

// The reader's clock is Date.now(): each period moves it on by PERIOD_MS, whatever the machine's load.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(1_000_000);
});
afterEach(() => {
  vi.useRealTimers();
});

/** A published list of `fleet` members, read from memory; counts the reads. */
function scripted(fleet: number, tells: boolean) {
  const state = {
    generation: 1,
    members: Array.from({ length: fleet }, (_, i) => `w-${String(i).padStart(4, '0')}`),
    turnFree: false,
    reads: 0,
    listener: undefined as (() => void) | undefined,
  };
  const store: MembershipStore = {
    live: () => Promise.resolve(state.members),
    publishMembership: () => Promise.resolve(state.generation),
    readMembership: (known: number): Promise<PublishedMembership> => {
      state.reads += 1;
      return Promise.resolve({
        generation: state.generation,
        ...(known !== state.generation && { members: state.members }),
        turnFree: state.turnFree,
      });
    },
    takeScanTurn: (): Promise<ScanTurn> => Promise.resolve({ held: state.turnFree, workers: fleet }),
    ...(tells && {
      watchMembership: (_id: string, listener: () => void) => {
        state.listener = listener;
        return () => {
          state.listener = undefined;
        };
      },
    }),
  };
  return { state, store };
}

/** Calls members() once per period for `periods` periods, as the Kafka transport does. */
async function periods(membership: SharedMembership, count: number): Promise<string[]> {
  let list: string[] = [];
  for (let i = 0; i < count; i++) {
    list = await membership.members(PERIOD_MS);
    vi.setSystemTime(Date.now() + PERIOD_MS);
  }
  return list;
}

describe('pollPeriods', () => {
  it('keeps the fleet at about POLLS_PER_PERIOD reads per period, every period in a small fleet', () => {
    expect(pollPeriods(1)).toBe(1);
    expect(pollPeriods(POLLS_PER_PERIOD)).toBe(1);
    expect(pollPeriods(50)).toBe(Math.ceil(50 / POLLS_PER_PERIOD));
    expect(pollPeriods(100_000)).toBe(MAX_POLL_PERIODS);
    for (const fleet of [9, 50, 200, 320])
      expect(fleet / pollPeriods(fleet)).toBeLessThanOrEqual(POLLS_PER_PERIOD);
  });
});

describe('SharedMembership, reader', () => {
  it('reads every period when the store does not tell', async () => {
    const { state, store } = scripted(200, false);
    const reader = new SharedMembership(store, 'w-0001');
    await periods(reader, 10);
    expect(state.reads).toBe(10);
  });

  it('in a large fleet with a store that tells: reads rarely, at once when told, and finds a free turn', async () => {
    const { state, store } = scripted(200, true);
    // The poll lands at the end of its spread (1.5 intervals): the longest a reader goes unasked.
    const reader = new SharedMembership(store, 'w-0001', () => 1);
    expect(state.listener).toBeDefined();
    expect(await periods(reader, 10)).toHaveLength(200);
    // The first call reads; the next poll is 1.5 × 25 periods away.
    expect(state.reads).toBe(1);

    // A new list is published and the store tells: read at the next period.
    state.generation = 2;
    state.members = state.members.slice(1);
    state.listener!();
    expect(await periods(reader, 1)).toHaveLength(199);
    expect(state.reads).toBe(2);
    await periods(reader, 5);
    expect(state.reads).toBe(2);

    // The publisher died: its turn runs out. The poll finds it within its interval and takes it.
    state.turnFree = true;
    const interval = 1.5 * pollPeriods(199);
    let n = 0;
    while (!reader.publishing && n < interval + 5) {
      await periods(reader, 1);
      n += 1;
    }
    expect(reader.publishing).toBe(true);
    expect(state.reads).toBe(3);

    reader.close();
    expect(state.listener).toBeUndefined();
  });
});
