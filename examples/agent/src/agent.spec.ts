/**
 * The support agent on the in-memory bus and store, in process: a conversation of four turns with
 * an approval and a continue-as-new; a denied refund; and a worker cut off while the model streams
 * (the crash spec does the same with worker processes killed for real:
 * tests/system/src/crash-agent.fleet.int.spec.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, isContinuedAsNew } from '@baton/client';
import type { StreamItem } from '@baton/core';
import type { Store, Transport } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { severableStore, severableTransport } from '@baton/testing/severable';
import { Worker, type WorkerOptions } from '@baton/worker';
import type { Agent, AgentEvent, AgentInput, Approval } from './agent.js';
import { followChain, type ChainItem } from './follow.js';
import { scriptedReply, type ModelCall } from './scripted-model.js';
import { memorySystems, supportAgent } from './support-agent.js';

const FAST = { leaseMs: 400, heartbeatMs: 100, reapIntervalMs: 50, fetchWaitMs: 100, inProcessWaitMs: 0 };
const REQUEST: AgentInput = {
  messages: [
    { role: 'user', content: 'Order A-1001 arrived broken. Please refund it and tell me by email.' },
  ],
};
const FINAL_TEXT =
  'All done: order A-1001 was refunded in full and the customer has a confirmation by email. Is there anything else I can do?';

interface World {
  transport: Transport;
  store: Store;
  client: Client;
  workers: { worker: Worker; cut(): void; cutOff: boolean }[];
  /** Every model call, as the model saw it: its key and prompt. */
  calls: { key: string; prompt: ModelCall['prompt'] }[];
  systems: ReturnType<typeof memorySystems>;
  /** Every call to the systems' methods, as `method key-or-argument`. */
  toolCalls: string[];
  agent: Agent;
}

let world: World | undefined;
afterEach(async () => {
  await Promise.all(world?.workers.filter((w) => !w.cutOff).map((w) => w.worker.stop()) ?? []);
  await world?.client.close();
  world = undefined;
});

function makeWorld(tokenDelayMs = 1, turnsPerRun?: number): World {
  const transport = memoryTransport({ ackWaitMs: 1_000 });
  const store = memoryStore();
  const systems = memorySystems();
  const calls: World['calls'] = [];
  const toolCalls: string[] = [];
  // The same systems, each call counted: a repeat with the same key would show here.
  const counted = {
    orders: { get: (orderId: string) => (toolCalls.push(`lookup ${orderId}`), systems.orders.get(orderId)) },
    payments: {
      refund: (request: { orderId: string; cents: number }, key: string) => (
        toolCalls.push(`refund ${key}`),
        systems.payments.refund(request, key)
      ),
      find: (key: string) => systems.payments.find(key),
    },
    mail: {
      send: (message: { to: string; subject: string; body: string }, key: string) => (
        toolCalls.push(`email ${key}`),
        systems.mail.send(message, key)
      ),
    },
  };
  const agent = supportAgent(counted, {
    tokenDelayMs,
    ...(turnsPerRun !== undefined && { turnsPerRun }),
    onCall: async (call) => {
      calls.push({ key: String(call.headers?.['Idempotency-Key']), prompt: call.prompt });
    },
  });
  const client = new Client({ transport, store });
  return (world = { transport, store, client, workers: [], calls, systems, toolCalls, agent });
}

/** A worker whose bus and store can be cut off (a crash: nothing released, nothing written again). */
async function spawn(w: World, options: Partial<WorkerOptions> = {}): Promise<World['workers'][number]> {
  const transport = severableTransport(w.transport);
  const store = severableStore(w.store);
  const worker = new Worker({
    ...FAST,
    transport: transport.adapter,
    store: store.adapter,
    workflows: [w.agent.workflow],
    ...options,
  });
  await worker.start();
  const entry = {
    worker,
    cutOff: false,
    cut() {
      transport.sever();
      store.sever();
      entry.cutOff = true;
    },
  };
  w.workers.push(entry);
  return entry;
}

/** Reads a chain's stream to its end; `seen` grows as items come. */
async function collect<T>(
  client: Client,
  runId: string,
  stream: string,
  seen: ChainItem<T>[] = [],
): Promise<ChainItem<T>[]> {
  for await (const item of followChain<T>(client, runId, stream, { pollMs: 20 })) seen.push(item);
  return seen;
}

