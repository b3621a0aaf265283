/**
 * The batcher's gathering (batch.ts) on a scripted runner: what goes in one call, how many calls
 * are in flight, and how a call's failure reaches each operation.
 */
import { ReplyError } from 'ioredis';
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

/** Each operation of a call answered with its first argument, one reply per operation as batch.lua answers. */
function echo(call: Call): void {
  const n = Number(call.args[1]);
  const replies: unknown[] = [];
  let next = 2 + 2 * n;
  for (let i = 0; i < n; i++) {
    replies.push(call.args[next]);
    next += Number(call.args[3 + 2 * i]);
  }
  call.answer(replies);
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('batchingRunner', () => {
  it('sends what one turn of the event loop asked as one call, arguments in order, no keys', async () => {
    const { run, calls } = recordingRunner();
    const batched = batchingRunner(run, 'p:');
    const replies = Promise.all([batched('close-cancels', ['a', 1]), batched('finish-run', ['b', 'x'])]);
    await tick();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.keys).toEqual([]);
    expect(calls[0]!.args).toEqual(['p:', 2, 'close-cancels', 2, 'finish-run', 2, 'a', 1, 'b', 'x']);
    echo(calls[0]!);
    expect(await replies).toEqual(['a', 'b']);
  });

  it('keeps at most two calls in flight and sends what gathered meanwhile when one answers', async () => {
    const { run, calls } = recordingRunner();
    const batched = batchingRunner(run, 'p:');
    const first = batched('close-cancels', ['1']);
    await tick();
    const second = batched('close-cancels', ['2']);
    await tick();
    const later = [3, 4, 5].map((i) => batched('close-cancels', [String(i)]));
    await tick();
    expect(calls).toHaveLength(2);
    echo(calls[0]!);
    await first;
    await tick();
    expect(calls).toHaveLength(3);
    expect(calls[2]!.args[1]).toBe(3);
    echo(calls[1]!);
    echo(calls[2]!);
    expect(await second).toBe('2');
    expect(await Promise.all(later)).toEqual(['3', '4', '5']);
  });

  it('splits a gathering larger than one batch into calls of at most the batch size', async () => {
    const { run, calls } = recordingRunner();
    const batched = batchingRunner(run, 'p:');
    const all = Promise.all(
      Array.from({ length: MAX_BATCH_OPERATIONS + 10 }, (_, i) => batched('close-cancels', [String(i)])),
    );
    await tick();
    expect(calls.map((c) => c.args[1])).toEqual([MAX_BATCH_OPERATIONS, 10]);
    calls.forEach(echo);
    expect((await all).at(-1)).toBe(String(MAX_BATCH_OPERATIONS + 9));
  });

  it("gives an operation its own error reply, and every operation the call's failure", async () => {
    const { run, calls } = recordingRunner();
    const batched = batchingRunner(run, 'p:');
    const ok = batched('close-cancels', ['1']);
    const bad = batched('close-cancels', ['2']);
    await tick();
    // An operation that failed answers an error reply in its place: ioredis hands it over as a
    // ReplyError in the array.
    calls[0]!.answer([
      'fine',
      new ReplyError('WRONGTYPE Operation against a key holding the wrong kind of value'),
    ]);
    expect(await ok).toBe('fine');
    await expect(bad).rejects.toMatchObject({
      name: 'ReplyError',
      message: expect.stringContaining('WRONGTYPE'),
    });

    const lost = [batched('finish-run', ['1']), batched('finish-run', ['2'])];
    await tick();
    const dropped = new Error('Connection is closed.');
    calls[1]!.fail(dropped);
    for (const op of lost) await expect(op).rejects.toBe(dropped);
  });

  it('rejects the operations a reply does not answer, and only those', async () => {
    const { run, calls } = recordingRunner();
    const batched = batchingRunner(run, 'p:');
    const answered = batched('close-cancels', ['1']);
    const unanswered = batched('close-cancels', ['2']);
    await tick();
    calls[0]!.answer(['one']);
    expect(await answered).toBe('one');
    await expect(unanswered).rejects.toThrow(/batch.lua answered no reply for close-cancels/);
  });
});
