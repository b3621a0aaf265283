/**
 * A resume or wake the worker takes locally (claim-loop.ts `takeLocally`) is handed to message
 * handling as the object it is: parseRunMessage returns it without decoding (nor the size check
 * a bus message gets), and its bytes are encoded only when something reads them.
 */
import { describe, expect, it } from 'vitest';
import { decodeMessage, type WakeMessage } from '@baton/core/runtime';
import { localDelivery, parseRunMessage } from './poison.js';

const wake: WakeMessage = { kind: 'wake', runId: 'run-local-1', reason: 'timer' };

function handling() {
  return { deliveryCount: 1, ack: () => Promise.resolve(), nak: () => Promise.resolve() };
}

describe('a locally taken run message', () => {
  it('is parsed as the same object, with no decode', () => {
    const delivery = localDelivery(wake, handling());
    // A limit no encoded message meets: the bytes are not what is parsed.
    expect(parseRunMessage(delivery, 1)).toBe(wake);
  });

  it('still has bytes, encoded on first read, that decode to the message', () => {
    const delivery = localDelivery(wake, handling());
    const first = delivery.data;
    expect(delivery.data).toBe(first);
    expect(decodeMessage(first)).toEqual(wake);
  });

  it('leaves a bus delivery of the same bytes to the usual decode and size check', () => {
    const bytes = localDelivery(wake, handling()).data;
    const fromBus = { ...handling(), data: bytes, headers: {} };
    expect(parseRunMessage(fromBus, 10_000)).not.toBe(wake);
    expect(parseRunMessage(fromBus, 10_000)).toEqual(wake);
    expect(() => parseRunMessage(fromBus, 1)).toThrow(/exceeds maxMessageBytes/);
  });
});
