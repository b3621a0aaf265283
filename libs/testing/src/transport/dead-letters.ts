/**
 * Transport conformance, dead-letter administration: ids, newest-first pages, get, redrive, purge.
 * (Storing and the legacy oldest-first list are in the journal section.)
 */
import { describe, expect, it } from 'vitest';
import type { DeadLetter, Transport } from '@baton/core/adapter';
import { bytes, text, uniqueId } from '../conformance-helpers.js';
import { fetchMessages } from './queue.js';

/** The shapes of the errors the contract names, whichever copy of `@baton/core` raised them. */
const NOT_FOUND = { code: 'BATON_NOT_FOUND' } as const;
const CONFIG = { code: 'BATON_CONFIG' } as const;

/** Registers the dead-letter administration tests; `transport()` is the test's fresh transport. */
export function describeDeadLetterConformance(transport: () => Transport): void {
  /** Dead-letters one letter per code, oldest first, and returns what was stored. */
  async function store(codes: string[]): Promise<DeadLetter[]> {
    const at = Date.now();
    const letters = codes.map((code, i) => ({
      data: bytes(`data ${code}`),
      headers: { 'baton-kind': 'start', 'baton-test': code },
      reason: `reason ${code}`,
      code,
      at: at + i,
    }));
    for (const letter of letters) await transport().deadLetters.add(letter);
    return letters;
  }

  async function codesOnPage(query?: { limit?: number; cursor?: string }): Promise<string[]> {
    return (await transport().deadLetters.page(query)).letters.map((l) => l.code);
  }

  describe('dead-letter administration', () => {
    it('gives every letter a distinct id that stays the same from one listing to the next', async () => {
      await store(['a', 'b', 'c']);
      const first = (await transport().deadLetters.page()).letters.map((l) => l.id);
      expect(new Set(first).size).toBe(3);
      await store(['d']);
      const second = (await transport().deadLetters.page()).letters.map((l) => l.id);
      expect(second.slice(1)).toEqual(first);
      expect(first).not.toContain(second[0]);
    });

    it('pages newest first with cursors until the oldest letter, each letter once', async () => {
      await store(['a', 'b', 'c', 'd', 'e']);
      const first = await transport().deadLetters.page({ limit: 2 });
      expect(first.letters.map((l) => l.code)).toEqual(['e', 'd']);
      expect(first.cursor).toEqual(expect.any(String));
      const second = await transport().deadLetters.page({ limit: 2, cursor: first.cursor });
      expect(second.letters.map((l) => l.code)).toEqual(['c', 'b']);
      const third = await transport().deadLetters.page({ limit: 2, cursor: second.cursor });
      expect(third.letters.map((l) => l.code)).toEqual(['a']);
      expect(third.cursor).toBeUndefined();
      expect(await codesOnPage({ limit: 5 })).toEqual(['e', 'd', 'c', 'b', 'a']);
      expect((await transport().deadLetters.page({ limit: 5 })).cursor).toBeUndefined();
    });

    it('pages nothing before anything was dead-lettered', async () => {
      expect(await transport().deadLetters.page()).toEqual({ letters: [] });
    });

    it('refuses a bad page limit or a cursor it did not issue, naming it', async () => {
      await store(['a']);
      await expect(transport().deadLetters.page({ limit: 0 })).rejects.toMatchObject(CONFIG);
      await expect(transport().deadLetters.page({ limit: 1.5 })).rejects.toMatchObject(CONFIG);
      await expect(transport().deadLetters.page({ cursor: 'not-a-cursor' })).rejects.toThrow(/not-a-cursor/);
    });

    it('gets one letter by id with its code, reason, time, headers and data', async () => {
      const [, stored] = await store(['a', 'b']);
      const listed = (await transport().deadLetters.page()).letters.find((l) => l.code === 'b');
      const letter = await transport().deadLetters.get(listed?.id ?? 'missing');
      expect(letter).toMatchObject({
        id: listed?.id,
        code: 'b',
        reason: 'reason b',
        at: stored?.at,
        headers: stored?.headers,
      });
      expect(text(letter?.data ?? new Uint8Array())).toBe('data b');
      expect(await transport().deadLetters.get(uniqueId('no-such-letter'))).toBeUndefined();
      expect(await transport().deadLetters.get('999999999')).toBeUndefined();
    });

    it('redrives a letter: its exact bytes and headers go back on the run queue, then it is gone', async () => {
      const data = new Uint8Array([0, 1, 2, 250, 251, 255, 10, 13]);
      const headers = { 'baton-kind': 'start', 'baton-test': uniqueId('redrive') };
      await transport().deadLetters.add({
        data,
        headers,
        reason: 'poison',
        code: 'unparseable',
        at: Date.now(),
      });
      await store(['other']);
      const target = (await transport().deadLetters.page()).letters.find((l) => l.code === 'unparseable');
      const result = await transport().deadLetters.redrive(target?.id ?? 'missing');
      expect(result).toEqual({ id: target?.id, bytes: data.byteLength });
      const [delivery, ...rest] = await fetchMessages(transport(), 1, 5_000);
      expect(rest).toEqual([]);
      expect(delivery?.data).toEqual(data);
      expect(delivery?.headers).toMatchObject(headers);
      expect(await transport().deadLetters.get(target?.id ?? 'missing')).toBeUndefined();
      expect(await codesOnPage()).toEqual(['other']);
      expect((await transport().deadLetters.list()).map((l) => l.code)).toEqual(['other']);
      await expect(transport().deadLetters.redrive(target?.id ?? 'missing')).rejects.toMatchObject(NOT_FOUND);
    });

    it('refuses to redrive an unknown id, naming it, and enqueues nothing', async () => {
      const id = uniqueId('no-such-letter');
      await expect(transport().deadLetters.redrive(id)).rejects.toMatchObject(NOT_FOUND);
      await expect(transport().deadLetters.redrive(id)).rejects.toThrow(id);
      await expect(transport().deadLetters.redrive('999999999')).rejects.toMatchObject(NOT_FOUND);
      expect(await transport().runQueue.fetch({ max: 1, expiresMs: 300 })).toEqual([]);
    });

    it('purges chosen ids and counts only the letters it removed', async () => {
      await store(['a', 'b', 'c']);
      const ids = Object.fromEntries(
        (await transport().deadLetters.page()).letters.map((l) => [l.code, l.id]),
      );
      expect(await transport().deadLetters.purge({ ids: [ids.a!, ids.c!, uniqueId('unknown')] })).toBe(2);
      expect(await codesOnPage()).toEqual(['b']);
      expect(await transport().deadLetters.get(ids.a!)).toBeUndefined();
      expect((await transport().deadLetters.list()).map((l) => l.code)).toEqual(['b']);
      expect(await transport().deadLetters.purge({ ids: [ids.a!] })).toBe(0);
    });

    it('purges every letter, and letters older than a time', async () => {
      const [, , third] = await store(['a', 'b', 'c']);
      expect(await transport().deadLetters.purge({ olderThan: third!.at })).toBe(2);
      expect(await codesOnPage()).toEqual(['c']);
      await store(['d']);
      expect(await transport().deadLetters.purge({ all: true })).toBe(2);
      expect(await transport().deadLetters.page()).toEqual({ letters: [] });
      expect(await transport().deadLetters.list()).toEqual([]);
      await store(['e']);
      expect(await codesOnPage()).toEqual(['e']);
    });

    it('refuses a purge that says neither ids, all nor olderThan', async () => {
      await expect(transport().deadLetters.purge({} as never)).rejects.toMatchObject(CONFIG);
      await expect(transport().deadLetters.purge({ all: false } as never)).rejects.toMatchObject(CONFIG);
    });
  });
}
