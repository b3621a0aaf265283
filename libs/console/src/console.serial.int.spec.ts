/**
 * The console end to end: a real headless Chromium (Debian's chromium via playwright-core) on the
 * console's pages, served by the console over a real fleet of worker processes on NATS + Redis,
 * each spec file in its own namespace. In order:
 *
 * 1. the runs page lists both workflows' runs; filtering to one workflow keeps only its runs and
 *    puts the filter in the URL; every control has an accessible name;
 * 2. a run whose worker was SIGKILLed mid-run shows two epochs in its timeline (the first owner,
 *    which NATS does not journal, and the second worker by name) and the failover mark;
 * 3. the workers page lists the live worker with its workflow versions, and the backlog; the
 *    SIGKILLed worker under "Recently departed" as expired, with the run it held linked to its page;
 * 4. a waiting run is cancelled from its page, reached by keyboard, through the confirmation;
 *    the page shows it cancelled without a reload;
 * 5. a read-only console shows no action and refuses one sent anyway (HTTP 403); a run input the
 *    workers sealed reads "protected (key k1)" to a console without the key;
 * 6. `baton console` bound beyond loopback (0.0.0.0) with a token refuses a request without it,
 *    sends a browser to its sign-in form, and lets it in with the token; SIGTERM stops it;
 * 7. pause and resume a waiting run, then a signal whose JSON payload the dialog refuses until it
 *    parses, which completes the run with that payload; fork it; delete it;
 * 8. a bulk cancel of the runs a filter matches: the count in the confirmation, then progress;
 * 9. a dead letter (a start for a workflow no worker has) listed, opened decoded, redriven (it
 *    comes back as a new letter: nothing was fixed) and purged.
 *
 * And on NATS + PostgreSQL, one flow: a runs page opened with its filter in the URL, a run's link
 * followed to its page, its steps drawn and listed.
 *
 * Each test saves a screenshot under .tmp/console-screenshots/.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, type WorkerProcess } from '@baton/testing/crash';
import { resolvePayloadProtection, sealValue } from '@baton/core/runtime';
import { postgresTestUrl } from '@baton/testing/servers';
import { launchChromium, screenshot, tabTo, unnamedControls } from './browser.spec-helper.js';
import { buildConsole, consoleFleet, until } from './console-fleet.spec-helper.js';
import { freeConsolePort } from './console-port.spec-helper.js';
import { startConsole, type ConsoleServer } from './index.js';

const CLI_MAIN = resolve(REPO_ROOT, 'apps/cli/dist/main.js');
const STEPS = { name: 'console_steps', version: 1 };
const WAIT = { name: 'console_wait', version: 1 };
const TOKEN = `e2e-${randomBytes(12).toString('hex')}`;

const { ns, env, fleet, client, adapters, dispose } = consoleFleet('con', {
  BATON_LEASE_MS: '1500',
  BATON_REAP_INTERVAL_MS: '200',
  BATON_FETCH_WAIT_MS: '100',
  // A start for a workflow no worker has is dead-lettered at once (the dead letters test).
  BATON_MISSING_VERSION_GRACE_MS: '0',
});
let browser: Browser;
let first: WorkerProcess;
/** The run the first worker held when it was SIGKILLed (the timeline test), for the workers page. */
let killedRunId: string | undefined;
let server: ConsoleServer;
const consoles: ConsoleServer[] = [];

async function openPage(path: string, base = server.url): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(new URL(path, base).toString());
  return page;
}

async function status(runId: string): Promise<string | undefined> {
  return (await client.describe(runId).catch(() => undefined))?.status;
}

beforeAll(async () => {
  // The front-end must be built (CI builds everything before the tests; nx caches it).
  await buildConsole(['@baton/cli']);
  await client.connect();
  first = await fleet.spawn({ BATON_WORKER_ID: `${ns}-first` });
  server = await startConsole({ client, options: { port: await freeConsolePort() }, env, log: () => {} });
  consoles.push(server);
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all(consoles.map((c) => c.close()));
  await dispose();
}, 60_000);

