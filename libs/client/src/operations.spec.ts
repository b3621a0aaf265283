import { describe, expect, it } from 'vitest';
import type { RunOutcome, Store } from '@baton/core/adapter';
import { encodeMessage } from '@baton/core/runtime';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Client } from './index.js';

const FAILED: RunOutcome = { status: 'failed', error: { name: 'Error', message: 'failed on purpose' } };

/** A run of ops-wf brought to its end by hand, as a worker would (this package has none). */
async function finishedRun(store: Store, n: number): Promise<string> {
  const runId = `ops-run-${n}`;
  await store.createRun({ runId, workflow: 'ops-wf', version: 1, input: { n }, idempotencyKey: null });
  const lease = await store.acquireLease(runId, 'worker-ops', 5_000);
  if (!lease.ok) throw new Error(`could not lease ${runId}`);
  await store.finishRun(runId, lease.epoch, n % 2 === 1 ? FAILED : { status: 'completed', result: n });
  return runId;
}

describe('client.runs', () => {
  it('lists runs by filter in pages, walks them all, and counts them', async () => {
    const store = memoryStore();
    const client = new Client({ transport: memoryTransport(), store });
    const runIds = [];
    for (let n = 0; n < 5; n++) runIds.push(await finishedRun(store, n));

    const failed = await client.runs.list({ workflow: 'ops-wf', status: 'failed' });
    expect(failed.runs.map((r) => r.runId).sort()).toEqual(['ops-run-1', 'ops-run-3']);
    const first = await client.runs.list({ workflow: 'ops-wf', limit: 2 });
    expect(first.runs.map((r) => r.runId)).toEqual(['ops-run-4', 'ops-run-3']);
    expect(first.cursor).toEqual(expect.any(String));
    const all = [];
    for await (const run of client.runs.all({ workflow: 'ops-wf', limit: 2 })) all.push(run.runId);
    expect(all).toEqual([...runIds].reverse());
    expect((await client.runs.count()).byWorkflow['ops-wf']).toEqual({ completed: 3, failed: 2 });
  });

  it('needs the store, and says so', () => {
    const client = new Client({ transport: memoryTransport() });
    expect(() => client.runs.list()).toThrow(/client.runs.list\(\) reads the store/);
  });
});

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
