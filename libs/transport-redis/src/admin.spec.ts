/**
 * The Redis transport's key families, as `baton admin drop` lists them: the BullMQ queue of every
 * run lane, the journals, the group logs, the dead letters; a key under `<prefix>:` that is none of
 * them (a store whose key prefix starts with it) is not the transport's.
 */
import { describe, expect, it } from 'vitest';
import { transportKeyFamily } from './admin.js';
import { layoutFor } from './layout.js';

describe("the Redis transport's key families", () => {
  const layout = layoutFor('bus');

  it('name every key the transport writes', () => {
    expect(transportKeyFamily(layout, 'bus:runs:wait')).toBe('bus:runs:*');
    expect(transportKeyFamily(layout, 'bus:runs-high:42')).toBe('bus:runs-high:*');
    expect(transportKeyFamily(layout, 'bus:runs-low:meta')).toBe('bus:runs-low:*');
    expect(transportKeyFamily(layout, layout.journal('r-1'))).toBe('bus:journal:*');
    expect(transportKeyFamily(layout, layout.groupLog('g'))).toBe('bus:group:*');
    expect(transportKeyFamily(layout, layout.deadLetters)).toBe('bus:dlq');
    for (const lane of Object.values(layout.runLanes))
      expect(transportKeyFamily(layout, lane.queueMarker)).toBe(`bus:${lane.queueName}:*`);
  });

  it("name no key of a store under the prefix, nor another transport's", () => {
    for (const key of ['bus:run:r-1', 'bus:held', 'bus:dlq2', 'bus2:runs:wait', 'bus:journalx'])
      expect(transportKeyFamily(layout, key), key).toBeUndefined();
  });
});