describe('the console in a real browser on NATS + Redis', () => {
  it(
    'lists runs and filters them to one workflow, with the filter in the URL',
    { timeout: 60_000 },
    async () => {
      const steps = await Promise.all([0, 1].map(() => client.start(STEPS, { steps: 1, delayMs: 0 })));
      const waiting = await client.start(WAIT, { note: 'listed' });
      for (const run of steps)
        await until(`run ${run.runId} to complete`, async () =>
          (await status(run.runId)) === 'completed' ? true : undefined,
        );
      await until('the waiting run to be known', async () =>
        (await status(waiting.runId)) ? true : undefined,
      );

      const page = await openPage('/');
      await page.locator(`tr[data-run-id="${waiting.runId}"]`).waitFor();
      await page.locator(`tr[data-run-id="${steps[0]!.runId}"]`).waitFor();
      expect(await unnamedControls(page)).toEqual([]);

      await page.getByLabel('Workflow', { exact: true }).fill('console_steps');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.waitForURL(/workflow=console_steps/);
      await page.locator(`tr[data-run-id="${waiting.runId}"]`).waitFor({ state: 'detached' });
      // The filtered page is a new document: its rows, not the old page's going away, are read.
      await page.locator(`tr[data-run-id="${steps[0]!.runId}"]`).waitFor();
      const workflows = await page.locator('table.runs tbody tr td:nth-child(2)').allTextContents();
      expect(workflows.length).toBeGreaterThanOrEqual(2);
      expect(new Set(workflows)).toEqual(new Set(['console_steps@1']));
      expect(await page.locator('.counts').textContent()).toMatch(/completed\s*\d+/);
      await screenshot(page, 'runs-filtered');
      await page.close();
    },
  );

  it(
    'shows two epochs and the failover in the timeline of a run whose worker was SIGKILLed',
    { timeout: 90_000 },
    async () => {
      const { runId } = await client.start(STEPS, { steps: 6, delayMs: 300 });
      await until('two steps done under the first worker', async () => {
        const done = (await client.history(runId)).filter((p) => p.entry.type === 'ActivityCompleted');
        return done.length >= 2 ? true : undefined;
      });
      // Its report lists the run before the kill, so the workers page can say what it held.
      await until('the first worker to report the run', async () =>
        (await client.fleet.workers()).find((w) => w.workerId === `${ns}-first`)?.runs?.includes(runId)
          ? true
          : undefined,
      );
      killedRunId = runId;
      first.signal('SIGKILL');
      await first.exited;
      await fleet.spawn({ BATON_WORKER_ID: `${ns}-second` });
      await until(`run ${runId} to complete`, async () =>
        (await status(runId)) === 'completed' ? true : undefined,
      );

      const page = await openPage(`/runs/${runId}`);
      await page.locator('[data-testid="run-status"]', { hasText: 'completed' }).waitFor();
      await page.locator('svg.timeline-chart').waitFor();
      const lanes = await page
        .locator('svg.timeline-chart [data-lane]')
        .evaluateAll((els) => els.map((el) => el.getAttribute('data-lane')));
      // One lane per worker. On NATS the first owner writes no marker record of its own: its
      // LeaseAcquired rides in its first record, so it is named like every later owner.
      expect(lanes).toEqual([`${ns}-first`, `${ns}-second`]);
      expect(await page.getByTestId('timeline-summary').textContent()).toContain(
        `2 worker(s): ${ns}-first (epoch 1); ${ns}-second (epoch 2). 1 failover(s).`,
      );
      // The compact list says the failover in words; the full history has the journal positions.
      expect(await page.locator('ol.events li.lease-takeover').textContent()).toContain(
        `failover: taken over by ${ns}-second from ${ns}-first (epoch 2)`,
      );
      await page.getByRole('button', { name: 'Full history' }).click();
      expect(await page.locator('svg.timeline-chart [data-kind="activity"]').count()).toBe(6);
      expect(await page.locator('svg.timeline-chart .lease-takeover').count()).toBe(1);
      expect(await page.locator('svg.timeline-chart .lease-takeover title').textContent()).toMatch(
        new RegExp(`failover: epoch 2 taken by ${ns}-second`),
      );
      const rows = page.locator('table.steps tr[data-kind="activity"]');
      expect(await rows.count()).toBe(6);
      expect(await rows.nth(0).textContent()).toContain(`${runId}:0`);
      expect(await rows.nth(5).textContent()).toContain(`epoch 2 · ${ns}-second`);
      expect(await rows.nth(5).textContent()).toContain('50');
      expect(await page.getByText('1 failover(s)').count()).toBe(1);
      await screenshot(page, 'run-timeline-failover');
      await page.close();
    },
  );

  it(
    'shows the live workers with their workflow versions, and the backlog',
    { timeout: 30_000 },
    async () => {
      const page = await openPage('/workers');
      const row = page.locator(`tr[data-worker-id="${ns}-second"]`);
      await row.waitFor();
      expect(await row.textContent()).toContain('console_steps@1');
      expect(await row.textContent()).toContain('console_wait@1');
      expect(await row.textContent()).toContain('live');
      // The SIGKILLed worker's report has expired or is shown as disconnected, never as live.
      const killed = page.locator(`tr[data-worker-id="${ns}-first"]`);
      if ((await killed.count()) > 0) expect(await killed.textContent()).not.toContain('live');
      await page.getByText(/nats: \d+ run message\(s\) waiting/).waitFor();
      // Recently departed: the SIGKILLed worker, expired, with the run it held and where it went.
      const departed = page.locator(`tr[data-departed-worker-id="${ns}-first"]`);
      await departed.waitFor();
      expect(await departed.getAttribute('data-ended')).toBe('expired');
      expect(await departed.textContent()).toContain('expired');
      const held = departed.getByRole('link', { name: killedRunId! });
      expect(await held.getAttribute('href')).toBe(`/runs/${encodeURIComponent(killedRunId!)}`);
      expect(await departed.textContent()).toContain(`${killedRunId} → completed`);
      expect(await unnamedControls(page)).toEqual([]);
      await screenshot(page, 'workers');
      await held.click();
      await page.waitForURL(new RegExp(`/runs/${killedRunId}$`));
      await page.close();
    },
  );

  it(
    'cancels a waiting run from its page, by keyboard, after a confirmation',
    { timeout: 60_000 },
    async () => {
      const { runId } = await client.start(WAIT, { note: 'to cancel' });
      await until('the run to wait for its signal', async () =>
        (await status(runId)) === 'suspended' ? true : undefined,
      );
      const page = await openPage(`/runs/${runId}`);
      await page.locator('[data-testid="run-status"]', { hasText: 'suspended' }).waitFor();
      expect(await unnamedControls(page)).toEqual([]);
      expect(await tabTo(page, 'Cancel run')).toBe(true);
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain('ends cancelled');
      await dialog.getByLabel('Reason (optional)').fill('cancelled by the e2e spec');
      await screenshot(page, 'run-cancel-confirm');
      await dialog.getByRole('button', { name: 'Cancel the run' }).click();
      await page.getByRole('status').filter({ hasText: 'cancel requested' }).waitFor();
      // The page polls: the status changes on screen without a reload.
      await page.locator('[data-testid="run-status"]', { hasText: 'cancelled' }).waitFor({ timeout: 30_000 });
      expect(await status(runId)).toBe('cancelled');
      await screenshot(page, 'run-cancelled');
      await page.close();
    },
  );

  it('in read-only mode shows no action and refuses one sent anyway', { timeout: 60_000 }, async () => {
    const readOnly = await startConsole({
      client,
      options: { port: await freeConsolePort(), readOnly: true },
      env,
      log: () => {},
    });
    consoles.push(readOnly);
    const { runId } = await client.start(WAIT, { note: 'read-only' });
    await until('the run to wait', async () => ((await status(runId)) === 'suspended' ? true : undefined));
    const page = await openPage(`/runs/${runId}`, readOnly.url);
    await page.locator('[data-testid="run-status"]', { hasText: 'suspended' }).waitFor();
    await page.locator('header .read-only').waitFor();
    expect(await page.getByRole('button', { name: 'Cancel run' }).count()).toBe(0);
    const refused = await page.evaluate(async (id) => {
      const session = (await (await fetch('/api/session')).json()) as { csrfToken: string };
      const res = await fetch(`/api/runs/${id}/cancel`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': session.csrfToken },
        body: '{}',
      });
      return { status: res.status, body: await res.text() };
    }, runId);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatch(/read-only/);
    expect(await status(runId)).toBe('suspended');
    await screenshot(page, 'run-read-only');
    await page.close();
    await client.cancel(runId, 'cleanup');
  });

  it('shows a value the workers sealed as "protected (key k1)", never its ciphertext or content', async () => {
    const keys = resolvePayloadProtection({ encryptionKeys: `k1:${randomBytes(32).toString('base64')}` }, {});
    const secret = `sealed-${randomBytes(4).toString('hex')}`;
    const runId = `con-sealed-${randomBytes(4).toString('hex')}`;
    // As a worker that encrypts (docs/integrity.md) keeps a run this console's client has no key for.
    await adapters.store.runs.create({
      runId,
      workflow: WAIT.name,
      version: WAIT.version,
      input: sealValue({ note: secret }, runId, 'run input', keys),
      idempotencyKey: null,
    });
    const page = await openPage(`/runs/${runId}`);
    await page.getByText('protected (key k1)').waitFor();
    const text = await page.locator('main').innerText();
    expect(text).not.toContain(secret);
    expect(text).not.toContain('$baton.sealed');
    await screenshot(page, 'run-sealed-input');
    await page.close();
  });
  it(
    'bound beyond loopback, refuses requests without the token and signs a browser in with it',
    { timeout: 60_000 },
    async () => {
      const port = await freeConsolePort();
      const child = spawn(
        process.execPath,
        [CLI_MAIN, 'console', '--host', '0.0.0.0', '--port', String(port)],
        {
          cwd: REPO_ROOT,
          env: { PATH: process.env.PATH, ...env, BATON_CONSOLE_TOKEN: TOKEN },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const output: string[] = [];
      child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
      try {
        await until(
          'the console to listen',
          async () => (output.join('').includes('Baton console on') ? true : undefined),
          30_000,
        );
        const base = `http://127.0.0.1:${port}/`;
        expect((await fetch(`${base}api/runs`)).status).toBe(401);
        expect(
          (await fetch(`${base}api/runs`, { headers: { authorization: 'Bearer not-the-token-at-all' } }))
            .status,
        ).toBe(401);
        expect(
          (await fetch(`${base}api/runs`, { headers: { authorization: `Bearer ${TOKEN}` } })).status,
        ).toBe(200);

        const page = await openPage('/', base);
        await page.waitForURL(/\/login$/);
        expect(await unnamedControls(page)).toEqual([]);
        await screenshot(page, 'login');
        await page.getByLabel('Access token').fill(TOKEN);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('heading', { name: 'Runs' }).waitFor();
        expect(page.url()).not.toContain(TOKEN);
        await screenshot(page, 'runs-signed-in');
        await page.close();
        expect(output.join('')).not.toContain(TOKEN);
      } finally {
        child.kill('SIGTERM');
      }
      expect(await exited).toBe(0);
    },
  );

  it(
    'pauses, resumes and signals a run through the dialogs (the payload checked as JSON), then forks and deletes it',
    { timeout: 90_000 },
    async () => {
      const { runId } = await client.start(WAIT, { note: 'steered' });
      await until('the run to wait', async () => ((await status(runId)) === 'suspended' ? true : undefined));
      const page = await openPage(`/runs/${runId}`);
      const badge = page.locator('[data-testid="run-status"]');
      await badge.filter({ hasText: 'suspended' }).waitFor();
      const dialog = page.getByRole('dialog');

      await page.getByRole('button', { name: 'Pause' }).click();
      expect(await dialog.textContent()).toContain('until you resume it');
      await dialog.getByRole('button', { name: 'Pause the run' }).click();
      await badge.filter({ hasText: 'paused' }).waitFor();
      expect(await status(runId)).toBe('paused');
      await page.getByRole('button', { name: 'Resume' }).click();
      await dialog.getByRole('button', { name: 'Resume the run' }).click();
      await badge.filter({ hasText: 'suspended' }).waitFor({ timeout: 30_000 });

      await page.getByRole('button', { name: 'Send signal' }).click();
      const send = dialog.getByRole('button', { name: 'Send the signal' });
      await dialog.getByLabel('Signal name').fill('go');
      await dialog.getByLabel('Payload (JSON)').fill('{"answer": 42');
      expect(await send.isDisabled()).toBe(true);
      expect(await dialog.locator('#payload-check').textContent()).toMatch(/not valid JSON/);
      await screenshot(page, 'run-signal-invalid-json');
      await dialog.getByLabel('Payload (JSON)').fill('{"answer": 42}');
      expect(await send.isEnabled()).toBe(true);
      await send.click();
      await badge.filter({ hasText: 'completed' }).waitFor({ timeout: 30_000 });
      expect(await client.result(runId)).toEqual({ answer: 42 });
      expect(await page.locator('dl.facts').textContent()).toContain('"answer": 42');

      await page.getByRole('button', { name: 'Fork' }).click();
      await dialog.getByLabel('Fork from').locator('option').first().waitFor({ state: 'attached' });
      await dialog.getByRole('button', { name: 'Start the fork' }).click();
      await page.waitForURL((url) => url.pathname.startsWith('/runs/') && !url.pathname.endsWith(runId));
      const forkId = decodeURIComponent(new URL(page.url()).pathname.split('/')[2]!);
      expect((await client.describe(forkId)).forkedFrom?.runId).toBe(runId);

      await page.goto(new URL(`/runs/${runId}`, server.url).toString());
      await badge.filter({ hasText: 'completed' }).waitFor();
      await page.getByRole('button', { name: 'Delete run' }).click();
      expect(await dialog.textContent()).toContain('for good');
      await dialog.getByRole('button', { name: 'Delete for good' }).click();
      await page.getByRole('heading', { name: 'Runs' }).waitFor();
      await expect(client.describe(runId)).rejects.toMatchObject({ code: 'BATON_NOT_FOUND' });
      await page.close();
    },
  );

  it(
    'cancels every run of a filter in bulk: the count first, then progress and a summary',
    { timeout: 60_000 },
    async () => {
      const prefix = `bulk-${ns}-`;
      const runs = await Promise.all(
        [0, 1, 2].map((n) => client.start(WAIT, { note: 'bulk' }, { idempotencyKey: `${prefix}${n}` })),
      );
      for (const run of runs)
        await until('the run to wait', async () =>
          (await status(run.runId)) === 'suspended' ? true : undefined,
        );
      const page = await openPage(`/?idempotencyKeyPrefix=${prefix}`);
      await page.locator(`tr[data-run-id="${runs[0]!.runId}"]`).waitFor();
      await page.getByRole('combobox', { name: /^Bulk action/ }).selectOption('cancel');
      await page.getByRole('button', { name: 'Count and confirm…' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain('3 run(s) match the current filters');
      await screenshot(page, 'runs-bulk-confirm');
      await dialog.getByRole('button', { name: 'Cancel 3 run(s)' }).click();
      await page
        .getByTestId('bulk-progress')
        .filter({ hasText: '3 done, 0 refused, 0 failed); finished' })
        .waitFor();
      for (const run of runs)
        await until('the run to be cancelled', async () =>
          (await status(run.runId)) === 'cancelled' ? true : undefined,
        );
      await page.locator('table.runs .status-cancelled').nth(2).waitFor();
      await screenshot(page, 'runs-bulk-done');
      await page.close();
    },
  );

  it('lists a dead letter, opens it decoded, redrives and purges it', { timeout: 60_000 }, async () => {
    const late = await client.start({ name: 'console_late', version: 1 }, { n: 21 });
    const letter = await until('the unknown-workflow letter', async () =>
      (await client.deadLetters.list()).letters.find((l) => l.code === 'unknown-workflow'),
    );
    const page = await openPage('/dead-letters');
    const row = page.locator(`tr[data-letter-id="${letter.id}"]`);
    await row.waitFor();
    expect(await unnamedControls(page)).toEqual([]);
    await row.getByRole('button', { name: `Open dead letter ${letter.id}` }).click();
    const shown = page.locator('section.letter');
    await shown.waitFor();
    expect(await shown.textContent()).toContain('console_late');
    expect(await shown.textContent()).toContain(late.runId);
    await screenshot(page, 'dead-letter-open');

    const dialog = page.getByRole('dialog');
    await row.getByRole('button', { name: `Redrive dead letter ${letter.id}` }).click();
    expect(await dialog.textContent()).toContain('back on the run queue');
    await dialog.getByRole('button', { name: 'Redrive' }).click();
    await page.getByRole('status').filter({ hasText: 'redriven' }).waitFor();
    await row.waitFor({ state: 'detached' });
    // Nothing registers console_late yet, so the start is dead-lettered again, as a new letter.
    const again = await until('the letter to come back', async () =>
      (await client.deadLetters.list()).letters.find(
        (l) => l.code === 'unknown-workflow' && l.id !== letter.id,
      ),
    );
    const againRow = page.locator(`tr[data-letter-id="${again.id}"]`);
    await againRow.waitFor({ timeout: 15_000 });
    await againRow.getByRole('button', { name: `Purge dead letter ${again.id}` }).click();
    await dialog.getByRole('button', { name: 'Purge for good' }).click();
    await againRow.waitFor({ state: 'detached' });
    expect((await client.deadLetters.list()).letters.find((l) => l.id === again.id)).toBeUndefined();
    await screenshot(page, 'dead-letters-purged');
    await page.close();
  });
});

describe('the console in a real browser on NATS + PostgreSQL', () => {
  const pg = consoleFleet('conpg', { BATON_FETCH_WAIT_MS: '100' }, postgresTestUrl());
  const { ns: pgNs, env: pgEnv, fleet: pgFleet, client: pgClient } = pg;
  let pgConsole: ConsoleServer;

  beforeAll(async () => {
    await pgClient.connect();
    await pgFleet.spawn({ BATON_WORKER_ID: `${pgNs}-only` });
    pgConsole = await startConsole({
      client: pgClient,
      options: { port: await freeConsolePort() },
      env: pgEnv,
      log: () => {},
    });
  }, 60_000);

  afterAll(async () => {
    await pgConsole?.close();
    await pg.dispose();
  }, 60_000);

  it(
    'opens the runs page from a filtered URL and follows a run to its timeline',
    { timeout: 60_000 },
    async () => {
      const { runId } = await pgClient.start(
        STEPS,
        { steps: 3, delayMs: 50 },
        { idempotencyKey: `pg-${pgNs}` },
      );
      await until(`run ${runId} to complete`, async () =>
        (await pgClient.describe(runId).catch(() => undefined))?.status === 'completed' ? true : undefined,
      );
      const page = await openPage(
        `/?workflow=console_steps&status=completed&idempotencyKeyPrefix=pg-`,
        pgConsole.url,
      );
      const link = page.getByRole('link', { name: runId });
      await link.waitFor();
      expect(await page.getByLabel('Workflow', { exact: true }).inputValue()).toBe('console_steps');
      expect(await page.getByLabel('completed').isChecked()).toBe(true);
      await link.click();
      await page.waitForURL(new RegExp(`/runs/${runId}$`));
      await page.locator('[data-testid="run-status"]', { hasText: 'completed' }).waitFor();
      await page.locator('svg.timeline-chart').waitFor();
      expect(await page.locator('svg.timeline-chart [data-kind="activity"]').count()).toBe(3);
      await page.getByRole('button', { name: 'Full history' }).click();
      const rows = page.locator('table.steps tr[data-kind="activity"]');
      expect(await rows.count()).toBe(3);
      expect(await rows.nth(2).textContent()).toContain(`${runId}:2`);
      expect(await rows.nth(2).textContent()).toContain('20');
      expect(await page.locator('dl.facts').textContent()).toContain(`pg-${pgNs}`);
      await screenshot(page, 'postgres-run');
      await page.close();
    },
  );
});