/** Answers every approval request of the chain with `answer`; resolves with the tokens answered. */
async function approveAll(client: Client, runId: string, answer: Approval): Promise<string[]> {
  const tokens: string[] = [];
  for await (const { item } of followChain<AgentEvent>(client, runId, 'events', { pollMs: 20 })) {
    if (item.kind === 'chunk' && item.value.type === 'approval-needed') {
      tokens.push(item.value.token);
      await client.promises.resolve(item.value.token, answer);
    }
  }
  return tokens;
}

/** Each model step's text, per run, after the step's last reset. */
function texts(items: readonly ChainItem<string>[]): string[] {
  const byStep = new Map<string, string>();
  for (const { runId, item } of items) {
    if (item.kind === 'reset') byStep.set(`${runId}#${item.step}`, '');
    if (item.kind === 'chunk')
      byStep.set(`${runId}#${item.step}`, (byStep.get(`${runId}#${item.step}`) ?? '') + item.value);
  }
  return [...byStep.values()];
}

describe('the support agent (in-memory bus and store)', () => {
  it('streams each turn, waits for the approval, continues as new after two turns, and answers', async () => {
    const w = makeWorld();
    await spawn(w);
    const run = await w.client.start(w.agent.workflow, REQUEST);
    const tokens = collect<string>(w.client, run.runId, 'tokens');
    const approvals = approveAll(w.client, run.runId, { approved: true, by: 'ann' });

    expect(await run.result({ timeoutMs: 10_000 })).toEqual({
      text: FINAL_TEXT,
      turns: 4,
      stopped: 'answer',
    });
    expect(await approvals).toHaveLength(1);
    expect([...w.systems.refunds.values()]).toEqual([{ refundId: 're_1', orderId: 'A-1001', cents: 4200 }]);
    expect([...w.systems.emails.values()].map((e) => e.to)).toEqual(['customer-a-1001@example.com']);
    expect(w.toolCalls.map((c) => c.split(' ')[0])).toEqual(['lookup', 'refund', 'email']);

    // Four model calls, one per turn, each with a key of its own.
    expect(new Set(w.calls.map((c) => c.key)).size).toBe(4);
    expect(w.calls).toHaveLength(4);
    // What streamed is what the model said, turn by turn, each run's stream closed at its end.
    const items = await tokens;
    expect(texts(items)).toEqual(w.calls.map((c) => scriptedReply(c.prompt).text));
    expect(texts(items).at(-1)).toBe(FINAL_TEXT);
    const runs = [...new Set(items.map((i) => i.runId))];
    expect(runs).toHaveLength(2);
    for (const runId of runs)
      expect(items.filter((i) => i.runId === runId).at(-1)?.item).toMatchObject({ kind: 'close' });
    expect(items.some((i) => i.item.kind === 'reset')).toBe(false);

    // The first run continued as new; the second started from the last turn whole and a summary.
    expect(isContinuedAsNew((await w.client.describe(run.runId)).result)).toBe(true);
    const third = w.calls[2]!.prompt;
    expect(third.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(third[0]!.content).toContain('Earlier in this conversation:');
    expect(third[0]!.content).toContain('called lookup_order({"orderId":"A-1001"})');

    // Each event once, in order, across the two runs.
    const events = await collect<AgentEvent>(w.client, run.runId, 'events');
    expect(events.map(({ item }) => (item.kind === 'chunk' ? item.value.type : item.kind))).toEqual([
      'tool-call',
      'tool-result',
      'tool-call',
      'approval-needed',
      'approval',
      'tool-result',
      'continued',
      'close',
      'tool-call',
      'tool-result',
      'answer',
      'close',
    ]);
  });

  it('makes no refund when the approval is denied, and tells the customer why', async () => {
    const w = makeWorld();
    await spawn(w);
    const run = await w.client.start(w.agent.workflow, REQUEST);
    const approvals = approveAll(w.client, run.runId, { approved: false, by: 'ann', reason: 'sold as seen' });
    const result = await run.result({ timeoutMs: 10_000 });
    expect(result).toMatchObject({ turns: 3, stopped: 'answer' });
    expect(result.text).toContain('the refund was not approved (denied by ann: sold as seen)');
    expect(await approvals).toHaveLength(1);
    expect(w.systems.refunds.size).toBe(0);
    expect(w.systems.emails.size).toBe(0);
  });

  it('tells the model when a tool fails, and the model answers with it', async () => {
    const w = makeWorld();
    await spawn(w);
    const run = await w.client.start(w.agent.workflow, {
      messages: [{ role: 'user', content: 'Order Z-9999 never came. Please refund it.' }],
    });
    const result = await run.result({ timeoutMs: 10_000 });
    expect(result).toEqual({
      text: 'I could not finish that: lookup_order failed (there is no order Z-9999). A colleague will look into order Z-9999.',
      turns: 2,
      stopped: 'answer',
    });
    // The lookup failed at once (NonRetryableError): one call, and nothing else done.
    expect(w.toolCalls).toEqual(['lookup Z-9999']);
    expect(w.calls[1]!.prompt.at(-1)).toMatchObject({
      role: 'tool',
      content: [{ type: 'tool-result', toolName: 'lookup_order', output: { type: 'error-text' } }],
    });
  });

  it('continues as new when the history reaches its soft limit, whatever turnsPerRun says', async () => {
    const w = makeWorld(1, 50);
    // A soft limit of a dozen entries, passed before the conversation ends (with 50 turns per run).
    await spawn(w, { historySoftEntries: 12 });
    const run = await w.client.start(w.agent.workflow, REQUEST);
    const approvals = approveAll(w.client, run.runId, { approved: true, by: 'ann' });
    expect(await run.result({ timeoutMs: 10_000 })).toEqual({
      text: FINAL_TEXT,
      turns: 4,
      stopped: 'answer',
    });
    expect(await approvals).toHaveLength(1);
    expect(isContinuedAsNew((await w.client.describe(run.runId)).result)).toBe(true);
    const events = await collect<AgentEvent>(w.client, run.runId, 'events');
    const continued = events.flatMap(({ item }) =>
      item.kind === 'chunk' && item.value.type === 'continued' ? [item.value.turn] : [],
    );
    expect(continued.length).toBeGreaterThan(0);
    expect(continued.every((turn) => turn < 4)).toBe(true);
    expect(w.toolCalls.map((c) => c.split(' ')[0])).toEqual(['lookup', 'refund', 'email']);
  });

  it('after a worker is cut off mid-turn: the model is called again for that turn only, no tool twice', async () => {
    const w = makeWorld(40);
    const a = await spawn(w);
    const run = await w.client.start(w.agent.workflow, REQUEST);
    const seen: ChainItem<string>[] = [];
    const tokens = collect<string>(w.client, run.runId, 'tokens', seen);
    const approvals = approveAll(w.client, run.runId, { approved: true, by: 'ann' });
    // Cut off while the second turn streams: after the lookup, before the refund's approval.
    const stepsSeen = (): number[] => [
      ...new Set(seen.flatMap(({ item }) => (item.kind === 'chunk' ? [item.step!] : []))),
    ];
    while (!(
      stepsSeen().length === 2 &&
      seen.filter(({ item }) => item.kind === 'chunk' && item.step === stepsSeen()[1]).length >= 3
    )) {
      await sleep(5);
    }
    a.cut();
    await spawn(w);

    expect(await run.result({ timeoutMs: 15_000 })).toEqual({
      text: FINAL_TEXT,
      turns: 4,
      stopped: 'answer',
    });
    expect(await approvals).toHaveLength(1);
    // The cut turn's key twice, every other once; the lookup journaled before the cut never again.
    const perKey = new Map<string, number>();
    for (const { key } of w.calls) perKey.set(key, (perKey.get(key) ?? 0) + 1);
    expect([...perKey.values()].sort()).toEqual([1, 1, 1, 2]);
    expect(w.toolCalls.map((c) => c.split(' ')[0])).toEqual(['lookup', 'refund', 'email']);
    expect(w.systems.refunds.size).toBe(1);
    const items: StreamItem<string>[] = (await tokens).map((i) => i.item);
    expect(items.filter((i) => i.kind === 'reset')).toHaveLength(1);
    expect(texts(await tokens).at(-1)).toBe(FINAL_TEXT);
  });
});
