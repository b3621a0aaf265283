/**
 * A run's streams read as their users read them, on real NATS and Redis (a namespace of its own)
 * with the run on a worker process: the real `baton` binary (`node apps/cli/dist/main.js`, built by
 * the tests' global setup) as a process for `baton runs tail`, and `baton serve --api-only` as a
 * process read over HTTP by `fetch` as Server-Sent Events. In order, on one fleet:
 *
 * 1. `runs tail` prints the tokens as the run writes them (before the run has finished), each once,
 *    then the workflow's value as a JSON line, and ends at the close (exit 0);
 * 2. `--json` prints every item as it is, one a line; `--from` resumes after the last one seen;
 * 3. a run with no stream yet is waited for (Ctrl-C there: 130), so is one whose start was not
 *    taken yet; one with several is refused naming them (exit 2); a stream a finished run lacks, a
 *    bad name, `--from 0`, an unknown run (`--wait 0`) are refused;
 * 4. Ctrl-C stops a tail with 130 and says how to go on; going on prints the rest, nothing twice;
 * 5. the HTTP API: the names, the events live, a dropped connection resumed with Last-Event-ID
 *    (each sequence number once in all), the end; 401, 400 and 404 as JSON;
 * 6. the worker SIGKILLed mid-activity: the tail marks the restart on stderr, and the re-run's
 *    tokens follow it.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, type StreamItem } from '@baton/client';
import { WorkerFleet, REPO_ROOT } from '@baton/testing/crash';
import { natsTestUrl, redisTestUrl } from '@baton/testing/servers';
import { loadAdapterCode, operatorAdapters, readOperatorConfig } from '@baton/host';
import { isolatedEnv, removeIsolated } from '@baton/host/testing';
import { sseEvents } from '../../../libs/console/src/server/sse-reader.spec-helper.js';
import type { TokensInput } from './run-streams-workflows.spec-helper.js';

const CLI_MAIN = resolve(REPO_ROOT, 'apps/cli/dist/main.js');
const WORKFLOWS = resolve(REPO_ROOT, 'apps/cli/src/run-streams-workflows.spec-helper.ts');
const TOKENS = { name: 'streams_tokens', version: 1 };
const WORDS = ['Hel', 'lo', ', ', 'wor', 'ld'];
const TOKEN = randomBytes(16).toString('hex');

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** A `baton` process whose output is read as it comes. */
interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Polls `check` until it returns a value other than undefined; fails naming `what` after `ms`. */
async function until<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  ms = 60_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const bus = natsTestUrl();
const store = redisTestUrl();
await loadAdapterCode(readOperatorConfig({ BATON_TRANSPORT_URL: bus, BATON_STORE_URL: store }));

