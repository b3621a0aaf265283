/**
 * The batcher's gathering (batch.ts) on a scripted runner: what goes in one call, how many calls
 * are in flight, and how a call's failure reaches each operation.
 */
import { describe, expect, it } from 'vitest';
import { batchingRunner, MAX_BATCH_OPERATIONS } from './batch.js';
import type { ScriptRunner } from './scripts.js';

interface Call {
  keys: readonly string[];
  args: readonly (string | number)[];
  answer: (value: unknown) => void;
  fail: (err: unknown) => void;
}

/** A runner that records every call and answers only when told. */
function recordingRunner(): { run: ScriptRunner; calls: Call[] } {
  const calls: Call[] = [];
  const run: ScriptRunner = (name, keys, args) => {
    expect(name).toBe('batch');
    return new Promise((answer, fail) => calls.push({ keys, args, answer, fail }));
  };
  return { run, calls };
}

/** Each operation of a call answered with its first argument, as batch.lua's {1, reply}. */
function echo(call: Call): void {
  const n = Number(call.args[0]);
  const replies: [number, unknown][] = [];
  let next = 1 + 3 * n;
  for (let i = 0; i < n; i++) {
    replies.push([1, call.args[next]]);
    next += Number(call.args[3 + 3 * i]);
  }
  call.answer(replies);
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('batchingRunner', () => {
  it('sends what one turn of the event loop asked as one call, keys and arguments in order', async () => {
    const { run, calls } = recordingRunner();
    const batched = batchingRunner(run);
    const replies = Promise.all([
      batched('close-cancels', ['lease:a', 'cancel:a'], ['a']),
      batched('finish-run', ['lease:b'], ['b', 'x']),
    ]);
    await tick();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.keys).toEqual(['lease:a', 'cancel:a', 'lease:b']);
    expect(calls[0]!.args).toEqual([2, 'close-cancels', 2, 1, 'finish-run', 1, 2, 'a', 'b', 'x']);
    echo(calls[0]!);
    expect(await replies).toEqual(['a', 'b']);
  });

  it('keeps at most two calls in flight and sends what gathered meanwhile when one answers', async () => {
    const { run, calls } = recordingRunner();
    const batched = batchingRunner(run);
    const first = batched('close-cancels', ['k'], ['1']);
    await tick();
    const second = batched('close-cancels', ['k'], ['2']);
    await tick();
    const later = [3, 4, 5].map((i) => batched('close-cancels', ['k'], [String(i)]));
    await tick();
    expect(calls).toHaveLength(2);
    echo(calls[0]!);
    await first;
    await tick();
    expect(calls).toHaveLength(3);
    expect(calls[2]!.args[0]).toBe(3);
    echo(calls[1]!);
    echo(calls[2]!);
    expect(await second).toBe('2');
    expect(await Promise.all(later)).toEqual(['3', '4', '5']);
  });

  it('splits a gathering larger than one batch into calls of at most the batch size', async () => {
    const { run, calls } = recordingRunner();
    const batched = batchingRunner(run);
    const all = Promise.all(
      Array.from({ length: MAX_BATCH_OPERATIONS + 10 }, (_, i) =>
        batched('close-cancels', ['k'], [String(i)]),
      ),
    );
    await tick();
    expect(calls.map((c) => c.args[0])).toEqual([MAX_BATCH_OPERATIONS, 10]);
    calls.forEach(echo);
    expect((await all).at(-1)).toBe(String(MAX_BATCH_OPERATIONS + 9));
  });

  it("gives an operation its own error reply, and every operation the call's failure", async () => {
    const { run, calls } = recordingRunner();
    const batched = batchingRunner(run);
    const ok = batched('close-cancels', ['k'], ['1']);
    const bad = batched('close-cancels', ['k'], ['2']);
    await tick();
    calls[0]!.answer([
      [1, 'fine'],
      [0, 'WRONGTYPE Operation against a key holding the wrong kind of value'],
    ]);
    expect(await ok).toBe('fine');
    await expect(bad).rejects.toMatchObject({
      name: 'ReplyError',
      message: expect.stringContaining('WRONGTYPE'),
    });

    const lost = [batched('finish-run', ['k'], ['1']), batched('finish-run', ['k'], ['2'])];
    await tick();
    const dropped = new Error('Connection is closed.');
    calls[1]!.fail(dropped);
    for (const op of lost) await expect(op).rejects.toBe(dropped);
  });
});
