/**
 * examples/webhooks as its README runs it: `baton dev ./examples/webhooks/payments.ts` as a process
 * (the real binary, embedded bus and store), and the provider's events sent by the example's own
 * `send.sh` (a shell, openssl and curl, signing as Stripe does). An invoice event starts a run, the
 * run prints its payment link, the payment event resolves the run's promise by the link's token;
 * each event sent twice makes one effect; an event whose body was changed after signing is refused.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@baton/testing/crash';

const CLI_MAIN = resolve(REPO_ROOT, 'apps/cli/dist/main.js');
const SEND = resolve(REPO_ROOT, 'examples/webhooks/send.sh');
const SECRET = randomBytes(24).toString('hex');

/** Runs send.sh with the secret; resolves its JSON answer and the status curl reported. */
function send(url: string, event: object, secret = SECRET): Promise<Record<string, unknown>> {
  return new Promise((done, failed) => {
    execFile(
      SEND,
      [url, JSON.stringify(event)],
      { env: { PATH: process.env.PATH, PAYMENTS_WEBHOOK_SECRET: secret }, timeout: 30_000 },
      (error, stdout, stderr) => {
        if (error) failed(new Error(`send.sh failed: ${error.message}\n${stderr}`));
        else done(JSON.parse(stdout) as Record<string, unknown>);
      },
    );
  });
}

describe('examples/webhooks: a payment provider drives a workflow through baton dev', () => {
  let dev: ChildProcess | undefined;
  const lines: string[] = [];
  let base = '';
  let hook = '';

  /** The first output line matching `test`, waiting up to 30 s for it. */
  async function line(test: RegExp): Promise<string> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const found = lines.find((l) => test.test(l));
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`no line matching ${test}; output:\n${lines.join('\n')}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  beforeAll(async () => {
    dev = spawn(
      process.execPath,
      [CLI_MAIN, 'dev', './examples/webhooks/payments.ts', '--port', '0', '--no-watch'],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, NODE_OPTIONS: '', PAYMENTS_WEBHOOK_SECRET: SECRET },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    createInterface({ input: dev.stdout! }).on('line', (l) => lines.push(l));
    createInterface({ input: dev.stderr! }).on('line', (l) => lines.push(`stderr: ${l}`));
    base = (await line(/^ {2}console {2}http:\/\//)).trim().split(/\s+/)[1]!;
    hook = (await line(/^ {2}webhook {2}http:\/\//)).trim().split(/\s+/)[1]!;
  }, 90_000);

  afterAll(() => {
    if (dev !== undefined && dev.exitCode === null) dev.kill('SIGKILL');
  });

  it('starts the invoice, pays it by the token in the link, and takes each repeated event once', async () => {
    expect(hook).toBe(`${base}v1/webhooks/payments`);
    const requested = { id: 'evt_1', type: 'invoice.requested', data: { customer: 'ada', cents: 1200 } };
    const started = await send(hook, requested);
    expect(started).toMatchObject({
      webhook: 'payments',
      deliveryId: 'evt_1',
      action: 'start',
      created: true,
    });
    const runId = started['runId'] as string;
    expect(await send(hook, requested)).toMatchObject({ action: 'start', runId, created: false });

    const link = await line(/^payment link for ada: /);
    const token = /ref=(bp_[\w-]+)$/.exec(link)?.[1];
    expect(token).toBeDefined();
    const paid = { id: 'evt_2', type: 'payment.succeeded', data: { ref: token } };
    // Signed with another secret: refused, nothing resolved.
    expect(await send(hook, paid, 'not-the-provider-secret')).toMatchObject({
      error: { code: 'BATON_BAD_SIGNATURE' },
    });
    expect(await send(hook, paid)).toMatchObject({ action: 'resolve', status: 'resolved' });
    expect(await send(hook, paid)).toMatchObject({ action: 'resolve', status: 'resolved' });
    expect(await send(hook, { id: 'evt_3', type: 'customer.updated', data: {} })).toMatchObject({
      action: 'ignore',
      reason: 'event type customer.updated',
    });

    const result = await fetch(`${base}v1/runs/${runId}/result?wait=20s`);
    expect(await result.json()).toEqual({
      runId,
      status: 'completed',
      result: { customer: 'ada', cents: 1200, paymentId: 'evt_2' },
    });
    // One link was sent: the repeated invoice event started nothing more.
    expect(lines.filter((l) => l.startsWith('payment link for'))).toHaveLength(1);
  }, 60_000);
});
