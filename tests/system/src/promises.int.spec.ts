/**
 * Durable promises through every door an outside system has, on NATS with Redis and on Kafka with
 * Postgres: the HTTP API of the real `baton serve` process (resolve, reject and their refusals),
 * the real `baton` CLI (a run's pending promises in `runs describe` and `promises list`, reject by
 * token), and the client (a paused run's completion kept for its resume, a timeout on the store's
 * timer). The runs are run by Workers in this process on the same bus and store; worker processes
 * SIGKILLed while runs wait are the crash scenario's (crash-promises.fleet.int.spec.ts).
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import {
  defineWorkflow,
  PromiseRejectedError,
  PromiseTimeoutError,
  type StandardSchemaV1,
} from '@baton/core';
import type { CrashEnvironment } from '@baton/testing/crash';
import { REPO_ROOT } from '@baton/testing/crash';
import { Worker } from '@baton/worker';
import { crashEnvironment } from './crash-environment.spec-helper.js';

const CLI_MAIN = resolve(REPO_ROOT, 'apps/cli/dist/main.js');
const API_TOKEN = randomBytes(16).toString('hex');

const approvalJson = {
  type: 'object',
  properties: { approved: { type: 'boolean' }, by: { type: 'string' } },
  required: ['approved', 'by'],
};
/** `{ approved: boolean, by: string }`, with its JSON Schema form (a Standard Schema by hand). */
const approvalSchema: StandardSchemaV1<{ approved: boolean; by: string }> = {
  '~standard': {
    version: 1,
    vendor: 'baton-spec',
    validate: (value) => {
      const v = (value ?? {}) as { approved?: unknown; by?: unknown };
      return typeof v.approved === 'boolean' && typeof v.by === 'string'
        ? { value: { approved: v.approved, by: v.by } }
        : { issues: [{ message: 'must be { approved: boolean, by: string }' }] };
    },
    ...{ jsonSchema: { input: () => approvalJson, output: () => approvalJson } },
  },
};

/** Waits for its promise (with a timeout when given); answers how it ended. */
const awaitsApproval = defineWorkflow({
  name: 'promise_approval',
  version: 1,
  run: async (ctx, input: { timeout?: string }) => {
    const decision = ctx.promise({
      schema: approvalSchema,
      ...(input.timeout !== undefined && { timeout: input.timeout as '1s' }),
    });
    try {
      return { value: await decision.value };
    } catch (err) {
      if (err instanceof PromiseRejectedError)
        return { rejected: err.failure.message, code: err.failure.code ?? null };
      if (err instanceof PromiseTimeoutError) return { timedOut: true };
      throw err;
    }
  },
});

/** An answer of the API: its status and JSON body. */
interface Answer {
  status: number;
  body: { status?: string; error?: { code: string; message: string; field?: string; issues?: string[] } };
}

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

const PAIRS = [
  { name: 'nats+redis', factory: crashEnvironment('redis', 'nats') },
  { name: 'kafka+postgres', factory: crashEnvironment('postgres', 'kafka') },
];

