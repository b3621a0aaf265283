import { describe, expect, it } from 'vitest';
import { encodeMessage } from '@baton/core/runtime';
import { memoryTransport } from '@baton/core/memory';
import { Client } from './index.js';

describe('client.deadLetters', () => {
  it('lists, shows decoded, redrives to the run queue and purges', async () => {
    const transport = memoryTransport();
    const client = new Client({ transport });
    const good = encodeMessage({ kind: 'resume', runId: 'run-dl-1', reason: 'handoff', since: 1 });
    await transport.deadLetters.add({
      data: good,
      headers: {},
      code: 'unknown-run',
      reason: 'no such run',
      at: 1,
    });
    await transport.deadLetters.add({
      data: new TextEncoder().encode('{not json'),
      headers: {},
      code: 'unparseable',
      reason: 'bad bytes',
      at: 2,
    });
    const page = await client.deadLetters.list();
    expect(page.letters.map((l) => l.code)).toEqual(['unparseable', 'unknown-run']);
    const [poison, resume] = page.letters as [(typeof page.letters)[0], (typeof page.letters)[0]];

    const shown = await client.deadLetters.show(resume.id);
    expect(shown).toMatchObject({
      code: 'unknown-run',
      message: { readable: true, message: { kind: 'resume', runId: 'run-dl-1' } },
    });
    expect((await client.deadLetters.show(poison.id)).message).toMatchObject({
      readable: false,
      problem: expect.stringMatching(/unparseable run message/),
    });
    await expect(client.deadLetters.show('no-such-id')).rejects.toMatchObject({
      code: 'BATON_NOT_FOUND',
      message: expect.stringMatching(/client.deadLetters.show\(no-such-id\): no dead letter has that id/),
    });

    expect(await client.deadLetters.redrive(resume.id)).toEqual({ id: resume.id, bytes: good.byteLength });
    const [requeued] = await transport.runQueue.fetch({ max: 10, expiresMs: 50 });
    expect(requeued?.data).toEqual(good);
    await expect(client.deadLetters.redrive(resume.id)).rejects.toMatchObject({ code: 'BATON_NOT_FOUND' });
    expect(await client.deadLetters.purge({ all: true })).toBe(1);
    expect((await client.deadLetters.list()).letters).toEqual([]);
  });
});
