/**
 * Operator surfaces failing cleanly, with the real `baton` binary (`node apps/cli/dist/main.js`,
 * built first) as a process against a private redis-server of this spec's own (bus and store on
 * it), which the spec freezes with SIGSTOP: the shared servers are never paused.
 *
 * 1. Ctrl-C (SIGINT) during a bulk pause: exit 130, the line saying how many runs remain, and the
 *    store agreeing run for run; the same command again finishes the rest and exits 0.
 * 2. An unknown flag: one line and where the help is, exit 2, not the whole help.
 * 3. A run whose values the workers sealed: `runs describe` shows "protected (key k1)" without the
 *    key and the value with `--set BATON_ENCRYPTION_KEYS=…`; `runs start` without the key, to a
 *    fleet that requires encryption, is refused naming the key (exit 2), and goes through with it.
 * 4. `baton console --store-timeout 1000` over the store frozen by SIGSTOP: a request is answered
 *    503 with Retry-After instead of hanging, and 200 again once the store is thawed.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { resolvePayloadProtection, sealValue } from '@baton/core/runtime';
import { REPO_ROOT } from '@baton/testing/crash';
import { freePort, startPrivateRedis, type PrivateServer } from '@baton/testing/servers';
import { loadAdapterCode, type OperatorAdapters, operatorAdapters, readOperatorConfig } from '@baton/host';

const CLI_MAIN = resolve(REPO_ROOT, 'apps/cli/dist/main.js');
/** Enough runs that a bulk pause one at a time is still walking when the SIGINT lands. */
const RUNS = 2_000;

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function exec(file: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Result> {
  return new Promise((done) => {
    execFile(
      file,
      args,
      { cwd: REPO_ROOT, env, timeout: timeoutMs, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        done({ code, signal: error?.signal ?? null, stdout, stderr });
      },
    );
  });
}

/** A running `baton` process whose output is collected; `exited` resolves with all of it. */
function start(
  args: string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; out: () => string; err: () => string; exited: Promise<Result> } {
  const child = spawn(process.execPath, [CLI_MAIN, ...args], { cwd: REPO_ROOT, env });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<Result>((done) =>
    child.once('close', (code, signal) => done({ code, signal, stdout, stderr })),
  );
  return { child, out: () => stdout, err: () => stderr, exited };
}

/** Polls `check` until it is true; fails naming `what` after `ms`. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let redis: PrivateServer;
let env: NodeJS.ProcessEnv;
let adapters: OperatorAdapters;
let client: Client;

beforeAll(async () => {
  redis = await startPrivateRedis();
  env = { PATH: process.env.PATH, BATON_TRANSPORT_URL: redis.url, BATON_STORE_URL: redis.url };
  const config = readOperatorConfig({ BATON_TRANSPORT_URL: redis.url, BATON_STORE_URL: redis.url });
  await loadAdapterCode(config);
  adapters = operatorAdapters(config);
  client = new Client({ transport: adapters.transport, store: adapters.store });
  await client.connect();
}, 300_000);

afterAll(async () => {
  const pid = redis?.pid();
  if (pid !== undefined) process.kill(pid, 'SIGCONT');
  await adapters?.close();
  await redis?.dispose();
}, 30_000);

describe('operator surfaces fail cleanly', () => {
  it(
    'a bulk pause interrupted by SIGINT exits 130 saying how many runs remain; run again, it finishes',
    { timeout: 120_000 },
    async () => {
      const store = adapters.store;
      await Promise.all(
        Array.from({ length: RUNS }, (_, n) =>
          store.runs.create({
            runId: `edge-${String(n).padStart(5, '0')}`,
            workflow: 'edges',
            version: 1,
            input: {},
            idempotencyKey: null,
          }),
        ),
      );
      const args = ['runs', 'pause', '--workflow', 'edges', '--yes', '--concurrency', '1'];
      const bulk = start(args, env);
      // The first progress line comes after the first run is paused: the walk is under way.
      await until('the first progress line', () => /pause: \d+\/2000/.test(bulk.err()));
      bulk.child.kill('SIGINT');
      const interrupted = await bulk.exited;
      expect(interrupted.code, interrupted.stderr).toBe(130);
      const line =
        /interrupted: (\d+) of 2000 run\(s\) handled, (\d+) remain; run the same command again/.exec(
          interrupted.stderr,
        );
      expect(line, interrupted.stderr).not.toBeNull();
      const handled = Number(line![1]);
      const remain = Number(line![2]);
      expect(handled + remain).toBe(RUNS);
      expect(remain).toBeGreaterThan(0);
      expect(interrupted.stdout).toMatch(/interrupted: run it again to finish/);
      // The store agrees with what the CLI said, run for run.
      const counts = await client.runs.count();
      expect(counts.byWorkflow['edges']).toMatchObject({ paused: handled, pending: remain });

      const again = await exec(process.execPath, [CLI_MAIN, ...args], env, 60_000);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toMatch(
        new RegExp(`pause: ${remain} matched, ${remain} done, 0 refused, 0 failed\\n`),
      );
      const after = (await client.runs.count()).byWorkflow['edges'];
      expect(after?.paused).toBe(RUNS);
      expect(after?.pending ?? 0).toBe(0);
    },
  );

  it('an unknown flag prints one line and where the help is, not the help, and exits 2', async () => {
    const result = await exec(process.execPath, [CLI_MAIN, 'runs', 'list', '--colour'], env, 30_000);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("error: unknown option '--colour'\n(see 'baton runs list --help')\n");
    expect(result.stdout).toBe('');
  });

  it('shows sealed values as protected without the key and opens them with --set; refuses a keyless start', async () => {
    const keys = `k1:${randomBytes(32).toString('base64')}`;
    const protection = resolvePayloadProtection({ encryptionKeys: keys }, {});
    const secret = `sealed-${randomBytes(4).toString('hex')}`;
    const runId = `edge-sealed-${randomBytes(4).toString('hex')}`;
    // As a worker that encrypts leaves a finished run, and reports itself.
    await adapters.store.runs.create({
      runId,
      workflow: 'edges',
      version: 1,
      input: sealValue({ secret }, runId, 'run input', protection),
      idempotencyKey: null,
    });
    await adapters.store.fleet.report(
      {
        workerId: 'edge-sealer',
        host: 'here',
        pid: 1,
        batonVersion: '0.1.0',
        workflows: [{ name: 'edges', versions: [1] }],
        startedAt: Date.now(),
        lastRenewalAt: null,
        runsHeld: 0,
        concurrency: 1,
        draining: false,
        encryption: { activeKey: 'k1', keys: ['k1'], allowsPlaintext: false },
      },
      60_000,
    );
    try {
      const blind = await exec(process.execPath, [CLI_MAIN, 'runs', 'describe', runId], env, 30_000);
      expect(blind.code, blind.stderr).toBe(0);
      expect(blind.stdout).toMatch(/input\s+│\s+protected \(key k1\)/);
      expect(blind.stdout).not.toContain(secret);
      const keyed = ['--set', `BATON_ENCRYPTION_KEYS=${keys}`];
      const seen = await exec(process.execPath, [CLI_MAIN, 'runs', 'describe', runId, ...keyed], env, 30_000);
      expect(seen.code, seen.stderr).toBe(0);
      expect(seen.stdout).toContain(`{"secret":"${secret}"}`);

      const start = ['runs', 'start', 'edges@1', '--input', '{"n":1}', '--allow-unregistered'];
      const refused = await exec(process.execPath, [CLI_MAIN, ...start], env, 30_000);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toMatch(/the fleet requires encryption with key k1 .*Nothing was sent/);
      const started = await exec(process.execPath, [CLI_MAIN, ...start, ...keyed], env, 30_000);
      expect(started.code, started.stderr).toBe(0);
    } finally {
      await adapters.store.fleet.forget('edge-sealer');
    }
  });

  it(
    'the console answers 503 with Retry-After while the store is frozen (SIGSTOP), and 200 once thawed',
    { timeout: 60_000 },
    async () => {
      const port = await freePort();
      const served = start(['console', '--port', String(port), '--store-timeout', '1000'], env);
      try {
        await until('the console to listen', () => served.out().includes('Baton console on'));
        const runs = `http://127.0.0.1:${port}/api/runs?limit=1`;
        expect((await fetch(runs)).status).toBe(200);
        const pid = redis.pid()!;
        process.kill(pid, 'SIGSTOP');
        let frozen: Response;
        const asked = Date.now();
        try {
          frozen = await fetch(runs, { signal: AbortSignal.timeout(15_000) });
        } finally {
          process.kill(pid, 'SIGCONT');
        }
        // Without the bound the request hangs for as long as the store is frozen (here: until the 15 s abort).
        expect(Date.now() - asked).toBeLessThan(10_000);
        expect(frozen.status).toBe(503);
        expect(frozen.headers.get('retry-after')).toBe('1');
        const body = (await frozen.json()) as { error: string; code: string };
        expect(body.code).toBe('BATON_STORE_TIMEOUT');
        expect(body.error).toMatch(
          /the store did not answer runs\.list\(\) within 1000 ms \(BATON_CONSOLE_STORE_TIMEOUT_MS\)/,
        );
        await until('the thawed store to answer', async () => (await fetch(runs)).status === 200, 10_000);
        expect(served.err()).toMatch(/console: the store did not answer runs\.list\(\)/);
      } finally {
        served.child.kill('SIGINT');
      }
      expect((await served.exited).code).toBe(0);
    },
  );
});
