import { describe, expect, it } from 'vitest';
import { decodeMessage, encodeMessage } from '../runtime/codec.js';
import type { Delivery, FetchOptions } from './contracts/transport.js';
import { ConfigError } from '../shared/errors.js';
import { PARKED_WAIT_MS, PriorityLanes } from './priority-lanes.js';
import {
  PRIORITY_CYCLE,
  RUN_PRIORITIES,
  checkRunPriority,
  laneFor,
  laneLevels,
  planClaims,
  type RunPriority,
} from './priority.js';
import { switchSetting } from './settings.js';
import { startMessage } from '../runtime/run-messages.js';

describe('checkRunPriority', () => {
  it('accepts the three levels and undefined', () => {
    for (const level of RUN_PRIORITIES) expect(checkRunPriority(level, 'test')).toBe(level);
    expect(checkRunPriority(undefined, 'test')).toBeUndefined();
  });

  it('refuses anything else with a ConfigError naming the value, the caller and the levels', () => {
    for (const bad of ['urgent', 'HIGH', '', 1, null, {}]) {
      expect(() => checkRunPriority(bad, 'client.start')).toThrow(ConfigError);
    }
    expect(() => checkRunPriority('urgent', 'client.start')).toThrow(
      "client.start: priority \"urgent\" is not a run priority; use one of 'high', 'normal', 'low' (default 'normal')",
    );
  });
});

describe('opt-in lanes', () => {
  it('reads the normal lane alone without priorityLanes, and all three with them, normal first', () => {
    expect(laneLevels(false)).toEqual(['normal']);
    expect(laneLevels(true)).toEqual(['normal', 'high', 'low']);
  });

  it('refuses high or low without the lanes, naming the option, and lets normal or none through', () => {
    expect(laneFor(undefined, false, 'bus: enqueue', 'X_LANES')).toBe('normal');
    expect(laneFor('normal', false, 'bus: enqueue', 'X_LANES')).toBe('normal');
    for (const level of ['high', 'low'] as const) {
      expect(laneFor(level, true, 'bus: enqueue', 'X_LANES')).toBe(level);
      expect(() => laneFor(level, false, 'bus: enqueue', 'X_LANES')).toThrow(ConfigError);
      expect(() => laneFor(level, false, 'bus: enqueue', 'X_LANES')).toThrow(
        new RegExp(
          `bus: enqueue: priority '${level}' needs the transport's priority lanes, which are off; turn them on with X_LANES`,
        ),
      );
    }
    expect(() => laneFor('urgent', true, 'bus: enqueue', 'X_LANES')).toThrow(/not a run priority/);
  });

  it('reads a switch variable as true or false, refusing anything else naming the variable', () => {
    const setting = switchSetting('BATON_X_LANES', 'test');
    for (const on of ['true', 'TRUE', '1']) expect(setting.parse(on, 'BATON_X_LANES')).toBe(true);
    for (const off of ['false', 'False', '0']) expect(setting.parse(off, 'BATON_X_LANES')).toBe(false);
    expect(() => setting.parse('yes', 'BATON_X_LANES')).toThrow("BATON_X_LANES is 'yes'; use true or false");
  });
});

describe('planClaims', () => {
  it('gives high 5, normal 2 and low 1 of every 8 claims, from any slot', () => {
    for (let position = 0; position < PRIORITY_CYCLE.length; position++) {
      expect(planClaims(position, 8)).toEqual({ high: 5, normal: 2, low: 1 });
    }
  });

  it('gives the slots of a skipped level to the highest level not skipped', () => {
    expect(planClaims(0, 8, new Set<RunPriority>(['high']))).toEqual({ high: 0, normal: 7, low: 1 });
    expect(planClaims(0, 8, new Set<RunPriority>(['low']))).toEqual({ high: 6, normal: 2, low: 0 });
  });
});

