/**
 * What has been said to a run, as `baton runs history` and `baton runs describe` print it: the real
 * binary (`node apps/cli/dist/main.js`, built first) against a worker process on real NATS and
 * Redis (one namespace of its own). A run sets a search attribute, makes a durable promise, answers
 * one update and is in the middle of another; then:
 *
 * 1. `runs describe` lists the update under way and the pending promise (its token: an operator's
 *    view, as `promises list`);
 * 2. `runs history` (table and `--json`) shows the attribute change, both updates (the answered one
 *    with its arguments and result, the other accepted with no answer yet) and the promise pending,
 *    with its token's first characters only;
 * 3. once the slow update is answered and the promise resolved (`baton promises resolve`), the
 *    history shows both ended, the promise with its value, and the run completed.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, type RunTimeline } from '@baton/client';
import { WorkerFleet, REPO_ROOT } from '@baton/testing/crash';
import { natsTestUrl, redisTestUrl } from '@baton/testing/servers';
import { loadAdapterCode, operatorAdapters, readOperatorConfig } from '@baton/host';
import { isolatedEnv, removeIsolated } from '@baton/host/testing';

const CLI_MAIN = resolve(REPO_ROOT, 'apps/cli/dist/main.js');
const WORKFLOWS = resolve(REPO_ROOT, 'apps/cli/src/cli-interactions-workflows.spec-helper.ts');

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function exec(args: string[], env: NodeJS.ProcessEnv): Promise<Result> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [CLI_MAIN, ...args],
      { cwd: REPO_ROOT, env, timeout: 60_000, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

/** Polls `check` until it returns a value other than undefined; fails naming `what` after `ms`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const bus = natsTestUrl();
const store = redisTestUrl();
await loadAdapterCode(readOperatorConfig({ BATON_TRANSPORT_URL: bus, BATON_STORE_URL: store }));

describe('baton runs history and describe show updates, durable promises and attributes (nats+redis)', () => {
  const ns = `clii${randomBytes(4).toString('hex')}`;
  const env: Record<string, string> = {
    BATON_TRANSPORT_URL: bus,
    BATON_STORE_URL: store,
    ...isolatedEnv('transport', bus, ns),
    ...isolatedEnv('store', store, ns),
  };
  const fleet = new WorkerFleet({ ...env, BATON_WORKFLOWS: WORKFLOWS, BATON_FETCH_WAIT_MS: '100' });
  const adapters = operatorAdapters(readOperatorConfig(env));
  const client = new Client({ transport: adapters.transport, store: adapters.store });
  const baton = (...args: string[]): Promise<Result> => exec(args, { PATH: process.env.PATH, ...env });
  let dir = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'baton-cli-interactions-'));
    await client.connect();
    await fleet.spawn({ BATON_WORKER_ID: `${ns}-w` });
  }, 60_000);

  afterAll(async () => {
    await fleet.shutdown();
    await adapters.close();
    await removeIsolated('transport', bus, ns);
    await removeIsolated('store', store, ns);
    await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('prints the update under way, the pending promise, then both ended', { timeout: 120_000 }, async () => {
    const started = await baton('runs', 'start', 'cli_approval@1', '--input', '{"customer":"42"}');
    expect(started.code, started.stderr).toBe(0);
    const runId = /^started run (\S+)\n$/.exec(started.stdout)![1]!;
    const promise = await until('the run to make its promise', async () => {
      const [first] = await client.promises.pending(runId).catch(() => []);
      return first;
    });
    const token = promise.token;
    const added = await baton('runs', 'update', runId, 'add', '--args', '5', '--update-id', 'a1');
    expect(added).toMatchObject({ code: 0, stdout: `update 'add' (id a1) of run ${runId} answered: 5\n` });
    const file = join(dir, 'release');
    const slow = client.update(runId, 'slow', file, { updateId: 's1', timeoutMs: 60_000 });
    await until('the slow update to be accepted', async () =>
      (await client.history(runId)).some(
        (p) => p.entry.type === 'UpdateAccepted' && p.entry.updateId === 's1',
      )
        ? true
        : undefined,
    );

    // 1. describe: the update under way and the pending promise with its token (an operator's view).
    const described = await baton('runs', 'describe', runId, '--wide');
    expect(described.code, described.stderr).toBe(0);
    expect(described.stdout).toMatch(
      /update under way +│? *'slow' \(id s1\) accepted \S+, args "\S+release"/,
    );
    expect(described.stdout).not.toMatch(/'add' \(id a1\)/);
    expect(described.stdout).toContain(token);
    const describedJson = JSON.parse((await baton('runs', 'describe', runId, '--json')).stdout) as {
      updatesUnderWay: { updateId: string; outcome: string }[];
      promises: { token: string; seq: number }[];
    };
    expect(describedJson.updatesUnderWay).toEqual([
      expect.objectContaining({ kind: 'update', updateId: 's1', name: 'slow', outcome: 'accepted' }),
    ]);
    expect(describedJson.promises).toEqual([expect.objectContaining({ token, seq: promise.seq })]);

    // 2. history: the attribute change, both updates, the promise pending, no whole token.
    const history = await baton('runs', 'history', runId, '--wide');
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toMatch(/attributes 0 .*│ set .*│ customerId=42/);
    expect(history.stdout).toMatch(/update 'add' .*│ completed .*│ id a1; args 5; result 5/);
    expect(history.stdout).toMatch(
      /update 'slow' .*│ accepted \(no answer yet\) .*│ id s1; args "\S+release"/,
    );
    expect(history.stdout).toMatch(
      new RegExp(`promise ${promise.seq} .*│ pending .*│ token ${token.slice(0, 6)}…; deadline \\S+`),
    );
    expect(history.stdout).not.toContain(token);
    const asJson = await baton('runs', 'history', runId, '--json');
    expect(asJson.stdout).not.toContain(token);
    const timeline = JSON.parse(asJson.stdout) as RunTimeline;
    expect(timeline.items.filter((i) => i.kind === 'update')).toEqual([
      expect.objectContaining({ updateId: 'a1', name: 'add', args: '5', outcome: 'completed', result: '5' }),
      expect.objectContaining({ updateId: 's1', name: 'slow', outcome: 'accepted' }),
    ]);
    expect(timeline.items.find((i) => i.kind === 'promise')).toMatchObject({
      seq: promise.seq,
      tokenHint: `${token.slice(0, 6)}…`,
      timeoutAt: promise.timeoutAt,
      outcome: 'pending',
    });
    expect(timeline.items.find((i) => i.kind === 'attributes')).toMatchObject({
      attributes: { customerId: { type: 'keyword', value: '42' } },
    });

    // 3. The slow update answered, the promise resolved: both ended, the run completed.
    await writeFile(file, 'go');
    expect(await slow).toBe(file.length);
    const resolved = await baton('promises', 'resolve', token, '--value', '{"by":"ann"}');
    expect(resolved).toMatchObject({ code: 0, stdout: 'promise resolved\n' });
    await until('the run to complete', async () =>
      (await client.describe(runId)).status === 'completed' ? true : undefined,
    );
    expect(await client.result(runId)).toEqual({ total: 5, by: 'ann' });
    const after = await baton('runs', 'history', runId, '--wide');
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toMatch(
      new RegExp(`update 'slow' .*│ completed .*│ id s1; args "\\S+release"; result ${file.length}`),
    );
    expect(after.stdout).toMatch(
      new RegExp(
        `promise ${promise.seq} .*│ resolved .*│ token ${token.slice(0, 6)}…; deadline \\S+; value \\{"by":"ann"\\}`,
      ),
    );
    expect(after.stdout).toMatch(/run ended .*│ completed/);
    // Every new owner resumed the run after a wait (the promise, or an update during it): no failover.
    expect(after.stdout).toMatch(/failovers: 0/);
    expect(after.stdout).not.toContain('takeover');
    expect(after.stdout).not.toContain(token);
    const finished = await baton('runs', 'describe', runId);
    expect(finished.stdout).not.toContain('update under way');
  });
});
