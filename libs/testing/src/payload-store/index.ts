/**
 * Conformance of a {@link PayloadStore} (large payloads kept by reference): every store runs it as
 * a section of the store suite, and a payload store apart from the store (the NATS object store)
 * runs it on its own:
 *
 * ```ts
 * describePayloadStoreConformance(() => payloadStoreUnderTest);
 * ```
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { PayloadStore } from '@baton/core/adapter';
import { uniqueId } from '../conformance-helpers.js';

/** The key a writer would give these bytes. */
export function sha256Of(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Registers the payload tests; `payloads()` is the test's fresh payload store, connected. */
export function describePayloadStoreConformance(payloads: () => PayloadStore): void {
  describe('large payloads', () => {
    it('keeps a payload under its run and hash, and gives the same bytes back', async () => {
      const runId = uniqueId('run');
      const data = new TextEncoder().encode(JSON.stringify({ big: 'x'.repeat(1000) }));
      const hash = sha256Of(data);
      await payloads().put(runId, hash, data);
      expect(await payloads().get(runId, hash)).toEqual(data);
      expect(payloads().location).toMatch(/\S/);
    });

    it('answers undefined for an unknown hash or another run, and writing twice keeps one copy', async () => {
      const runId = uniqueId('run');
      const data = randomBytes(512);
      const hash = sha256Of(data);
      await payloads().put(runId, hash, data);
      await payloads().put(runId, hash, data);
      expect(await payloads().get(runId, hash)).toEqual(new Uint8Array(data));
      expect(await payloads().get(runId, sha256Of(randomBytes(8)))).toBeUndefined();
      expect(await payloads().get(uniqueId('other-run'), hash)).toBeUndefined();
    });

    it('round-trips a payload of several MiB byte for byte', async () => {
      const runId = uniqueId('run');
      const data = randomBytes(5 * 1024 * 1024 + 17);
      const hash = sha256Of(data);
      await payloads().put(runId, hash, data);
      const back = await payloads().get(runId, hash);
      expect(back?.byteLength).toBe(data.byteLength);
      expect(sha256Of(back!)).toBe(hash);
    });

    it('deletePayloads removes every payload of the named runs and nothing of others', async () => {
      const [a, b, kept] = [uniqueId('run-a'), uniqueId('run-b'), uniqueId('run-kept')];
      const one = randomBytes(64);
      const two = randomBytes(64);
      for (const runId of [a, b, kept]) {
        await payloads().put(runId, sha256Of(one), one);
        await payloads().put(runId, sha256Of(two), two);
      }
      await payloads().delete([a, b, uniqueId('never-written')]);
      for (const runId of [a, b]) {
        expect(await payloads().get(runId, sha256Of(one))).toBeUndefined();
        expect(await payloads().get(runId, sha256Of(two))).toBeUndefined();
      }
      expect(await payloads().get(kept, sha256Of(one))).toEqual(new Uint8Array(one));
      expect(await payloads().get(kept, sha256Of(two))).toEqual(new Uint8Array(two));
      await payloads().delete([]);
    });
  });
}