for (const pair of PAIRS) {
  describe(`durable promises over the HTTP API, the CLI and the client: ${pair.name}`, () => {
    let env: CrashEnvironment;
    let client: Client;
    let serve: ChildProcess;
    const serveErr: string[] = [];
    let url = '';
    const workers: Worker[] = [];

    /** One `baton` command in a process of its own, configured like the workers. */
    function cli(args: string[]): Promise<Ran> {
      return new Promise((done) => {
        execFile(
          process.execPath,
          [CLI_MAIN, ...args],
          {
            cwd: REPO_ROOT,
            env: { PATH: process.env.PATH, ...env.workerEnv },
            timeout: 60_000,
            encoding: 'utf8',
          },
          (error, stdout, stderr) =>
            done({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
        );
      });
    }

    async function post(path: string, body: unknown): Promise<Answer> {
      const res = await fetch(`${url}${path.slice(1)}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Answer['body'] };
    }

    async function startWorker(): Promise<void> {
      const worker = new Worker({
        transport: env.transport,
        store: env.store,
        workflows: [awaitsApproval],
        leaseMs: 3_000,
        fetchWaitMs: 200,
        inProcessWaitMs: 0,
        drainTimeoutMs: 2_000,
      });
      await worker.start();
      workers.push(worker);
    }

    /** Starts a run and waits until it is suspended on its promise; returns it and its token. */
    async function waitingRun(input: { timeout?: string } = {}) {
      const run = await client.start(awaitsApproval, input);
      const deadline = Date.now() + 30_000;
      for (;;) {
        const [pending] = await client.promises.pending(run.runId).catch(() => []);
        const status = (await client.describe(run.runId).catch(() => undefined))?.status;
        if (pending !== undefined && status === 'suspended') return { run, token: pending.token };
        if (Date.now() > deadline) throw new Error(`run ${run.runId} did not suspend on its promise`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    beforeAll(async () => {
      env = await pair.factory(`prom${randomBytes(4).toString('hex')}`, {});
      client = new Client({ transport: env.transport, store: env.store });
      await client.connect();
      serve = spawn(process.execPath, [CLI_MAIN, 'serve', '--port', '0'], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH, ...env.workerEnv, BATON_CONSOLE_TOKEN: API_TOKEN },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const exited = new Promise<number | null>((done) => serve.once('exit', (code) => done(code)));
      createInterface({ input: serve.stderr! }).on('line', (line) => serveErr.push(line));
      url = await new Promise<string>((found, failed) => {
        createInterface({ input: serve.stdout! }).on('line', (line) => {
          const match = /^Baton console and HTTP API on (http:\/\/\S+) /.exec(line);
          if (match) found(match[1]!);
        });
        void exited.then((code) => failed(new Error(`baton serve exited ${code}: ${serveErr.join('\n')}`)));
      });
    }, 120_000);

    afterEach(async () => {
      await Promise.all(workers.splice(0).map((w) => w.stop()));
    }, 30_000);

    afterAll(async () => {
      if (serve !== undefined && serve.exitCode === null) serve.kill('SIGKILL');
      await client?.close();
      await env?.dispose();
    }, 60_000);

    it(
      'resolves over the HTTP API: 200 (a retry too), 404 for an unknown token, 422 for a value its schema refuses, 409 for a conflict',
      { timeout: 60_000 },
      async () => {
        await startWorker();
        const { run, token } = await waitingRun();
        const unknown = await post(`/v1/promises/bp_${'q'.repeat(32)}/resolve`, { approved: true, by: 'x' });
        expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'BATON_NOT_FOUND' } } });
        const invalid = await post(`/v1/promises/${token}/resolve`, { approved: 'yes' });
        expect(invalid).toMatchObject({
          status: 422,
          body: { error: { code: 'BATON_INVALID_INPUT', field: 'value' } },
        });
        expect(invalid.body.error?.issues).toEqual(
          expect.arrayContaining(['$.approved: must be boolean', "$: must have required property 'by'"]),
        );
        const value = { approved: true, by: 'ann' };
        expect(await post(`/v1/promises/${token}/resolve`, value)).toEqual({
          status: 200,
          body: { status: 'resolved' },
        });
        expect(await post(`/v1/promises/${token}/resolve`, value)).toEqual({
          status: 200,
          body: { status: 'resolved' },
        });
        const conflict = await post(`/v1/promises/${token}/resolve`, { approved: false, by: 'bob' });
        expect(conflict).toMatchObject({ status: 409, body: { error: { code: 'BATON_RUN_STATE' } } });
        expect(await run.result({ timeoutMs: 30_000 })).toEqual({ value });
        const history = (await client.history(run.runId)).map((p) => p.entry);
        expect(history.filter((e) => e.type === 'PromiseCreated')).toEqual([
          expect.objectContaining({ seq: 0, token, timeoutAt: null }),
        ]);
        expect(history).toContainEqual(expect.objectContaining({ type: 'PromiseCompleted', value }));
      },
    );

    it(
      'shows the pending token in `runs describe` and `promises list`, and rejects by it from the CLI',
      { timeout: 90_000 },
      async () => {
        await startWorker();
        const { run, token } = await waitingRun();
        const described = await cli(['runs', 'describe', run.runId]);
        expect(described.code, described.stderr).toBe(0);
        expect(described.stdout).toContain(token);
        const listed = await cli(['promises', 'list', run.runId, '--json']);
        expect(listed.code, listed.stderr).toBe(0);
        expect(JSON.parse(listed.stdout)).toMatchObject({
          runId: run.runId,
          promises: [{ token, seq: 0, state: 'pending' }],
        });
        const rejected = await cli([
          'promises',
          'reject',
          token,
          '--message',
          'over budget',
          '--code',
          'BUDGET',
        ]);
        expect(rejected).toMatchObject({ code: 0, stdout: 'promise rejected\n' });
        expect(await run.result({ timeoutMs: 30_000 })).toEqual({ rejected: 'over budget', code: 'BUDGET' });
        const again = await cli(['promises', 'resolve', token, '--value', '{"approved":true,"by":"x"}']);
        expect(again.code).toBe(1);
        expect(again.stderr).toMatch(/^BATON_RUN_STATE: .*already rejected/);
      },
    );

    it('keeps the completion of a paused run for its resume', { timeout: 60_000 }, async () => {
      await startWorker();
      const { run, token } = await waitingRun();
      expect(await client.runs.pause(run.runId)).toBe('paused');
      expect(await client.promises.resolve(token, { approved: false, by: 'cy' })).toEqual({
        state: 'resolved',
      });
      await new Promise((r) => setTimeout(r, 1_000));
      expect((await client.describe(run.runId)).status).toBe('paused');
      expect(await client.runs.resume(run.runId)).toBe(true);
      expect(await run.result({ timeoutMs: 30_000 })).toEqual({ value: { approved: false, by: 'cy' } });
    });

    it(
      "times out on the store's timer, and refuses the late completion with 409",
      { timeout: 60_000 },
      async () => {
        await startWorker();
        const { run, token } = await waitingRun({ timeout: '1500ms' });
        expect(await run.result({ timeoutMs: 30_000 })).toEqual({ timedOut: true });
        expect((await client.history(run.runId)).map((p) => p.entry.type)).toContain('PromiseTimedOut');
        const late = await post(`/v1/promises/${token}/resolve`, { approved: true, by: 'dee' });
        expect(late).toMatchObject({ status: 409, body: { error: { code: 'BATON_RUN_STATE' } } });
      },
    );
  });
}
