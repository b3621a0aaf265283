/**
 * The in-process crash stand-in: a severed adapter's calls hang, nested capabilities (the group
 * log) are cut with it, and each nested capability is one proxy, as on the adapter itself.
 */
import { describe, expect, it } from 'vitest';
import { memoryTransport } from '@baton/core/memory';
import { severableTransport } from './severable.js';

const settlesWithin = async (promise: Promise<unknown>, ms: number): Promise<boolean> => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
};

describe('severableTransport', () => {
  it('hands out one proxy per nested capability, and cuts it off with the adapter', async () => {
    const transport = memoryTransport();
    await transport.connect();
    const { adapter, sever } = severableTransport(transport);
    const groupLog = adapter.groupLog!;
    expect(adapter.groupLog).toBe(groupLog);
    expect(await groupLog.appendGroupRecord('w1', new Uint8Array([1]))).toBe(1);
    sever();
    expect(await settlesWithin(groupLog.appendGroupRecord('w1', new Uint8Array([2])), 50)).toBe(false);
    // The adapter itself still takes appends: only the severed worker's view is cut.
    expect(await transport.groupLog!.appendGroupRecord('w1', new Uint8Array([3]))).toBe(2);
    await transport.close();
  });
});
