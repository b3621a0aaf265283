/**
 * Run streams on memory adapters (the buses: libs/testing's run-streams conformance section and
 * tests/system's run-streams crash spec): workflow and activity writes reach a reader once each, in
 * order; a crash mid-activity leaves the workflow's chunks unrepeated and puts a reset before the
 * re-run attempt's chunks; a reader resumes after the last sequence number it saw.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineActivity, defineWorkflow, type StreamItem } from '@baton/core';
import { fleet, until, type Fleet } from './fleet.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

async function collect<T>(items: AsyncIterable<StreamItem<T>>): Promise<StreamItem<T>[]> {
  const seen: StreamItem<T>[] = [];
  for await (const item of items) seen.push(item);
  return seen;
}

function tokenWorkflow(gate: { open: boolean; started: number; release?: () => void }) {
  const speak = defineActivity({
    name: 'speak',
    run: async (words: string[], io) => {
      const out = io.stream<string>('tokens');
      await out.write(words[0]!);
      await out.write(words[1]!);
      if (!gate.open) {
        gate.started++;
        await new Promise<void>((resolve) => (gate.release = resolve));
      }
      for (const word of words.slice(2)) await out.write(word);
      return words.length;
    },
  });
  return defineWorkflow({
    name: 'streamer',
    version: 1,
    run: async (ctx, words: string[]) => {
      const progress = ctx.stream<{ phase: string }>('progress');
      progress.write({ phase: 'start' });
      const count = await ctx.run(speak, words);
      progress.write({ phase: 'spoken' });
      progress.close();
      ctx.stream<string>('tokens').close();
      return count;
    },
  });
}

describe('run streams (memory adapters)', () => {
  it('delivers workflow and activity chunks once each, in order, and ends at the close', async () => {
    const gate = { open: true, started: 0 };
    const workflow = tokenWorkflow(gate);
    const f = (current = fleet({ workflows: [workflow] }));
    await f.spawn();
    const run = await f.client.start(workflow, ['a', 'b', 'c', 'd']);
    const tokens = collect(f.client.stream<string>(run.runId, 'tokens'));
    expect(await run.result({ timeoutMs: 5_000 })).toBe(4);

    const items = await tokens;
    expect(items.map((i) => i.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(items.slice(0, 4).map((i) => (i.kind === 'chunk' ? i.value : i.kind))).toEqual([
      'a',
      'b',
      'c',
      'd',
    ]);
    expect(items[0]).toMatchObject({ kind: 'chunk', step: 0, attempt: 1 });
    expect(items.at(-1)).toEqual({ seq: 5, kind: 'close' });
    const progress = await collect(f.client.stream<{ phase: string }>(run.runId, 'progress'));
    expect(progress).toEqual([
      { seq: 1, kind: 'chunk', value: { phase: 'start' } },
      { seq: 2, kind: 'chunk', value: { phase: 'spoken' } },
      { seq: 3, kind: 'close' },
    ]);
    expect(await f.client.streamNames(run.runId)).toEqual(['progress', 'tokens']);
    // Resuming after seq 2 gives the rest only.
    const rest = await collect(f.client.stream<string>(run.runId, 'tokens', { from: 3 }));
    expect(rest.map((i) => i.seq)).toEqual([3, 4, 5]);
  });

  it('after a crash mid-activity: the workflow chunk is not repeated, the re-run attempt starts with a reset', async () => {
    const gate: { open: boolean; started: number; release?: () => void } = { open: false, started: 0 };
    const workflow = tokenWorkflow(gate);
    const f = (current = fleet({ workflows: [workflow] }));
    const a = await f.spawn();
    const run = await f.client.start(workflow, ['one', 'two', 'three']);
    // A reader follows the stream from before the crash to the end.
    const live = collect(f.client.stream<string>(run.runId, 'tokens', { pollMs: 20 }));
    await until(() => gate.started === 1, 5_000, 'the activity to block on worker A');
    a.crash();
    gate.open = true;
    await f.spawn();
    expect(await run.result({ timeoutMs: 10_000 })).toBe(3);

    const items = await live;
    expect(items.map((i) => i.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(items.map((i) => (i.kind === 'chunk' ? i.value : i.kind))).toEqual([
      'one',
      'two',
      'reset',
      'one',
      'two',
      'three',
      'close',
    ]);
    expect(items[2]).toEqual({ seq: 3, kind: 'reset', step: 0, attempt: 1 });
    const progress = await collect(f.client.stream(run.runId, 'progress'));
    // 'start' was written by worker A and replayed by B: once.
    expect(progress.map((i) => (i.kind === 'chunk' ? i.value : i.kind))).toEqual([
      { phase: 'start' },
      { phase: 'spoken' },
      'close',
    ]);
  });

  it('refuses a bad stream name in the workflow and a write after close in an activity', async () => {
    const closer = defineActivity({
      name: 'closer',
      run: async (_: null, io) => {
        const s = io.stream('out');
        await s.write(1);
        await s.close();
        return s.write(2).then(
          () => 'written',
          (err: Error & { code?: string }) => err.code,
        );
      },
    });
    const workflow = defineWorkflow({
      name: 'bad-streams',
      version: 1,
      run: async (ctx) => {
        let refused = '';
        try {
          ctx.stream('no spaces');
        } catch (err) {
          refused = (err as Error).message;
        }
        return { refused, late: await ctx.run(closer, null) };
      },
    });
    const f = (current = fleet({ workflows: [workflow] }));
    await f.spawn();
    const run = await f.client.start(workflow, undefined);
    const result = (await run.result({ timeoutMs: 5_000 })) as { refused: string; late: string };
    expect(result.refused).toMatch(/run stream name 'no spaces' is not allowed/);
    expect(result.late).toBe('BATON_STREAM_CLOSED');
    const items = await collect(f.client.stream(run.runId, 'out'));
    expect(items).toEqual([
      { seq: 1, kind: 'chunk', value: 1, step: 0, attempt: 1 },
      { seq: 2, kind: 'close' },
    ]);
  });

  it('on a transport without run streams, ctx.stream throws BATON_UNSUPPORTED where it is called', async () => {
    const workflow = defineWorkflow({
      name: 'no-streams',
      version: 1,
      run: async (ctx) => {
        try {
          ctx.stream('out');
          return 'streamed';
        } catch (err) {
          return (err as Error & { code?: string }).code;
        }
      },
    });
    const f = (current = fleet({ workflows: [workflow] }, (t) => ({
      name: t.name,
      connect: () => t.connect(),
      close: () => t.close(),
      runQueue: t.runQueue,
      journal: t.journal,
      deadLetters: t.deadLetters,
    })));
    await f.spawn();
    const run = await f.client.start(workflow, undefined);
    expect(await run.result({ timeoutMs: 5_000 })).toBe('BATON_UNSUPPORTED');
  });

  it('reads a chain (continue-as-new) as one stream under the first run’s id, numbered on', async () => {
    const workflow = defineWorkflow({
      name: 'chained-streamer',
      version: 1,
      run: async (ctx, part: number) => {
        const out = ctx.stream<string>('out');
        out.write(`p${part}a`);
        out.write(`p${part}b`);
        if (part < 3) return ctx.continueAsNew(part + 1);
        out.close();
        return 'done';
      },
    });
    const f = (current = fleet({ workflows: [workflow] }));
    await f.spawn();
    const run = await f.client.start(workflow, 1);
    const items = await collect(f.client.stream<string>(run.runId, 'out'));
    expect(items.map((i) => [i.seq, i.kind === 'chunk' ? i.value : i.kind])).toEqual([
      [1, 'p1a'],
      [2, 'p1b'],
      [3, 'p2a'],
      [4, 'p2b'],
      [5, 'p3a'],
      [6, 'p3b'],
      [7, 'close'],
    ]);
    // Resuming counts along the chain too.
    const rest = await collect(f.client.stream<string>(run.runId, 'out', { from: 4 }));
    expect(rest.map((i) => i.seq)).toEqual([4, 5, 6, 7]);
  });
});
