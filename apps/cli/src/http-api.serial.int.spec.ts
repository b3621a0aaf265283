/**
 * The HTTP API as its users reach it: the real `baton serve` binary (`node apps/cli/dist/main.js`,
 * built by the tests' global setup) as a process, beside a worker process, on NATS + Redis in a namespace of their own,
 * driven by clients that are not Node: `curl` for every route and mistake, a shell with `openssl`
 * signing a webhook as docs/http-api.md shows, and a Java producer using only `java.net.http`
 * (apps/cli/test-fixtures/HttpProducer.java, run by the JDK the Kafka toolchain uses).
 *
 * In order, on one fleet: a start, its result by long poll, the repeated key (200, same run), the
 * description and a filtered listing; a signal and a cancel; the caller's mistakes as JSON 4xx;
 * webhooks signed and refused; webhooks declared in code (`defineWebhook`) starting and signalling
 * runs, each delivery taken once however often it comes; the Java producer; the OpenAPI document; then `serve` stops on SIGTERM.
 *
 * Serial (vitest.config.ts): it times a long poll and a server's SIGTERM, which a busy neighbour
 * stretches. The binary is built by the tests' global setup (libs/testing/src/global-setup.ts).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { WorkerFleet, REPO_ROOT } from '@baton/testing/crash';
import { natsTestUrl, redisTestUrl } from '@baton/testing/servers';
import { signWebhook } from '@baton/client/webhooks';
import { loadAdapterCode, operatorAdapters, readOperatorConfig } from '@baton/host';
import { ORDERS_SECRET } from '../../../libs/console/src/server/v1/api-webhooks.spec-helper.js';
import { isolatedEnv, removeIsolated } from '@baton/host/testing';

const CLI_MAIN = resolve(REPO_ROOT, 'apps/cli/dist/main.js');
/** Plain erasable TypeScript importing only @baton/core: node loads it for `serve` without a loader. */
const WORKFLOWS = resolve(REPO_ROOT, 'libs/console/src/server/v1/api-workflows.spec-helper.ts');
/** The webhooks `serve` loads beside (and the workflow only they use, which the worker runs). */
const WEBHOOKS = resolve(REPO_ROOT, 'libs/console/src/server/v1/api-webhooks.spec-helper.ts');
const JAVA_PRODUCER = resolve(REPO_ROOT, 'apps/cli/test-fixtures/HttpProducer.java');
const OPENAPI_FILE = resolve(REPO_ROOT, 'docs/openapi.json');

