/**
 * Shared pieces of the conformance suites. Every wait here is real time: the suites must hold for
 * Redis, Postgres, NATS and Kafka too, whose clocks no test can fake.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** Anything with the adapter lifecycle. */
export interface Connectable {
  connect(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Gives each test a fresh, connected adapter from `factory` and closes it afterwards, so tests
 * never see each other's data. Returns an accessor valid inside `it` bodies.
 */
export function useFixture<T extends Connectable>(factory: () => Promise<T> | T): () => T {
  let current: T | undefined;
  beforeEach(async () => {
    current = await factory();
    await current.connect();
  });
  afterEach(async () => {
    const instance = current;
    current = undefined;
    await instance?.close();
  });
  return () => {
    if (current === undefined) throw new Error('conformance fixture used outside a running test');
    return current;
  };
}

/** A run id (or any id) no other test, or earlier run of this test, can produce. */
export function uniqueId(label: string): string {
  return `${label}-${randomUUID()}`;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** UTF-8 bytes of a string. */
export function bytes(text: string): Uint8Array {
  return encoder.encode(text);
}

/** The string held in UTF-8 bytes. */
export function text(data: Uint8Array): string {
  return decoder.decode(data);
}

/** The lifecycle section every adapter shares: connect and close are idempotent. */
export function describeLifecycle<T extends Connectable & { readonly name: string }>(
  factory: () => Promise<T> | T,
): void {
  describe('lifecycle', () => {
    it('accepts connect and close twice, and names itself', async () => {
      const extra = await factory();
      await extra.connect();
      await extra.connect();
      expect(extra.name).toMatch(/^[a-z][a-z0-9-]*$/);
      await extra.close();
      await extra.close();
    });
  });
}