describe(
  'a run’s streams from `baton runs tail` and `baton serve` (nats+redis)',
  { concurrent: false },
  () => {
    const ns = `streams${randomBytes(4).toString('hex')}`;
    const env: Record<string, string> = {
      BATON_TRANSPORT_URL: bus,
      BATON_STORE_URL: store,
      ...isolatedEnv('transport', bus, ns),
      ...isolatedEnv('store', store, ns),
    };
    const fleet = new WorkerFleet({
      ...env,
      BATON_WORKFLOWS: WORKFLOWS,
      BATON_LEASE_MS: '1500',
      BATON_REAP_INTERVAL_MS: '200',
      BATON_FETCH_WAIT_MS: '100',
    });
    const adapters = operatorAdapters(readOperatorConfig(env));
    const client = new Client({ transport: adapters.transport, store: adapters.store });
    const processEnv = { PATH: process.env.PATH, ...env };
    let dir = '';
    let serve: ChildProcess | undefined;
    let api = '';

    const baton = (...args: string[]): Promise<Result> =>
      new Promise((done) => {
        execFile(
          process.execPath,
          [CLI_MAIN, ...args],
          { cwd: REPO_ROOT, env: processEnv, timeout: 60_000, encoding: 'utf8' },
          (error, stdout, stderr) =>
            done({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
        );
      });

    const running = (...args: string[]): Running => {
      const child = spawn(process.execPath, [CLI_MAIN, ...args], {
        cwd: REPO_ROOT,
        env: processEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout!.setEncoding('utf8').on('data', (text: string) => (out += text));
      child.stderr!.setEncoding('utf8').on('data', (text: string) => (err += text));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
        child.once('close', (code, signal) => done({ code, signal })),
      );
      return { child, stdout: () => out, stderr: () => err, exited };
    };

    /** A gate file's path (the activity waits for it) and how to open it. */
    const gateFile = (name: string): { file: string; open: () => Promise<void> } => {
      const file = join(dir, name);
      return { file, open: () => writeFile(file, 'go') };
    };

    /** Starts a run and waits until the store knows it (a worker took its start). */
    const start = async (input: TokensInput): Promise<string> => {
      const { runId } = await client.start(TOKENS, input);
      await until('the run to be taken', () =>
        client.describe(runId).then(
          () => true,
          () => undefined,
        ),
      );
      return runId;
    };

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'baton-run-streams-'));
      await client.connect();
      await fleet.spawn({ BATON_WORKER_ID: `${ns}-first` });
      const served = spawn(process.execPath, [CLI_MAIN, 'serve', '--api-only', '--port', '0'], {
        cwd: REPO_ROOT,
        env: { ...processEnv, BATON_CONSOLE_TOKEN: TOKEN },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      serve = served;
      const errors: string[] = [];
      createInterface({ input: served.stderr! }).on('line', (line) => errors.push(line));
      api = await new Promise<string>((found, failed) => {
        createInterface({ input: served.stdout! }).on('line', (line) => {
          const match = /^Baton HTTP API on (http:\/\/\S+) /.exec(line);
          if (match) found(match[1]!);
        });
        served.once('exit', (code) => failed(new Error(`baton serve exited ${code}: ${errors.join('\n')}`)));
      });
    }, 120_000);

    afterAll(async () => {
      if (serve !== undefined && serve.exitCode === null) serve.kill('SIGKILL');
      await fleet.shutdown();
      await adapters.close();
      await removeIsolated('transport', bus, ns);
      await removeIsolated('store', store, ns);
      await rm(dir, { recursive: true, force: true });
    }, 60_000);

    let finishedRun = '';

    it(
      '1. tails the tokens as the run writes them, once each, then its value line, to the close',
      { timeout: 90_000 },
      async () => {
        const gate = gateFile('tail-live');
        const runId = await start({ words: WORDS, midGate: gate.file });
        const tail = running('runs', 'tail', runId);
        // The first two tokens while the run waits at its gate: printed as written, no newline added.
        await until('the first two tokens', () => (tail.stdout() === 'Hello' ? true : undefined));
        expect(tail.child.exitCode).toBeNull();
        expect((await client.describe(runId)).status).toBe('running');
        await gate.open();
        expect(await tail.exited).toEqual({ code: 0, signal: null });
        expect(tail.stdout()).toBe('Hello, world\n{"words":5}\n');
        expect(tail.stderr()).toBe("[stream 'tokens' ended: closed]\n");
        finishedRun = runId;
      },
    );

    it('2. prints every item as JSON with --json, and resumes with --from', { timeout: 60_000 }, async () => {
      const asJson = await baton('runs', 'tail', finishedRun, '--json');
      expect(asJson.code, asJson.stderr).toBe(0);
      const items = asJson.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as StreamItem);
      expect(items.map((i) => i.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(items[0]).toEqual({ seq: 1, kind: 'chunk', value: 'Hel', step: 0, attempt: 1 });
      expect(items.slice(5)).toEqual([
        { seq: 6, kind: 'chunk', value: { words: 5 } },
        { seq: 7, kind: 'close' },
      ]);
      expect(asJson.stderr).toBe('');
      const rest = await baton('runs', 'tail', finishedRun, '--from', '4');
      expect(rest).toEqual({
        code: 0,
        stdout: 'world\n{"words":5}\n',
        stderr: "[stream 'tokens' ended: closed]\n",
      });
      const restJson = await baton(
        'runs',
        'tail',
        finishedRun,
        '--stream',
        'tokens',
        '--from',
        '6',
        '--json',
      );
      expect(restJson.stdout).toBe(
        '{"seq":6,"kind":"chunk","value":{"words":5}}\n{"seq":7,"kind":"close"}\n',
      );
      const past = await baton('runs', 'tail', finishedRun, '--from', '8');
      expect(past).toEqual({ code: 0, stdout: '', stderr: "[stream 'tokens' ended: closed]\n" });
    });

    it(
      '3. waits for a first stream; refuses several streams, a missing one, a bad name, --from 0 and an unknown run',
      { timeout: 90_000 },
      async () => {
        const gate = gateFile('first-stream');
        const runId = await start({ words: ['a', 'b', 'c'], startGate: gate.file });
        const tail = running('runs', 'tail', runId);
        await until('the wait to be said', () =>
          tail.stderr().includes('has written no stream yet') ? true : undefined,
        );
        expect(tail.stderr()).toBe(
          `run ${runId} has written no stream yet: waiting for its first (Ctrl-C to stop)\n`,
        );
        // A second one waiting, stopped by Ctrl-C before any stream: 130, and how to go on.
        const stopped = running('runs', 'tail', runId);
        await until('the second wait', () => (stopped.stderr().includes('waiting') ? true : undefined));
        stopped.child.kill('SIGINT');
        expect(await stopped.exited).toEqual({ code: 130, signal: null });
        expect(stopped.stderr()).toMatch(
          new RegExp(`\\ninterrupted: to go on, baton runs tail ${runId} --from 1\\n$`),
        );
        await gate.open();
        expect(await tail.exited).toEqual({ code: 0, signal: null });
        expect(tail.stdout()).toBe('abc\n{"words":3}\n');

        const two = await client.start({ name: 'streams_two', version: 1 }, null);
        await two.result({ timeoutMs: 30_000 });
        const several = await baton('runs', 'tail', two.runId);
        expect(several.code).toBe(2);
        expect(several.stdout).toBe('');
        expect(several.stderr).toMatch(
          new RegExp(
            `^usage: run ${two.runId} has 2 streams \\((progress, tokens|tokens, progress)\\): name one with --stream <name>\\n$`,
          ),
        );
        const progress = await baton('runs', 'tail', two.runId, '--stream', 'progress');
        expect(progress).toEqual({
          code: 0,
          stdout: '{"phase":"start"}\n{"phase":"done"}\n',
          stderr: "[stream 'progress' ended: run completed]\n",
        });
        const missing = await baton('runs', 'tail', two.runId, '--stream', 'nope');
        expect(missing.code).toBe(1);
        expect(missing.stderr).toMatch(
          /^refused: run \S+ is completed and has no stream 'nope' \(its streams: /,
        );
        const badName = await baton('runs', 'tail', two.runId, '--stream', 'two words');
        expect(badName.code).toBe(2);
        expect(badName.stderr).toMatch(/^invalid: run stream name 'two words' is not allowed/);
        const badFrom = await baton('runs', 'tail', two.runId, '--from', '0');
        expect(badFrom).toMatchObject({
          code: 2,
          stderr: expect.stringMatching(/^usage: --from '0' is not a sequence number/),
        });
        const unknown = await baton('runs', 'tail', `${ns}-no-such-run`, '--wait', '0');
        expect(unknown.code).toBe(1);
        expect(unknown.stderr).toMatch(/^refused: no run \S+ in this store/);
        // A run whose start is not taken yet (a tail right after `runs start`) is waited for.
        const later = `${ns}-later`;
        const early = running('runs', 'tail', later);
        await until('the wait for the run', () =>
          early.stderr().includes('not known yet') ? true : undefined,
        );
        expect(early.stderr()).toBe(
          `run ${later} is not known yet (its start may still be queued): waiting up to 30 s (--wait)\n`,
        );
        await client.start(TOKENS, { words: ['x', 'y'] }, { runId: later });
        expect(await early.exited).toEqual({ code: 0, signal: null });
        expect(early.stdout()).toBe('xy\n{"words":2}\n');
      },
    );

    it(
      '4. stops on Ctrl-C with 130 and says how to go on; going on prints the rest, nothing twice',
      { timeout: 90_000 },
      async () => {
        const gate = gateFile('interrupt');
        const runId = await start({ words: WORDS, midGate: gate.file });
        const tail = running('runs', 'tail', runId);
        await until('the first two tokens', () => (tail.stdout() === 'Hello' ? true : undefined));
        tail.child.kill('SIGINT');
        expect(await tail.exited).toEqual({ code: 130, signal: null });
        expect(tail.stdout()).toBe('Hello\n');
        const hint = `baton runs tail ${runId} --stream tokens --from 3`;
        expect(tail.stderr()).toBe(`interrupted after item 2: to go on, ${hint}\n`);
        await gate.open();
        await client.result(runId, { timeoutMs: 30_000 });
        const rest = await baton(...hint.split(' ').slice(1));
        expect(rest).toEqual({
          code: 0,
          stdout: ', world\n{"words":5}\n',
          stderr: "[stream 'tokens' ended: closed]\n",
        });
      },
    );

    it(
      '5. serves the names and the events over HTTP: live, resumed with Last-Event-ID, each once; refusals as JSON',
      { timeout: 90_000 },
      async () => {
        const auth = { authorization: `Bearer ${TOKEN}` };
        const gate = gateFile('sse');
        const runId = await start({ words: WORDS, midGate: gate.file });
        const path = `${api}v1/runs/${runId}/streams/tokens`;
        // The first connection takes the first two events, then drops (the caller hangs up).
        const hangUp = new AbortController();
        const first = await fetch(path, { headers: auth, signal: hangUp.signal });
        expect(first.status).toBe(200);
        expect(first.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
        const seen: { id?: string; event: string; data: unknown }[] = [];
        for await (const event of sseEvents(first.body!)) {
          seen.push(event);
          if (seen.length === 2) break;
        }
        hangUp.abort();
        expect((await client.describe(runId)).status).toBe('running');
        expect(await (await fetch(`${api}v1/runs/${runId}/streams`, { headers: auth })).json()).toEqual({
          streams: ['tokens'],
        });
        await gate.open();
        const again = await fetch(path, { headers: { ...auth, 'last-event-id': seen.at(-1)!.id! } });
        for await (const event of sseEvents(again.body!)) seen.push(event);
        expect(seen.map((e) => [e.id, e.event])).toEqual([
          ['1', 'chunk'],
          ['2', 'chunk'],
          ['3', 'chunk'],
          ['4', 'chunk'],
          ['5', 'chunk'],
          ['6', 'chunk'],
          ['7', 'close'],
          [undefined, 'end'],
        ]);
        const text = seen.flatMap((e) => {
          const item = e.data as StreamItem;
          return item.kind === 'chunk' && typeof item.value === 'string' ? [item.value] : [];
        });
        expect(text.join('')).toBe('Hello, world');
        expect(seen.at(-1)!.data).toEqual({ reason: 'closed' });

        const refusal = async (url: string, headers: Record<string, string> = auth) => {
          const res = await fetch(url, { headers });
          expect(res.headers.get('content-type'), url).toMatch(/^application\/json/);
          return { status: res.status, body: (await res.json()) as { error: { code: string } } };
        };
        expect(await refusal(path, {})).toMatchObject({
          status: 401,
          body: { error: { code: 'BATON_UNAUTHORIZED' } },
        });
        expect(await refusal(`${api}v1/runs/${runId}/streams/bad%20name`)).toMatchObject({
          status: 400,
          body: { error: { code: 'BATON_CONFIG' } },
        });
        expect(await refusal(`${api}v1/runs/${ns}-none/streams/tokens`)).toMatchObject({
          status: 404,
          body: { error: { code: 'BATON_NOT_FOUND' } },
        });
      },
    );

    it(
      '6. marks the restart after a SIGKILL mid-activity on stderr; the re-run tokens follow',
      { timeout: 120_000 },
      async () => {
        const gate = gateFile('crash');
        const runId = await start({ words: WORDS, midGate: gate.file });
        const tail = running('runs', 'tail', runId);
        await until('the first two tokens', () => (tail.stdout() === 'Hello' ? true : undefined));
        const [owner] = fleet.alive;
        owner!.signal('SIGKILL');
        await owner!.exited;
        await gate.open();
        await fleet.spawn({ BATON_WORKER_ID: `${ns}-second` });
        expect(await tail.exited).toEqual({ code: 0, signal: null });
        // The first attempt's tokens, a line end before the marker, then the re-run's, once each.
        expect(tail.stdout()).toBe('Hello\nHello, world\n{"words":5}\n');
        expect(tail.stderr()).toMatch(
          /^\[step 0 restarted: attempt \d+; its earlier output superseded\]\n\[stream 'tokens' ended: closed\]\n$/,
        );
        const items = (await baton('runs', 'tail', runId, '--json')).stdout
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line) as StreamItem);
        expect(items.map((i) => (i.kind === 'chunk' ? i.value : i.kind))).toEqual([
          'Hel',
          'lo',
          'reset',
          'Hel',
          'lo',
          ', ',
          'wor',
          'ld',
          { words: 5 },
          'close',
        ]);
        expect(items.map((i) => i.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      },
    );
  },
);
