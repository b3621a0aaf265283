import { describe, expect, it } from 'vitest';
import { silentLogger } from '../logger.js';
import { PRECISE_START_MS, START_SAMPLES, StoreClock } from './store-clock.js';

/** A store whose `now()` answers `storeNow` after the local clock moved by `tripMs`. */
function setup(storeAheadMs: number) {
  let local = 1_000_000;
  let tripMs = 10;
  const store = {
    now: async (): Promise<number> => {
      local += tripMs / 2;
      const answer = local + storeAheadMs;
      local += tripMs / 2;
      return answer;
    },
  };
  const clock = new StoreClock(store, () => local);
  return {
    clock,
    advance: (ms: number) => (local += ms),
    setTrip: (ms: number) => (tripMs = ms),
    local: () => local,
  };
}

describe('StoreClock', () => {
  it('reads the local clock until the first measurement', () => {
    const { clock, local } = setup(30_000);
    expect(clock.now()).toBe(local());
    expect(clock.sample).toBeUndefined();
  });

  it("puts the store's time at the round trip's midpoint, give or take half the trip", async () => {
    const ahead = setup(30_000);
    await ahead.clock.measure();
    expect(ahead.clock.sample).toMatchObject({ offsetMs: 30_000, uncertaintyMs: 5 });
    expect(ahead.clock.now()).toBe(ahead.local() + 30_000);

    const behind = setup(-30_000);
    behind.setTrip(40);
    await behind.clock.measure();
    expect(behind.clock.sample).toMatchObject({ offsetMs: -30_000, uncertaintyMs: 20 });
    behind.advance(5_000);
    expect(behind.clock.now()).toBe(behind.local() - 30_000);
  });

  it('measures again at start while the answer is too uncertain, keeping the most certain', async () => {
    // The first answer is read by the store at once but reaches the worker 4 s later (a start-up
    // stall): alone it would put the store's clock 2 s behind. The next trips are quick.
    let local = 1_000_000;
    let calls = 0;
    const store = {
      now: async (): Promise<number> => {
        calls++;
        const answer = local;
        local += calls === 1 ? 4_000 : 2;
        return answer;
      },
    };
    const clock = new StoreClock(store, () => local);
    await clock.start(silentLogger);
    clock.stop();
    expect(calls).toBe(2);
    expect(clock.sample!.uncertaintyMs).toBeLessThanOrEqual(PRECISE_START_MS);
    expect(Math.abs(clock.now() - local)).toBeLessThanOrEqual(1);
  });

  it('gives up measuring again after a bounded number of slow answers', async () => {
    let local = 0;
    let calls = 0;
    const slow = {
      now: async (): Promise<number> => {
        calls++;
        local += 500;
        return local;
      },
    };
    const clock = new StoreClock(slow, () => local);
    await clock.start(silentLogger);
    clock.stop();
    expect(calls).toBe(START_SAMPLES);
    expect(clock.sample!.uncertaintyMs).toBe(250);
  });

  it('reads whole milliseconds, as the stores keep them, when the offset has a fraction', () => {
    const { clock, local } = setup(0);
    clock.accept({ offsetMs: 29_999.5, uncertaintyMs: 0.5, takenAt: local() });
    expect(clock.now()).toBe(local() + 30_000);
  });

  it('keeps a tighter estimate over a looser sample that agrees with it', () => {
    const { clock } = setup(0);
    clock.accept({ offsetMs: 100, uncertaintyMs: 2, takenAt: 0 });
    clock.accept({ offsetMs: 140, uncertaintyMs: 50, takenAt: 1_000 });
    expect(clock.sample).toEqual({ offsetMs: 100, uncertaintyMs: 2, takenAt: 0 });
    clock.accept({ offsetMs: 101, uncertaintyMs: 1, takenAt: 2_000 });
    expect(clock.sample).toEqual({ offsetMs: 101, uncertaintyMs: 1, takenAt: 2_000 });
  });

  it('takes a looser sample once the estimate has aged past it', () => {
    const { clock } = setup(0);
    clock.accept({ offsetMs: 100, uncertaintyMs: 2, takenAt: 0 });
    // An hour later the old estimate may have drifted by more than this sample's 30 ms.
    clock.accept({ offsetMs: 110, uncertaintyMs: 30, takenAt: 3_600_000 });
    expect(clock.sample?.offsetMs).toBe(110);
  });

  it('follows a stepped clock at once, even when the new sample is looser', () => {
    const { clock } = setup(0);
    clock.accept({ offsetMs: 100, uncertaintyMs: 1, takenAt: 0 });
    clock.accept({ offsetMs: 30_100, uncertaintyMs: 40, takenAt: 5_000 });
    expect(clock.sample).toEqual({ offsetMs: 30_100, uncertaintyMs: 40, takenAt: 5_000 });
  });

  it('keeps the last estimate when a measurement fails', async () => {
    let local = 5_000;
    let up = true;
    const clock = new StoreClock(
      { now: () => (up ? Promise.resolve(local + 500) : Promise.reject(new Error('store down'))) },
      () => local,
    );
    await clock.measure();
    up = false;
    local += 1_000;
    await expect(clock.measure()).rejects.toThrow('store down');
    expect(clock.now()).toBe(local + 500);
  });
});
