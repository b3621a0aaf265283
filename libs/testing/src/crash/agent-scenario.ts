/**
 * An agent on real worker processes, a real bus and a real store (docs/agents.md): the support
 * agent of examples/agent (its crash module, examples/agent/src/crash-agent.ts) looks an order up,
 * waits for a person's approval of the refund (a durable promise whose token it writes to its
 * `events` stream), refunds, and emails; its model streams tokens to `tokens`. The only worker is
 * SIGKILLed while the model streams the third turn, after the approval; a new worker resumes. Then:
 *
 * - no tool call ran twice: one execution per tool key in the ledger, each effect applied once;
 * - the model ran again only for the turn in flight: two calls with that turn's key (the first
 *   never finished), one with every other key;
 * - the `tokens` stream went on: sequence numbers 1, 2, 3… once each to the close, one `reset`
 *   (the cut turn's step), after which that turn's text comes whole; every other turn's text once;
 *   each turn's text is the one its journaled result holds;
 * - the approval was asked for and given once (one promise token in the journal, one
 *   `approval-needed` event, resolved once), the `events` stream holds each event once though
 *   the new worker replayed the code that wrote them, and the conversation continued as new
 *   (three turns per run) and answered.
 *
 * Readers disconnect every few items and resume. Each adapter pair calls it from its own spec:
 * `describeAgentCrash('nats+redis', environment)`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, CONTINUED_AS, isContinuedAsNew, isFinishedRun } from '@baton/client';
import type { StreamItem } from '@baton/core';
import { filterFencedEntries, type PositionedEntry } from '@baton/core/runtime';
import { CrashWorld, pollUntil, type CrashEnvironmentFactory } from './harness.js';
import { checkFencing, checkNoReexecution, readJournal } from './invariants.js';
import { resumingReader } from './stream-scenario.js';
import { REPO_ROOT } from './worker-processes.js';

/** The module the workers load, and the workflow and activities it defines. */
const AGENT_WORKFLOW_MODULE = resolve(REPO_ROOT, 'examples/agent/src/crash-agent.ts');
const AGENT = { name: 'crash_agent', version: 1 };
const MODEL = 'crash_agent.model';
const TOOL = 'crash_agent.tool.';
const RUNS = 2;
/** The turn the worker is killed in (its model call streaming), after the approved refund. */
const CUT_TURN = 3;
const FINAL_TEXT =
  'All done: order A-1001 was refunded in full and the customer has a confirmation by email. Is there anything else I can do?';

/** One run of a chain and what a reader saw of one of its streams. */
interface RunItems<T> {
  runId: string;
  items: StreamItem<T>[];
}

/** The items of an agent's `events` stream that the scenario reads. */
interface EventValue {
  type: string;
  token?: string;
  approved?: boolean;
}

async function successorOf(client: Client, runId: string): Promise<string | undefined> {
  for (;;) {
    const run = await client.describe(runId);
    if (isFinishedRun(run.status)) {
      return isContinuedAsNew(run.result) ? run.result[CONTINUED_AS].runId : undefined;
    }
    await sleep(50);
  }
}

/** Reads `stream` of `runId` and of every run it continued as, each with disconnects; `runs` grows live. */
async function chainReader<T>(
  client: Client,
  runId: string,
  stream: string,
  runs: RunItems<T>[],
): Promise<void> {
  for (let current: string | undefined = runId; current !== undefined;) {
    const entry: RunItems<T> = { runId: current, items: [] };
    runs.push(entry);
    await resumingReader<T>(client, current, stream, entry.items);
    current = await successorOf(client, current);
  }
}

/** Chunks per step, in the order each step first wrote, after each step's last reset. */
function textsByStep(items: readonly StreamItem<string>[]): Map<number, string> {
  const texts = new Map<number, string>();
  for (const item of items) {
    if (item.kind === 'reset') texts.set(item.step, '');
    else if (item.kind === 'chunk') texts.set(item.step!, (texts.get(item.step!) ?? '') + item.value);
  }
  return texts;
}

/** The steps that wrote chunks, in order of their first chunk. */
function stepsOf(items: readonly StreamItem<string>[]): number[] {
  return [...new Set(items.flatMap((i) => (i.kind === 'chunk' ? [i.step!] : [])))];
}

