import { describe, expect, it } from 'vitest';
import type { Counter } from '@opentelemetry/api';
import type { WorkerInstruments } from '@baton/telemetry';
import { DataLossWatch } from './data-loss.js';
import type { WorkerEvent } from './events.js';
import { silentLogger } from './logger.js';

function setup() {
  let now = 1_000_000;
  let counted = 0;
  const counter = { add: (n: number) => (counted += n) } as unknown as Counter;
  const events: WorkerEvent[] = [];
  const errors: Array<{ obj: object; msg?: string }> = [];
  const watch = new DataLossWatch(
    { ...silentLogger, error: (obj, msg) => errors.push({ obj, msg }) },
    { storeDataLosses: counter } as WorkerInstruments,
    (event) => events.push(event),
    () => now,
  );
  return { watch, events, errors, advance: (ms: number) => (now += ms), counted: () => counted };
}

describe('DataLossWatch', () => {
  it('names the runs in flight and those aborted shortly before, once each, and what to do', () => {
    const { watch, events, errors, counted } = setup();
    watch.noteAborted('run-b');
    const report = watch.report({ store: 'redis', reason: 'its marker key is gone' }, ['run-a', 'run-b']);
    expect(report.runIds).toEqual(['run-a', 'run-b']);
    expect(counted()).toBe(1);
    expect(events).toEqual([
      {
        type: 'store-data-lost',
        store: 'redis',
        reason: 'its marker key is gone',
        runIds: ['run-a', 'run-b'],
      },
    ]);
    expect(errors[0]?.obj).toMatchObject({ lostRuns: 2, runIds: ['run-a', 'run-b'] });
    expect(errors[0]?.msg).toContain('its marker key is gone; 2 run(s) this worker held are gone');
    expect(errors[0]?.msg).toContain('appendonly yes');
    expect(watch.last).toEqual(report);
  });

  it('forgets aborted runs after a minute, and after they were reported', () => {
    const { watch, advance } = setup();
    watch.noteAborted('old');
    advance(61_000);
    watch.noteAborted('recent');
    expect(watch.report({ store: 'redis', reason: 'gone' }, []).runIds).toEqual(['recent']);
    expect(watch.report({ store: 'redis', reason: 'gone again' }, []).runIds).toEqual([]);
  });
});