describe('startMessage', () => {
  it('encodes a start without a priority, or at normal, exactly as before priorities', () => {
    const fields = { runId: 'r1', workflow: 'w', version: 1, input: { a: 1 }, enqueuedAt: 5 };
    const before = encodeMessage({ kind: 'start', ...fields });
    for (const message of [startMessage(fields), startMessage({ ...fields, priority: 'normal' })]) {
      expect(message.data).toEqual(before);
      expect(message.options).toEqual({ msgId: 'start:r1', key: 'r1' });
    }
  });

  it('puts a high or low start in its lane and says so in the message', () => {
    const message = startMessage({ runId: 'r1', workflow: 'w', version: 1, priority: 'low' });
    expect(message.options.priority).toBe('low');
    expect(decodeMessage(message.data)).toMatchObject({ kind: 'start', priority: 'low' });
    expect(() =>
      startMessage({ runId: 'r1', workflow: 'w', version: 1, priority: 'top' as RunPriority }),
    ).toThrow(ConfigError);
  });
});

/** A lane of ready messages, named `<level>-<n>`, that counts how often it was asked. */
function lane(
  level: RunPriority,
  count: number,
): { fetch(o: FetchOptions): Promise<Delivery[]>; asked: number } {
  const waiting = Array.from({ length: count }, (_, i) => `${level}-${i}`);
  const state = {
    asked: 0,
    fetch: async (options: FetchOptions): Promise<Delivery[]> => {
      state.asked++;
      return waiting.splice(0, options.max).map((name) => ({
        data: new TextEncoder().encode(name),
        headers: {},
        deliveryCount: 1,
        ack: async () => {},
        nak: async () => {},
      }));
    },
  };
  return state;
}

const names = (batch: Delivery[]): string[] => batch.map((d) => new TextDecoder().decode(d.data));

describe('PriorityLanes', () => {
  it('claims one at a time by the cycle: high, high, high, normal, high, high, normal, low', async () => {
    const lanes = { high: lane('high', 20), normal: lane('normal', 20), low: lane('low', 20) };
    const fetcher = new PriorityLanes({
      high: lanes.high.fetch,
      normal: lanes.normal.fetch,
      low: lanes.low.fetch,
    });
    const order: string[] = [];
    for (let i = 0; i < 16; i++) order.push(...names(await fetcher.fetch({ max: 1, expiresMs: 0 })));
    expect(order.map((n) => n.split('-')[0])).toEqual([...PRIORITY_CYCLE, ...PRIORITY_CYCLE]);
  });

  it('fills a batch by the cycle, highest level first, and the short levels from the others', async () => {
    const lanes = { high: lane('high', 2), normal: lane('normal', 20), low: lane('low', 20) };
    const fetcher = new PriorityLanes({
      high: lanes.high.fetch,
      normal: lanes.normal.fetch,
      low: lanes.low.fetch,
    });
    const batch = names(await fetcher.fetch({ max: 8, expiresMs: 0 }));
    expect(batch).toEqual([
      'high-0',
      'high-1',
      'normal-0',
      'normal-1',
      'normal-2',
      'normal-3',
      'normal-4',
      'low-0',
    ]);
  });

  it('leaves a lane found empty unasked for emptyRecheckMs while another lane supplies the fetches', async () => {
    const lanes = { high: lane('high', 0), normal: lane('normal', 100), low: lane('low', 0) };
    const fetcher = new PriorityLanes(
      { high: lanes.high.fetch, normal: lanes.normal.fetch, low: lanes.low.fetch },
      60_000,
    );
    for (let i = 0; i < 10; i++) expect(await fetcher.fetch({ max: 4, expiresMs: 0 })).toHaveLength(4);
    expect(lanes.high.asked).toBe(1);
    expect(lanes.low.asked).toBe(1);
    // Twice in each of the first two fetches (once for its own slots, once for the slots of the
    // lane found empty there), once in every later one.
    expect(lanes.normal.asked).toBe(12);
  });
});