const TOKEN = randomBytes(16).toString('hex');
const SECRET = randomBytes(24).toString('hex');

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function run(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 60_000,
): Promise<Ran> {
  return new Promise((done) => {
    execFile(
      file,
      args,
      { cwd: REPO_ROOT, env, timeout: timeoutMs, encoding: 'utf8' },
      (error, stdout, stderr) => {
        done({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

interface Answer {
  status: number;
  body: Record<string, unknown> & { error?: { code: string; message: string; issues?: string[] } };
}

describe('baton serve: the HTTP API from curl, a shell and Java', { concurrent: false }, () => {
  const bus = natsTestUrl();
  const storeUrl = redisTestUrl();
  const ns = `httpapi${randomBytes(4).toString('hex')}`;
  const env: Record<string, string> = {
    BATON_TRANSPORT_URL: bus,
    BATON_STORE_URL: storeUrl,
    ...isolatedEnv('transport', bus, ns),
    ...isolatedEnv('store', storeUrl, ns),
  };
  const fleet = new WorkerFleet({
    ...env,
    BATON_WORKFLOWS: `${WORKFLOWS},${WEBHOOKS}`,
    BATON_LEASE_MS: '1500',
    BATON_REAP_INTERVAL_MS: '200',
    BATON_FETCH_WAIT_MS: '100',
  });
  let adapters: ReturnType<typeof operatorAdapters>;
  let client: Client;
  let serve: ChildProcess;
  let served: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  const serveErr: string[] = [];
  let url = '';

  /** `curl` one request; the status is the last line curl writes (`-w`). */
  async function curl(
    method: string,
    path: string,
    options: { body?: string; headers?: string[]; token?: string | null } = {},
  ): Promise<Answer> {
    const token = options.token === undefined ? TOKEN : options.token;
    const args = ['-sS', '-X', method, '-w', '\n%{http_code}', '--max-time', '60'];
    if (token !== null) args.push('-H', `Authorization: Bearer ${token}`);
    for (const header of options.headers ?? []) args.push('-H', header);
    if (options.body !== undefined)
      args.push('-H', 'Content-Type: application/json', '--data-binary', options.body);
    args.push(`${url}${path.slice(1)}`);
    const answer = await run('curl', args);
    expect(answer.code, answer.stderr).toBe(0);
    const at = answer.stdout.lastIndexOf('\n');
    return {
      status: Number(answer.stdout.slice(at + 1)),
      body: JSON.parse(answer.stdout.slice(0, at)) as Answer['body'],
    };
  }

  /** Waits until the store knows the run with `status` (the fleet took its start). */
  async function untilStatus(runId: string, status: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    while ((await client.describe(runId).catch(() => undefined))?.status !== status) {
      if (Date.now() > deadline) throw new Error(`run ${runId} did not become ${status}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  beforeAll(async () => {
    const config = readOperatorConfig(env);
    await loadAdapterCode(config);
    adapters = operatorAdapters(config);
    client = new Client({ transport: adapters.transport, store: adapters.store });
    await client.connect();
    await fleet.spawn({ BATON_WORKER_ID: `${ns}-worker` });
    serve = spawn(
      process.execPath,
      [CLI_MAIN, 'serve', '--port', '0', '--workflows', WORKFLOWS, '--workflows', WEBHOOKS],
      {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH, ...env, BATON_CONSOLE_TOKEN: TOKEN, BATON_API_WEBHOOK_SECRET: SECRET },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    served = new Promise((done) => serve.once('exit', (code, signal) => done({ code, signal })));
    createInterface({ input: serve.stderr! }).on('line', (line) => serveErr.push(line));
    url = await new Promise<string>((found, failed) => {
      createInterface({ input: serve.stdout! }).on('line', (line) => {
        const match = /^Baton console and HTTP API on (http:\/\/\S+) /.exec(line);
        if (match) found(match[1]!);
      });
      void served.then(({ code }) => failed(new Error(`baton serve exited ${code}: ${serveErr.join('\n')}`)));
    });
  }, 300_000);

  afterAll(async () => {
    if (serve !== undefined && serve.exitCode === null) serve.kill('SIGKILL');
    await fleet.shutdown();
    await adapters?.close();
    await removeIsolated('transport', bus, ns);
    await removeIsolated('store', storeUrl, ns);
  }, 60_000);

  it(
    'starts a run, long-polls its result, answers its repeated key 200 with the same run, describes and lists it',
    { timeout: 60_000 },
    async () => {
      const start = JSON.stringify({
        workflow: 'api_greet',
        input: { name: 'curl' },
        idempotencyKey: `${ns}-greet`,
      });
      const started = await curl('POST', '/v1/runs', { body: start });
      expect(started.status).toBe(201);
      const runId = started.body['runId'] as string;
      expect(await curl('GET', `/v1/runs/${runId}/result?wait=30s`)).toEqual({
        status: 200,
        body: { runId, status: 'completed', result: 'hello, curl' },
      });
      expect(await curl('POST', '/v1/runs', { body: start })).toEqual({ status: 200, body: { runId } });
      const described = await curl('GET', `/v1/runs/${runId}`);
      expect(described).toMatchObject({
        status: 200,
        body: { runId, workflow: 'api_greet', version: 2, status: 'completed', input: { name: 'curl' } },
      });
      const listed = await curl(
        'GET',
        `/v1/runs?workflow=api_greet&idempotencyKeyPrefix=${ns}-&status=completed`,
      );
      expect(listed.status).toBe(200);
      expect((listed.body['runs'] as { runId: string }[]).map((r) => r.runId)).toEqual([runId]);
    },
  );

  it(
    'signals a waiting run to completion, cancels another, and refuses both once finished (409)',
    { timeout: 60_000 },
    async () => {
      const waiting = (await curl('POST', '/v1/runs', { body: '{"workflow":"api_wait"}' })).body[
        'runId'
      ] as string;
      const doomed = (await curl('POST', '/v1/runs', { body: '{"workflow":"api_wait","input":{}}' })).body[
        'runId'
      ] as string;
      await untilStatus(waiting, 'suspended');
      expect(await curl('GET', `/v1/runs/${waiting}/result?wait=100ms`)).toEqual({
        status: 202,
        body: { runId: waiting, status: 'suspended' },
      });
      const signal = await curl('POST', `/v1/runs/${waiting}/signals/go`, {
        body: '{"approved":true}',
        headers: ['Idempotency-Key: approval-1'],
      });
      expect(signal).toEqual({ status: 202, body: { runId: waiting, signal: 'go' } });
      expect((await curl('GET', `/v1/runs/${waiting}/result?wait=30s`)).body).toEqual({
        runId: waiting,
        status: 'completed',
        result: { approved: true },
      });
      expect((await curl('POST', `/v1/runs/${waiting}/signals/go`, { body: 'true' })).status).toBe(409);

      await untilStatus(doomed, 'suspended');
      const cancel = await curl('POST', `/v1/runs/${doomed}/cancel`, { body: '{"reason":"from curl"}' });
      expect(cancel).toEqual({ status: 202, body: { runId: doomed, status: 'cancel-requested' } });
      const cancelled = await curl('GET', `/v1/runs/${doomed}/result?wait=30s`);
      expect(cancelled).toMatchObject({
        status: 200,
        body: { status: 'cancelled', error: { code: 'BATON_CANCELLED' } },
      });
      const again = await curl('POST', `/v1/runs/${doomed}/cancel`);
      expect(again).toMatchObject({ status: 409, body: { error: { code: 'BATON_RUN_STATE' } } });
    },
  );

  it("answers the caller's mistakes with JSON 4xx errors", { timeout: 60_000 }, async () => {
    const invalid = await curl('POST', '/v1/runs', { body: '{"workflow":"api_greet","input":{"name":""}}' });
    expect(invalid).toMatchObject({
      status: 422,
      body: { error: { code: 'BATON_INVALID_INPUT', issues: ['$.name: must be 1 to 40 characters'] } },
    });
    const unknownWorkflow = await curl('POST', '/v1/runs', { body: '{"workflow":"api_nope"}' });
    expect(unknownWorkflow).toMatchObject({
      status: 422,
      body: { error: { code: 'BATON_UNKNOWN_WORKFLOW' } },
    });
    const unknownRun = await curl('GET', '/v1/runs/no-such-run');
    expect(unknownRun).toMatchObject({ status: 404, body: { error: { code: 'BATON_NOT_FOUND' } } });
    expect((await curl('GET', '/v1/runs/no-such-run/result?wait=200ms')).status).toBe(404);
    const badWait = await curl('GET', '/v1/runs/no-such-run/result?wait=forever');
    expect(badWait).toMatchObject({ status: 400, body: { error: { code: 'BATON_BAD_REQUEST' } } });
    const notJson = await curl('POST', '/v1/runs', { body: '{"workflow":' });
    expect(notJson).toMatchObject({ status: 400, body: { error: { code: 'BATON_BAD_REQUEST' } } });
    const form = await run('curl', [
      '-sS',
      '-w',
      '\n%{http_code}',
      '-H',
      `Authorization: Bearer ${TOKEN}`,
      '-d',
      'workflow=api_greet',
      `${url}v1/runs`,
    ]);
    expect(form.stdout).toMatch(/"code":"BATON_UNSUPPORTED_MEDIA_TYPE"[^]*\n415$/);
    const wrongToken = await curl('GET', '/v1/runs', { token: 'not-the-token-at-all' });
    expect(wrongToken).toMatchObject({ status: 401, body: { error: { code: 'BATON_UNAUTHORIZED' } } });
    expect((await curl('GET', '/v1/runs', { token: null })).status).toBe(401);
    expect(serveErr.join('\n')).not.toMatch(/BATON_INTERNAL|\b500\b/);
  });

  it(
    'admits a webhook signed with openssl as docs/http-api.md shows, and refuses a bad signature',
    { timeout: 60_000 },
    async () => {
      const runId = (await curl('POST', '/v1/runs', { body: '{"workflow":"api_wait"}' })).body[
        'runId'
      ] as string;
      await untilStatus(runId, 'suspended');
      const send = async (secret: string): Promise<string> => {
        // The recipe of docs/http-api.md ("Webhooks"), in a shell, with no token.
        const script = [
          'body=\'{"type":"payment.succeeded","amount":1200}\'',
          't=$(date +%s)',
          'sig=$(printf \'%s.%s\' "$t" "$body" | openssl dgst -sha256 -hmac "$SECRET" -r | cut -d" " -f1)',
          'curl -sS -w "\\n%{http_code}" -X POST "$URL/v1/runs/$RUN/signals/go" -H "Content-Type: application/json" -H "Baton-Signature: t=$t,v1=$sig" --data-binary "$body"',
        ].join('\n');
        const shell = await run('sh', ['-c', script], {
          PATH: process.env.PATH,
          SECRET: secret,
          URL: url.replace(/\/$/, ''),
          RUN: runId,
        });
        expect(shell.code, shell.stderr).toBe(0);
        return shell.stdout;
      };
      const refused = await send('not-the-secret-0123456789');
      expect(refused).toMatch(/"code":"BATON_BAD_SIGNATURE"[^]*\n401$/);
      expect(await send(SECRET)).toMatch(/\n202$/);
      expect((await curl('GET', `/v1/runs/${runId}/result?wait=30s`)).body).toEqual({
        runId,
        status: 'completed',
        result: { type: 'payment.succeeded', amount: 1200 },
      });
      expect(serveErr).toContain(`api: webhook POST /v1/runs/${runId}/signals/go 202`);
    },
  );

  it(
    'serves the webhooks its modules declare: a signed delivery starts a run or signals one, a repeat makes nothing new',
    { timeout: 60_000 },
    async () => {
      expect(serveErr).toContain(`HTTP API: webhook orders at ${url}v1/webhooks/orders`);
      const deliver = (event: object): Promise<Answer> => {
        const body = JSON.stringify(event);
        // No token: the webhook's signature admits the delivery.
        return curl('POST', '/v1/webhooks/orders', {
          body,
          token: null,
          headers: [`Baton-Signature: ${signWebhook(ORDERS_SECRET, body)}`],
        });
      };
      const created = await deliver({ id: `${ns}-evt-1`, type: 'order.created', name: 'hook' });
      expect(created).toMatchObject({ status: 201, body: { action: 'start', created: true } });
      const runId = created.body['runId'] as string;
      expect((await curl('GET', `/v1/runs/${runId}/result?wait=30s`)).body).toEqual({
        runId,
        status: 'completed',
        result: 'hello, hook (v1)',
      });
      expect(await deliver({ id: `${ns}-evt-1`, type: 'order.created', name: 'hook' })).toMatchObject({
        status: 200,
        body: { runId, created: false },
      });

      const notes = (await curl('POST', '/v1/runs', { body: '{"workflow":"api_two_notes"}' })).body[
        'runId'
      ] as string;
      await untilStatus(notes, 'suspended');
      const first = { id: `${ns}-evt-2`, type: 'order.note', runId: notes, name: 'first' };
      expect((await deliver(first)).status).toBe(202);
      expect((await deliver(first)).status).toBe(202);
      expect((await deliver({ ...first, id: `${ns}-evt-3`, name: 'second' })).status).toBe(202);
      expect((await curl('GET', `/v1/runs/${notes}/result?wait=30s`)).body).toEqual({
        runId: notes,
        status: 'completed',
        result: ['first', 'second'],
      });
      const forged = await curl('POST', '/v1/webhooks/orders', {
        body: JSON.stringify(first),
        token: null,
        headers: [`Baton-Signature: ${signWebhook('not-the-orders-secret', JSON.stringify(first))}`],
      });
      expect(forged).toMatchObject({ status: 401, body: { error: { code: 'BATON_BAD_SIGNATURE' } } });
    },
  );

  it(
    'takes a start from a Java producer using only java.net.http, which reads its outcome by long poll',
    { timeout: 120_000 },
    async () => {
      const key = `${ns}-java`;
      const java = await run('java', [JAVA_PRODUCER, url, TOKEN, key, 'Java'], process.env, 90_000);
      expect(java.code, java.stderr).toBe(0);
      const [startedLine, outcomeLine] = java.stdout.trim().split('\n');
      const runId = client.runIdForKey('api_greet', key);
      expect(startedLine).toBe(`started ${runId} 201`);
      expect(JSON.parse(outcomeLine!.replace(/^outcome /, ''))).toEqual({
        runId,
        status: 'completed',
        result: 'hello, Java',
      });
      // The same key from another client names the same run (one JVM per spec keeps it short).
      const repeat = JSON.stringify({ workflow: 'api_greet', input: { name: 'Java' }, idempotencyKey: key });
      expect(await curl('POST', '/v1/runs', { body: repeat })).toEqual({ status: 200, body: { runId } });
    },
  );

  it(
    'serves the OpenAPI document checked in as docs/openapi.json, and stops on SIGTERM',
    { timeout: 60_000 },
    async () => {
      const doc = await curl('GET', '/v1/openapi.json', { token: null });
      expect(doc.status).toBe(200);
      expect(doc.body).toEqual(JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')));
      serve.kill('SIGTERM');
      expect(await served).toEqual({ code: 0, signal: null });
      expect(serveErr).toContain(
        'HTTP API: input schemas of api_counter@1, api_fail@1, api_greet@1, api_greet@2, api_two_notes@1, api_wait@1, api_worker_only@3',
      );
    },
  );
});