/** The effective journal's completed activities: seq, name, result. */
function completions(journal: PositionedEntry[]): { seq: number; name: string; result: unknown }[] {
  return filterFencedEntries(journal).flatMap(({ entry }) =>
    entry.type === 'ActivityCompleted' ? [{ seq: entry.seq, name: entry.name, result: entry.result }] : [],
  );
}

export function describeAgentCrash(name: string, factory: CrashEnvironmentFactory): void {
  describe(`an agent on worker processes: ${name}`, () => {
    let world: CrashWorld | undefined;
    afterEach(async () => {
      await world?.dispose();
      world = undefined;
    });

    it(
      'a worker SIGKILLed while the model streams: no tool call repeated, the model re-run for the cut turn only, the tokens go on, the approval given once',
      { timeout: 120_000 },
      async () => {
        world = await CrashWorld.create(factory, {
          workerEnv: {
            BATON_WORKFLOWS: AGENT_WORKFLOW_MODULE,
            BATON_LEASE_MS: '2000',
            BATON_HEARTBEAT_MS: '500',
            BATON_REAP_INTERVAL_MS: '500',
          },
        });
        const w = world;
        const client = new Client({ transport: w.env.transport, store: w.env.store });
        const first = await w.fleet.spawn();
        const chains: string[] = [];
        for (let i = 0; i < RUNS; i++) {
          const input = {
            messages: [
              {
                role: 'user',
                content: 'Order A-1001 arrived broken. Please refund it and tell me by email.',
              },
            ],
          };
          chains.push((await client.start(AGENT, input, { idempotencyKey: `${w.ns}-${i}` })).runId);
        }
        const tokens = chains.map(() => [] as RunItems<string>[]);
        const events = chains.map(() => [] as RunItems<EventValue>[]);
        const readers = chains.flatMap((runId, i) => [
          chainReader(client, runId, 'tokens', tokens[i]!),
          chainReader(client, runId, 'events', events[i]!),
        ]);
        // The person who approves: each token as it appears, once.
        const resolved = new Map<string, number>();
        let approving = true;
        const approver = (async () => {
          while (approving) {
            for (const chain of events) {
              for (const item of chain.flatMap((run) => run.items)) {
                const token = item.kind === 'chunk' ? item.value.token : undefined;
                if (token === undefined || resolved.has(token)) continue;
                resolved.set(token, 1);
                expect(await client.promises.resolve(token, { approved: true, by: 'crash-test' })).toEqual({
                  state: 'resolved',
                });
              }
            }
            await sleep(50);
          }
        })();

        // The kill: once every chain's model streams its third turn (three chunks of it, at least).
        await pollUntil(
          async () =>
            tokens.every((chain) => {
              const items = chain[0]?.items ?? [];
              const third = stepsOf(items)[CUT_TURN - 1];
              return (
                third !== undefined && items.filter((i) => i.kind === 'chunk' && i.step === third).length >= 3
              );
            }),
          60_000,
          () => `every agent to stream turn ${CUT_TURN}\n${w.fleet.describe()}`,
        );
        first.signal('SIGKILL');
        const killedAt = Date.now();
        await first.exited;
        await w.fleet.spawn();

        for (const runId of chains) {
          expect(await client.result(runId, { timeoutMs: 60_000 })).toEqual({
            text: FINAL_TEXT,
            turns: 4,
            stopped: 'answer',
          });
        }
        await Promise.all(readers);
        approving = false;
        await approver;
        console.log(`[agent crash] ${name}: resumed and answered ${Date.now() - killedAt} ms after the kill`);

        const executions = await w.ledger.executions();
        const effects = await w.ledger.effects();
        const journals = new Map<string, PositionedEntry[]>();
        for (const chain of tokens) {
          for (const { runId } of chain) journals.set(runId, await readJournal(w.env.transport, runId));
        }

        for (const [i, chain] of tokens.entries()) {
          // Three turns, then the run continued as new; the fourth answered.
          expect(chain.length, chains[i]).toBe(2);
          const models = chain.map(({ runId }) =>
            completions(journals.get(runId)!).filter((c) => c.name === MODEL),
          );
          expect(
            models.map((m) => m.length),
            chains[i],
          ).toEqual([3, 1]);
          const cut = models[0]![CUT_TURN - 1]!;
          for (const [r, { runId, items }] of chain.entries()) {
            // Once each, in order, with no gap, to the close: the reader resumed across disconnects.
            expect(
              items.map((item) => item.seq),
              runId,
            ).toEqual(items.map((_, n) => n + 1));
            expect(items.at(-1)?.kind, runId).toBe('close');
            // One reset, in the first run only: the cut turn's, before its second call's chunks.
            const resets = items.filter((item) => item.kind === 'reset');
            expect(
              resets.map((reset) => reset.step),
              runId,
            ).toEqual(r === 0 ? [cut.seq] : []);
            // Each turn's text as journaled: the cut turn's after its reset whole, every other once.
            const journaled = new Map(models[r]!.map((m) => [m.seq, (m.result as { text: string }).text]));
            expect(textsByStep(items), runId).toEqual(journaled);
            for (const [step, text] of journaled) {
              if (step === cut.seq) continue;
              const once = items.flatMap((item) =>
                item.kind === 'chunk' && item.step === step ? [item.value] : [],
              );
              expect(once.join(''), `${runId} step ${step}`).toBe(text);
            }
          }

          // The model: called twice for the cut turn (the first call never finished), once for the others.
          const modelKeys = chain.flatMap(({ runId }, r) => models[r]!.map((m) => `${runId}:${m.seq}`));
          for (const key of modelKeys) {
            const calls = executions.filter((e) => e.key === key);
            if (key === `${chain[0]!.runId}:${cut.seq}`) {
              expect(
                calls.map((c) => c.pid),
                key,
              ).toEqual([first.pid, expect.any(Number)]);
              expect(calls[0]!.finishedAt, key).toBeNull();
              expect(calls[1]!.pid, key).not.toBe(first.pid);
            } else {
              expect(calls.length, key).toBe(1);
            }
            expect(calls.at(-1)!.finishedAt, key).not.toBeNull();
          }

          // The tools: each call executed once, each effect applied once.
          const toolCalls = chain.flatMap(({ runId }) =>
            completions(journals.get(runId)!).flatMap((c) =>
              c.name.startsWith(TOOL) ? [{ key: `${runId}:${c.seq}`, tool: c.name.slice(TOOL.length) }] : [],
            ),
          );
          expect(
            toolCalls.map((c) => c.tool),
            chains[i],
          ).toEqual(['lookup_order', 'refund_payment', 'send_email']);
          for (const { key, tool } of toolCalls) {
            expect(executions.filter((e) => e.key === key).length, `${tool} ${key}`).toBe(1);
            const effect = effects.filter((e) => e.key === key);
            expect(
              effect.map((e) => e.repeats),
              `${tool} ${key}`,
            ).toEqual(tool === 'lookup_order' ? [] : [0]);
          }

          // The approval: one token drawn, asked for once, resolved once; every event once.
          const [before, after] = events[i]!;
          const created = filterFencedEntries(journals.get(before!.runId)!).filter(
            ({ entry }) => entry.type === 'PromiseCreated',
          );
          expect(created.length, chains[i]).toBe(1);
          expect(before!.items.map((item) => (item.kind === 'chunk' ? item.value.type : item.kind))).toEqual([
            'tool-call',
            'tool-result',
            'tool-call',
            'approval-needed',
            'approval',
            'tool-result',
            'tool-call',
            'tool-result',
            'continued',
            'close',
          ]);
          expect(after!.items.map((item) => (item.kind === 'chunk' ? item.value.type : item.kind))).toEqual([
            'answer',
            'close',
          ]);
          const token = before!.items.flatMap((item) =>
            item.kind === 'chunk' && item.value.token ? [item.value.token] : [],
          );
          expect(token.length, chains[i]).toBe(1);
          expect(resolved.get(token[0]!), chains[i]).toBe(1);
        }
        expect(
          checkNoReexecution(
            new Map([...journals].map(([id, j]) => [id, filterFencedEntries(j)])),
            executions,
          ),
        ).toEqual([]);
        expect(
          await checkFencing(w.env.store, journals, {
            busEnforces: w.env.transport.journal.supportsOptimisticAppend,
          }),
        ).toEqual([]);
        expect(await w.env.transport.deadLetters.list()).toEqual([]);
      },
    );
  });
}