/** A lane fed by the test: `push` makes a message ready; waits resolve when one arrives. */
function feedLane(level: RunPriority) {
  const ready: string[] = [];
  const waits: Array<(batch: Delivery[]) => void> = [];
  const naked: string[] = [];
  let waitsStarted = 0;
  const deliver = (name: string): Delivery => ({
    data: new TextEncoder().encode(name),
    headers: {},
    deliveryCount: 1,
    ack: async () => {},
    nak: async () => {
      naked.push(name);
    },
  });
  const fetch = (options: FetchOptions): Promise<Delivery[]> => {
    if (ready.length > 0 || options.expiresMs <= 0) {
      return Promise.resolve(ready.splice(0, options.max).map(deliver));
    }
    waitsStarted++;
    return new Promise((resolve) => {
      const done = (batch: Delivery[]): void => {
        clearTimeout(timer);
        const i = waits.indexOf(done);
        if (i >= 0) waits.splice(i, 1);
        resolve(batch);
      };
      const timer = setTimeout(() => done([]), options.expiresMs);
      options.signal?.addEventListener('abort', () => done([]), { once: true });
      waits.push(done);
    });
  };
  return {
    fetch,
    naked,
    get waitsStarted() {
      return waitsStarted;
    },
    push(n: number) {
      for (let i = 0; i < n; i++) ready.push(`${level}-${ready.length}-${Date.now()}`);
      const wait = waits[0];
      if (wait !== undefined) wait(ready.splice(0, 1).map(deliver));
    },
  };
}

describe('PriorityLanes waiting', () => {
  const make = () => {
    const lanes = { high: feedLane('high'), normal: feedLane('normal'), low: feedLane('low') };
    const fetcher = new PriorityLanes({
      high: lanes.high.fetch,
      normal: lanes.normal.fetch,
      low: lanes.low.fetch,
    });
    return { lanes, fetcher };
  };

  it('waits on every lane and returns what the first lane to deliver brings', async () => {
    const { lanes, fetcher } = make();
    const waiting = fetcher.fetch({ max: 5, expiresMs: 5_000 });
    await new Promise((r) => setTimeout(r, 10));
    lanes.low.push(1);
    expect(names(await waiting)).toHaveLength(1);
    fetcher.close();
  });

  it('keeps the other lanes waiting for the next fetch instead of starting new waits', async () => {
    const { lanes, fetcher } = make();
    for (let i = 0; i < 5; i++) {
      const waiting = fetcher.fetch({ max: 1, expiresMs: 5_000 });
      await new Promise((r) => setTimeout(r, 5));
      lanes.normal.push(1);
      expect(await waiting).toHaveLength(1);
    }
    // One wait each on high and low for all five fetches; normal waited again after each delivery.
    expect(lanes.high.waitsStarted).toBe(1);
    expect(lanes.low.waitsStarted).toBe(1);
    expect(lanes.normal.waitsStarted).toBe(5);
    fetcher.close();
  });

  it('holds what a kept wait brings for the next fetch, and naks it when no fetch comes', async () => {
    const { lanes, fetcher } = make();
    const waiting = fetcher.fetch({ max: 1, expiresMs: 5_000 });
    await new Promise((r) => setTimeout(r, 5));
    lanes.normal.push(1);
    await waiting;
    lanes.high.push(1); // taken by the kept wait on high, with no fetch waiting
    const next = names(await fetcher.fetch({ max: 1, expiresMs: 0 }));
    expect(next[0]).toMatch(/^high-/);

    const again = fetcher.fetch({ max: 1, expiresMs: 5_000 });
    await new Promise((r) => setTimeout(r, 5));
    lanes.normal.push(1);
    await again;
    lanes.low.push(1);
    await new Promise((r) => setTimeout(r, PARKED_WAIT_MS + 50));
    expect(lanes.low.naked).toHaveLength(1);
    fetcher.close();
  });

  it('ends a waiting fetch with an empty batch on close', async () => {
    const { fetcher } = make();
    const waiting = fetcher.fetch({ max: 1, expiresMs: 60_000 });
    await new Promise((r) => setTimeout(r, 5));
    fetcher.close();
    expect(await waiting).toEqual([]);
  });
});
