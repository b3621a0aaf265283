import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../memory/memory-store.js';
import type { JournalEntry, PayloadRef } from '../../shared/journal.js';
import { ClaimCheck, holdsPayloadRefs, resolveClaimCheck } from './claim-check.js';
import { createPayloadCodec, FRAME_MAGIC, IDENTITY_PAYLOAD_CODEC } from './payload-codec.js';
import { testKeyring } from './test-keys.spec-helper.js';

const THRESHOLD = 1_000;
const big = (n = 5_000): string => 'b'.repeat(n);

function completed(seq: number, result: unknown): JournalEntry {
  return { type: 'ActivityCompleted', seq, name: 'step', result, attempts: 1, epoch: 1, at: 1 };
}

function setup(codec = IDENTITY_PAYLOAD_CODEC) {
  const store = memoryStore();
  return { store, check: new ClaimCheck({ payloads: store.payloads, thresholdBytes: THRESHOLD, codec }) };
}

describe('ClaimCheck', () => {
  it('hands back the same array, untouched, when nothing is above the threshold', async () => {
    const { check } = setup();
    const entries = [completed(0, 42), completed(1, { small: 'x'.repeat(100) }), completed(2, null)];
    expect(await check.offloadEntries('run-1', entries)).toBe(entries);
    expect(await check.resolveEntries('run-1', entries)).toBe(entries);
    expect(holdsPayloadRefs(entries)).toBe(false);
  });

  it('stores a large result by its hash and puts a reference in a copy of the entry', async () => {
    const { store, check } = setup();
    const entries = [completed(0, 1), completed(1, { text: big() })];
    const out = await check.offloadEntries('run-1', entries);
    expect(out).not.toBe(entries);
    expect(out[0]).toBe(entries[0]);
    expect(entries[1]).toMatchObject({ result: { text: big() } });
    expect(out[1]).not.toHaveProperty('result');
    const ref = (out[1] as { resultRef: PayloadRef }).resultRef;
    const bytes = await store.payloads.get('run-1', ref.sha256);
    expect(new TextDecoder().decode(bytes)).toBe(JSON.stringify({ text: big() }));
    expect(ref).toEqual({
      sha256: createHash('sha256').update(bytes!).digest('hex'),
      size: bytes!.byteLength,
      run: 'run-1',
    });
    expect(holdsPayloadRefs(out)).toBe(true);
    expect(await check.resolveEntries('run-1', out)).toEqual(entries);
  });

  it('offloads run results and signal payloads, and leaves other entry types alone', async () => {
    const { check } = setup();
    const entries: JournalEntry[] = [
      { type: 'RunCompleted', result: big(), epoch: 1, at: 1 },
      { type: 'SignalReceived', seq: 3, name: 'go', signalId: 's', payload: big(), epoch: 1, at: 1 },
      { type: 'RunFailed', error: { name: 'Error', message: big() }, epoch: 1, at: 1 },
    ];
    const out = await check.offloadEntries('run-1', entries);
    expect(out[0]).toHaveProperty('resultRef');
    expect(out[1]).toHaveProperty('payloadRef');
    expect(out[1]).not.toHaveProperty('payload');
    expect(out[2]).toBe(entries[2]);
    expect(await check.resolveEntries('run-1', out)).toEqual(entries);
  });

  it('counts UTF-8 bytes, not characters, against the threshold', async () => {
    const { check } = setup();
    // 400 three-byte characters: 1,202 bytes of JSON, 402 characters.
    expect(await check.offloadValue('run-1', '€'.repeat(400))).toBeDefined();
    expect(await check.offloadValue('run-1', 'e'.repeat(400))).toBeUndefined();
  });

  it('refuses bytes that are missing or changed, naming the run, the entry and the location', async () => {
    const { store, check } = setup();
    const out = await check.offloadEntries('run-1', [completed(4, big())]);
    const ref = (out[0] as { resultRef: PayloadRef }).resultRef;

    await expect(check.resolveEntries('run-2', out)).rejects.toMatchObject({
      name: 'CheckpointIntegrityError',
      message: expect.stringContaining(
        `run run-2: ActivityCompleted entry of step 4 failed verification: its large payload ${ref.sha256.slice(0, 16)} ` +
          `(${ref.size} bytes, in memory) is missing`,
      ),
    });
    // Other bytes under the same hash (a store-side edit).
    await store.payloads.put('run-3', ref.sha256, new TextEncoder().encode(JSON.stringify(big(10))));
    await expect(check.resolveEntries('run-3', out)).rejects.toThrow(/does not match its SHA-256/);
    const malformed = [{ ...out[0], resultRef: { sha256: 'nope', size: 1, run: 'run-1' } }] as JournalEntry[];
    await expect(check.resolveEntries('run-1', malformed)).rejects.toThrow(/reference is malformed/);
  });

  it('encrypts the stored bytes with the codec, bound to the run that wrote them', async () => {
    const { ring } = testKeyring('encryption', ['k1']);
    const codec = createPayloadCodec({ encryption: ring });
    const { store, check } = setup(codec);
    const secret = `secret-${big()}`;
    const ref = (await check.offloadValue('run-1', secret))!;
    const bytes = (await store.payloads.get('run-1', ref.sha256))!;
    expect(bytes[0]).toBe(FRAME_MAGIC);
    expect(Buffer.from(bytes).includes('secret-')).toBe(false);
    expect(await check.resolve('run-1', ref, 'test value')).toBe(secret);
    // A fork copies the bytes under its own id; the reference (and its run) stays valid there.
    await check.copyPayloads('run-1', 'fork-1', [
      completed(0, undefined),
      { ...completed(1, undefined), resultRef: ref } as JournalEntry,
    ]);
    expect(await check.resolve('fork-1', ref, 'test value')).toBe(secret);
    // Moving the bytes to another run's reference fails authentication.
    await expect(check.resolve('fork-1', { ...ref, run: 'fork-1' }, 'test value')).rejects.toMatchObject({
      name: 'CheckpointIntegrityError',
    });
  });

  it('resolveClaimCheck: a default threshold, off still reads, a bad one is named', async () => {
    const store = memoryStore();
    expect(resolveClaimCheck(undefined, store.payloads, IDENTITY_PAYLOAD_CODEC)?.thresholdBytes).toBe(65_536);
    expect(resolveClaimCheck(undefined, undefined, IDENTITY_PAYLOAD_CODEC)).toBeUndefined();
    const off = resolveClaimCheck({ thresholdBytes: 'off' }, store.payloads, IDENTITY_PAYLOAD_CODEC)!;
    expect(await off.offloadValue('run-1', big(200_000))).toBeUndefined();
    const ref = (await setup().check.offloadValue('run-1', big()))!;
    await store.payloads.put('run-1', ref.sha256, new TextEncoder().encode(JSON.stringify(big())));
    expect(await off.resolve('run-1', ref, 'value')).toBe(big());
    expect(() => resolveClaimCheck({ thresholdBytes: -5 }, store.payloads, IDENTITY_PAYLOAD_CODEC)).toThrow(
      "largePayloads.thresholdBytes must be a positive integer or 'off', got -5",
    );
  });
});
