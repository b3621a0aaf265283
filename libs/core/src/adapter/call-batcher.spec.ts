/** Core's CallBatcher: a turn's calls in one batch, the in-flight cap, the batch size, one call per run. */
import { describe, expect, it } from 'vitest';
import { CallBatcher } from './call-batcher.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

function recording(options: { maxBatch: number; runOf?: (call: string) => string }) {
  const sent: string[][] = [];
  const answers: Array<() => void> = [];
  const batcher = new CallBatcher<string>({
    ...options,
    maxInFlight: 1,
    send: (batch) => {
      sent.push(batch);
      return new Promise<void>((resolve) => answers.push(resolve));
    },
  });
  return { batcher, sent, answer: () => answers.shift()!() };
}

describe('CallBatcher', () => {
  it("sends a turn's calls together, gathers while in flight, and splits at the batch size", async () => {
    const { batcher, sent, answer } = recording({ maxBatch: 2 });
    batcher.add('a');
    batcher.add('b');
    batcher.add('c');
    await tick();
    expect(sent).toEqual([['a', 'b']]);
    batcher.add('d');
    await tick();
    expect(sent).toHaveLength(1);
    answer();
    await tick();
    expect(sent).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
  });

  it("keeps a run's second call, in its place, for the next batch", async () => {
    const { batcher, sent, answer } = recording({ maxBatch: 10, runOf: (call) => call[0]! });
    for (const call of ['x1', 'y1', 'x2', 'z1', 'x3']) batcher.add(call);
    await tick();
    answer();
    await tick();
    answer();
    await tick();
    expect(sent).toEqual([['x1', 'y1', 'z1'], ['x2'], ['x3']]);
  });
});
