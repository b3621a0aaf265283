import { afterEach, describe, expect, it } from 'vitest';
import { defineWorkflow } from '@baton/core';
import { fleet, until, type Fleet } from './fleet.spec-helper.js';
import { bindLogger, silentLogger, type Logger } from './logger.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

type Line = { level: string; obj: Record<string, unknown>; msg?: string };

/** A logger without `child`, as an embedding application might pass. */
function recording(lines: Line[]): Logger {
  const at =
    (level: string) =>
    (obj: object, msg?: string): void =>
      void lines.push({ level, obj: obj as Record<string, unknown>, msg });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('bindLogger', () => {
  it("adds its bindings to every line, the line's own fields winning, through child() when there is one", () => {
    const lines: Line[] = [];
    const bound = bindLogger(recording(lines), { runId: 'r1', workflow: 'w' });
    bound.warn({ runId: 'r2', err: 'x' }, 'one');
    bound.child!({ span_id: 's' }).info({}, 'two');
    expect(lines).toEqual([
      { level: 'warn', obj: { runId: 'r2', workflow: 'w', err: 'x' }, msg: 'one' },
      { level: 'info', obj: { runId: 'r1', workflow: 'w', span_id: 's' }, msg: 'two' },
    ]);
    const children: object[] = [];
    const withChild: Logger = { ...silentLogger, child: (b) => (children.push(b), silentLogger) };
    bindLogger(withChild, { runId: 'r3' });
    expect(children).toEqual([{ runId: 'r3' }]);
    expect(bindLogger(silentLogger, { runId: 'r4' })).toBe(silentLogger);
  });
});

describe('dead letters in the log (memory adapters)', () => {
  it('logs each once, with the run id the message names, even one that cannot be decoded', async () => {
    const wf = defineWorkflow({ name: 'logged', version: 1, run: async () => 'done' });
    const lines: Line[] = [];
    current = fleet({ workflows: [wf], logger: recording(lines) });
    await current.spawn();
    const encode = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));
    // Named but undecodable (no kind), a bad run id, and not JSON at all.
    await current.transport.runQueue.enqueue(encode({ v: 1, runId: 'named-run-7' }));
    await current.transport.runQueue.enqueue(encode({ v: 1, runId: 'not a run id!' }));
    await current.transport.runQueue.enqueue(new TextEncoder().encode('\u0000 not json'));
    await until(
      () => lines.filter((l) => l.msg === 'message dead-lettered').length === 3,
      5_000,
      'three dead letters',
    );
    const dead = lines.filter((l) => /dead-letter/.test(l.msg ?? ''));
    expect(dead).toHaveLength(3);
    // Handled side by side: in any order.
    expect(dead.map((l) => [l.level, l.obj.code, l.obj.runId ?? null]).sort()).toEqual(
      [
        ['warn', 'unparseable', 'named-run-7'],
        ['warn', 'unparseable', null],
        ['warn', 'unparseable', null],
      ].sort(),
    );
    const events = current.workers[0]!.events.filter((e) => e.type === 'dead-lettered');
    expect(events.map((e) => (e.type === 'dead-lettered' ? (e.runId ?? null) : 'other')).sort()).toEqual(
      ['named-run-7', null, null].sort(),
    );
  });
});
