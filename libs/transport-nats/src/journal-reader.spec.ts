/** A journal read's records in position order, each position once (journal-reader.ts). */
import { describe, expect, it } from 'vitest';
import { inPositionOrder } from './journal-reader.js';

const record = (position: number, byte = position) => ({ position, data: new Uint8Array([byte]) });

describe('inPositionOrder', () => {
  it('keeps one record per position, in position order, and loses none', () => {
    const read = [record(3), record(5), record(5, 99), record(4), record(7), record(3)];
    expect(inPositionOrder(read).map((r) => r.position)).toEqual([3, 4, 5, 7]);
  });

  it('leaves a read in order untouched', () => {
    const read = [record(1), record(2), record(9)];
    expect(inPositionOrder(read)).toEqual([record(1), record(2), record(9)]);
    expect(inPositionOrder([])).toEqual([]);
  });
});
