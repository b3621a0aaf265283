/**
 * Store conformance, the query mailbox (contracts/query-mailbox.ts in @baton/core): a request
 * reaches the worker it names, or every listening worker when it names none, without its
 * arguments; exactly one claim takes it; the reply reaches its ask; an ask nobody answers ends
 * unanswered by its deadline and its request can no longer be claimed; a stopped listener hears
 * nothing more.
 *
 * With a pair (two stores on the same data, separate connections), the asker uses one and the
 * workers the other, as a client and a worker do; without one, both sides share the test's store.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { QueryReply, QueryRequest, Store } from '@baton/core/adapter';
import { uniqueId } from '../conformance-helpers.js';
import type { StorePairFactory } from './presence.js';

type Notice = Omit<QueryRequest, 'args'>;

/** Time for a listener to be in place after listen() (a subscription is made in the background). */
const SETTLE_MS = 300;

/** Registers the query mailbox tests; `store()` is the test's fresh store. */
export function describeQueryMailboxConformance(store: () => Store, pairFactory?: StorePairFactory): void {
  describe('query mailbox', () => {
    /** The asker's store and the workers' store, and what to close after the test. */
    async function sides(): Promise<{ asker: Store; workers: Store; done: () => Promise<void> }> {
      if (pairFactory === undefined) return { asker: store(), workers: store(), done: async () => {} };
      const [a, b] = await pairFactory();
      await Promise.all([a.connect(), b.connect()]);
      return { asker: a, workers: b, done: async () => void (await Promise.all([a.close(), b.close()])) };
    }

    const request = (to: string | null, args?: unknown): QueryRequest => ({
      queryId: uniqueId('q'),
      runId: uniqueId('run'),
      workflow: 'orders',
      version: 2,
      name: 'progress',
      ...(args !== undefined && { args }),
      to,
    });

    /** Answers every request `workerId` hears with `reply(request)`, claiming it first. */
    function answering(
      workers: Store,
      workerId: string,
      reply: (request: QueryRequest) => QueryReply,
      heard: Notice[] = [],
    ): () => void {
      return workers.queries.listen(workerId, (notice) => {
        heard.push(notice);
        void (async () => {
          const claimed = await workers.queries.claim(notice.queryId, workerId);
          if (claimed !== undefined) await workers.queries.answer(notice.queryId, reply(claimed));
        })();
      });
    }

    it('carries a request to the worker it names, its arguments through the claim, and the reply back', async () => {
      const { asker, workers, done } = await sides();
      try {
        const heard: Notice[] = [];
        const stop = answering(
          workers,
          'worker-a',
          (claimed) => ({ status: 'answered', result: { echo: claimed.args, run: claimed.runId } }),
          heard,
        );
        await sleep(SETTLE_MS);
        const asked = request('worker-a', { page: 2, filter: { tags: ['a', null] } });
        const result = await asker.queries.ask(asked, 5_000);
        expect(result).toEqual({
          status: 'answered',
          result: { echo: { page: 2, filter: { tags: ['a', null] } }, run: asked.runId },
        });
        // The notice is the request without its arguments.
        const { args: _args, ...notice } = asked;
        expect(heard).toEqual([notice]);
        stop();
      } finally {
        await done();
      }
    });

    it('carries every kind of reply as it was given', async () => {
      const { asker, workers, done } = await sides();
      try {
        const replies: QueryReply[] = [
          { status: 'answered', result: null },
          { status: 'answered', result: [1, 'two', { three: true }] },
          {
            status: 'failed',
            error: { name: 'QueryReadOnlyError', message: 'no', code: 'BATON_QUERY_READ_ONLY' },
          },
          { status: 'unknown-query', registered: ['items', 'progress'] },
          { status: 'not-held' },
        ];
        let next = 0;
        const stop = answering(workers, 'worker-a', () => replies[next++]!);
        await sleep(SETTLE_MS);
        for (const reply of replies)
          expect(await asker.queries.ask(request('worker-a'), 5_000)).toEqual(reply);
        stop();
      } finally {
        await done();
      }
    });

    it('tells only the named worker of a request to it, and every listening worker of one to any', async () => {
      const { asker, workers, done } = await sides();
      try {
        const toA: Notice[] = [];
        const toB: Notice[] = [];
        const stopA = workers.queries.listen('worker-a', (n) => toA.push(n));
        const stopB = workers.queries.listen('worker-b', (n) => toB.push(n));
        await sleep(SETTLE_MS);
        const named = request('worker-b');
        const anyone = request(null);
        const [first, second] = await Promise.all([
          asker.queries.ask(named, 600),
          asker.queries.ask(anyone, 600),
        ]);
        expect(first).toEqual({ status: 'unanswered', heard: true });
        expect(second).toEqual({ status: 'unanswered', heard: true });
        expect(toA.map((n) => n.queryId)).toEqual([anyone.queryId]);
        expect(toB.map((n) => n.queryId).sort()).toEqual([named.queryId, anyone.queryId].sort());
        stopA();
        stopB();
      } finally {
        await done();
      }
    });

    it('lets exactly one of many racing workers claim a request', async () => {
      const { asker, workers, done } = await sides();
      try {
        const claims: Array<QueryRequest | undefined> = [];
        const stops = ['w1', 'w2', 'w3'].map((id) =>
          workers.queries.listen(id, (notice) => {
            void Promise.all(
              [1, 2].map(async () => {
                const claimed = await workers.queries.claim(notice.queryId, id);
                claims.push(claimed);
                if (claimed !== undefined)
                  await workers.queries.answer(notice.queryId, { status: 'answered', result: id });
              }),
            );
          }),
        );
        await sleep(SETTLE_MS);
        const result = await asker.queries.ask(request(null, 'x'), 5_000);
        expect(result).toMatchObject({ status: 'answered', result: expect.stringMatching(/^w[123]$/) });
        // Every worker heard it once and claimed twice: six claims, one of them granted.
        for (let i = 0; i < 50 && claims.length < 6; i++) await sleep(20);
        expect(claims.filter((c) => c !== undefined)).toHaveLength(1);
        expect(claims).toHaveLength(6);
        for (const stop of stops) stop();
      } finally {
        await done();
      }
    });

    it('ends an ask nobody answers by its deadline; its request can no longer be claimed nor answered', async () => {
      const { asker, workers, done } = await sides();
      try {
        const heard: Notice[] = [];
        const stop = workers.queries.listen('worker-a', (n) => heard.push(n));
        await sleep(SETTLE_MS);
        const asked = request('worker-a');
        expect(await asker.queries.ask(asked, 400)).toEqual({ status: 'unanswered', heard: true });
        expect(heard.map((n) => n.queryId)).toEqual([asked.queryId]);
        // The asker left: a late worker gets nothing, and its reply is dropped without an error.
        expect(await workers.queries.claim(asked.queryId, 'worker-a')).toBeUndefined();
        await workers.queries.answer(asked.queryId, { status: 'answered', result: 'late' });
        stop();
      } finally {
        await done();
      }
    });

    it('drops a reply to a request claimed and then left by its asker, and a claim of an unknown query', async () => {
      const { asker, workers, done } = await sides();
      try {
        let claimed: QueryRequest | undefined;
        const stop = workers.queries.listen('worker-a', (notice) => {
          void workers.queries.claim(notice.queryId, 'worker-a').then((c) => (claimed = c));
        });
        await sleep(SETTLE_MS);
        const asked = request('worker-a', 7);
        expect(await asker.queries.ask(asked, 400)).toEqual({ status: 'unanswered', heard: true });
        expect(claimed).toEqual(asked);
        await workers.queries.answer(asked.queryId, { status: 'answered', result: 'too late' });
        expect(await workers.queries.claim(uniqueId('never-posted'), 'worker-a')).toBeUndefined();
        stop();
      } finally {
        await done();
      }
    });

    it('tells a listener nothing once it stopped listening', async () => {
      const { asker, workers, done } = await sides();
      try {
        const heard: Notice[] = [];
        const stop = workers.queries.listen('worker-a', (n) => heard.push(n));
        const other = workers.queries.listen('worker-b', () => undefined);
        await sleep(SETTLE_MS);
        stop();
        await sleep(SETTLE_MS);
        const result = await asker.queries.ask(request('worker-a'), 300);
        expect(result.status).toBe('unanswered');
        expect(heard).toEqual([]);
        other();
      } finally {
        await done();
      }
    });

    it('refuses an ask with a bad timeout or request before posting it', async () => {
      await expect(store().queries.ask(request('w'), 0)).rejects.toThrow(/timeoutMs must be from 1 to/);
      await expect(store().queries.ask({ ...request('w'), version: 0 }, 100)).rejects.toThrow(/version/);
      await expect(store().queries.ask({ ...request('w'), name: 'two words' }, 100)).rejects.toThrow(/name/);
    });
  });
}
