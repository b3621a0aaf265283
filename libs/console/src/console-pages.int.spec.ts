/**
 * The schedules, versions and start pages and the header's search box, in a real headless
 * Chromium (browser.spec-helper.ts), on a console served in this process over a real in-process
 * worker on the in-memory bus and store: a schedule with its next due times, paused and triggered
 * through their confirmations; a version with its live worker and unfinished runs; a run started
 * from the form its input schema generates (and the schema's refusal shown beside the field); the
 * search box finding a run by id, by idempotency key, and turning `customerId=42` into the filtered
 * runs page; every control named; and a read-only console offering no start and no schedule action.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Worker } from '@baton/worker';
import { launchChromium, screenshot, tabTo, unnamedControls } from './browser.spec-helper.js';
import { buildConsole, until } from './console-fleet.spec-helper.js';
import { pagesOrder, pagesReport } from './console-pages.spec-helper.js';
import { freeConsolePort } from './console-port.spec-helper.js';
import { startConsole, type ConsoleServer } from './index.js';

let store: ReturnType<typeof memoryStore>;
let worker: Worker;
let client: Client;
let server: ConsoleServer;
let readOnly: ConsoleServer;
let browser: Browser;

beforeAll(async () => {
  await buildConsole();
  const transport = memoryTransport();
  store = memoryStore();
  worker = new Worker({ transport, store, workflows: [pagesOrder, pagesReport] });
  await worker.start();
  client = new Client({ transport, store });
  const common = { client, env: {}, log: () => {}, workflows: [pagesOrder] };
  server = await startConsole({ ...common, options: { port: await freeConsolePort() } });
  readOnly = await startConsole({ ...common, options: { port: await freeConsolePort(), readOnly: true } });
  await client.schedules.create(
    { name: 'pg_report', version: 1 },
    { region: 'eu' },
    {
      scheduleId: 'nightly-eu',
      cron: '0 2 * * *',
      timeZone: 'Europe/Paris',
      note: 'the nightly report',
    },
  );
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await readOnly?.close();
  await worker?.stop();
  await client?.close();
});

function status(runId: string): () => Promise<string | undefined> {
  return async () => (await store.runs.get(runId))?.status;
}

async function confirm(page: Page, consequence: RegExp, button: string): Promise<void> {
  const dialog = page.locator('dialog[open]');
  await dialog.waitFor();
  expect(await dialog.locator('#confirm-consequence').textContent()).toMatch(consequence);
  await dialog.getByRole('button', { name: button }).click();
  await dialog.waitFor({ state: 'detached' });
}

describe('the schedules page', () => {
  it(
    'shows a schedule with its next due times; pause and trigger now go through the confirmation',
    { timeout: 60_000 },
    async () => {
      const page = await browser.newPage();
      await page.goto(`${server.url}schedules`);
      const row = page.locator('tr[data-schedule-id="nightly-eu"]');
      await row.waitFor();
      expect(await row.textContent()).toContain('cron 0 2 * * * (Europe/Paris)');
      const due = row.locator('[data-testid="next-due"] time');
      expect(await due.count()).toBe(3);
      const schedule = await client.schedules.get('nightly-eu');
      expect(await due.first().getAttribute('datetime')).toBe(new Date(schedule.nextDueAt!).toISOString());
      expect(await due.first().textContent()).toMatch(/^in \d+ (h|min|s)/);
      expect(await due.first().getAttribute('title')).toMatch(/\(.+\)$/);
      expect(await unnamedControls(page)).toEqual([]);
      await screenshot(page, 'schedules');

      await page.getByRole('button', { name: 'Pause schedule nightly-eu' }).click();
      await confirm(page, /starts no run of pg_report@1 until resumed/, 'Pause the schedule');
      await row.locator('[data-testid="state"]', { hasText: 'paused' }).waitFor();
      expect((await client.schedules.get('nightly-eu')).paused).toBe(true);
      expect(await page.locator('.notice').textContent()).toMatch(/nightly-eu: paused/);

      await page.getByRole('button', { name: 'Trigger schedule nightly-eu now' }).click();
      await confirm(page, /One run of pg_report@1 starts at once/, 'Start the run now');
      const runs = await until('the triggered run', async () => {
        const page = await client.runs.list({
          workflow: 'pg_report',
          idempotencyKeyPrefix: 'schedule:nightly-eu:now:',
        });
        return page.runs[0];
      });
      await until('the triggered run to complete', async () =>
        (await status(runs.runId)()) === 'completed' ? true : undefined,
      );
      expect(runs.input).toEqual({ region: 'eu' });
      expect((await client.schedules.get('nightly-eu')).nextDueAt).toBe(schedule.nextDueAt);

      await page.getByRole('button', { name: 'Resume schedule nightly-eu' }).click();
      await confirm(page, /from its next due time after now/, 'Resume the schedule');
      await row.locator('[data-testid="state"]', { hasText: 'active' }).waitFor();
      await page.close();
    },
  );
});

describe('the versions page', () => {
  it('shows a version with its live worker and its unfinished runs', { timeout: 60_000 }, async () => {
    const run = await client.start(pagesOrder, { customerId: 'c-1', amount: 1 });
    await until('the order to wait', async () =>
      (await status(run.runId)()) === 'suspended' ? true : undefined,
    );
    const page = await browser.newPage();
    await page.goto(`${server.url}versions`);
    const row = page.locator('tr[data-version="pg_order@1"]');
    await row.waitFor();
    expect(await row.locator('[data-testid="workers"]').textContent()).toBe(worker.workerId);
    expect(await row.locator('[data-testid="unfinished"]').textContent()).toMatch(/^\d+ \(suspended \d+\)$/);
    expect(await row.locator('[data-testid="state"]').textContent()).toBe('in use');
    expect(await page.locator('tr[data-version="pg_report@1"] [data-testid="state"]').textContent()).toBe(
      'drained',
    );
    expect(await unnamedControls(page)).toEqual([]);
    await screenshot(page, 'versions');
    await page.close();
  });
});

describe('the start page', () => {
  it(
    'starts a run from the form its input schema generates, and shows the schema refusal beside the field',
    { timeout: 60_000 },
    async () => {
      const page = await browser.newPage();
      await page.goto(`${server.url}start?workflow=pg_order@1`);
      await page.locator('#input-customerId').waitFor();
      expect(await page.locator('[data-testid="schema-note"]').textContent()).toMatch(
        /follows the input schema/,
      );
      await page.locator('#input-customerId').fill('c-77');
      await page.locator('#input-amount').fill('0');
      await page.getByRole('button', { name: 'Start run…' }).click();
      await confirm(page, /A new run of pg_order@1 starts/, 'Start the run');
      const fieldError = page.locator('#input-amount-error');
      await fieldError.waitFor();
      expect(await fieldError.textContent()).toBe('must be a whole number of at least 1');
      expect(await page.locator('#input-amount').getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('#input-customerId-error').count()).toBe(0);
      await screenshot(page, 'start-refused');

      await page.locator('#input-amount').fill('5');
      await page
        .getByLabel('Idempotency key (optional: a second start with the same key opens the same run)')
        .fill('order-c77');
      expect(await unnamedControls(page)).toEqual([]);
      await page.getByRole('button', { name: 'Start run…' }).click();
      await confirm(page, /under the idempotency key 'order-c77'/, 'Start the run');
      await page.waitForURL(/\/runs\//);
      const runId = decodeURIComponent(new URL(page.url()).pathname.slice('/runs/'.length));
      expect(runId).toBe(client.runIdForKey('pg_order', 'order-c77'));
      const stored = await until('the started run', async () => store.runs.get(runId));
      expect(stored.input).toEqual({ customerId: 'c-77', amount: 5 });

      // A workflow this console has no schema for: JSON.
      await page.goto(`${server.url}start?workflow=pg_report@1`);
      await page.getByLabel('Input (JSON)').waitFor();
      expect(await page.locator('[data-testid="schema-note"]').textContent()).toMatch(/no input schema/);
      await page.close();
    },
  );
});

describe('the search box', () => {
  it(
    'finds a run by id and by idempotency key, and turns customerId=42 into the filtered runs page',
    { timeout: 60_000 },
    async () => {
      const run = await client.start(
        pagesOrder,
        { customerId: '42', amount: 2 },
        { idempotencyKey: 'find-me-7' },
      );
      await until('the run to be tagged', async () =>
        (await store.runs.get(run.runId))?.status === 'suspended' ? true : undefined,
      );
      const page = await browser.newPage();
      await page.goto(`${server.url}workers`);
      const box = page.getByRole('searchbox', { name: /Run id, idempotency key or attribute filter/ });
      await box.waitFor();
      await box.fill(run.runId);
      await box.press('Enter');
      await page.waitForURL(`${server.url}runs/${encodeURIComponent(run.runId)}`);

      await box.fill('find-me-7');
      await box.press('Enter');
      await page.waitForURL(`${server.url}runs/${encodeURIComponent(run.runId)}`);
      await page.goto(`${server.url}workers`);

      await box.fill('customerId=42');
      await box.press('Enter');
      await page.waitForURL(/\/\?attr=customerId%3D42$/);
      await page.locator(`tr[data-run-id="${run.runId}"]`).waitFor();
      expect(await page.locator('tr[data-run-id]').count()).toBe(1);

      await box.fill('nothing here');
      await box.press('Enter');
      const answer = page.locator('.search-answer');
      await answer.waitFor();
      const said = await answer.textContent();
      expect(said).toContain("no run has the id 'nothing here'");
      expect(said).toContain("no run has the idempotency key 'nothing here'");
      expect(said).toContain('it is not an attribute filter');
      await screenshot(page, 'search-nothing');

      // Keyboard: the box and the new pages are reached with Tab.
      await page.goto(`${server.url}versions`);
      expect(await tabTo(page, 'Schedules')).toBe(true);
      expect(await tabTo(page, 'Find')).toBe(true);
      await page.close();
    },
  );
});

describe('a read-only console', () => {
  it('offers no start and no schedule action, and refuses their POSTs', { timeout: 60_000 }, async () => {
    const page = await browser.newPage();
    await page.goto(`${readOnly.url}schedules`);
    await page.locator('tr[data-schedule-id="nightly-eu"]').waitFor();
    expect(await page.getByRole('button', { name: /schedule nightly-eu/ }).count()).toBe(0);
    await page.goto(`${readOnly.url}start?workflow=pg_order@1`);
    await page.locator('#input-customerId').waitFor();
    await page.getByText('This console is read-only: it starts no run.').waitFor();
    expect(await page.getByRole('button', { name: 'Start run…' }).count()).toBe(0);
    const refused = await page.evaluate(async () => {
      const session = (await (await fetch('/api/session')).json()) as { csrfToken: string };
      const headers = { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken };
      const start = await fetch('/api/start', {
        method: 'POST',
        headers,
        body: JSON.stringify({ workflow: 'pg_order', input: { customerId: 'x', amount: 1 } }),
      });
      const pause = await fetch('/api/schedules/nightly-eu/pause', { method: 'POST', headers, body: '{}' });
      return [start.status, pause.status];
    });
    expect(refused).toEqual([403, 403]);
    expect((await client.schedules.get('nightly-eu')).paused).toBe(false);
    await page.close();
  });
});
