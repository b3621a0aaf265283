/**
 * The console's search attribute filter in a real headless Chromium (browser.spec-helper.ts), over
 * a console served in this process on the in-memory store (the page and its API are what is under
 * test here; the stores' filters are the conformance suite's): typing `customerId=42` in the
 * filters puts `attr=customerId=42` in the URL, keeps only that customer's runs, shows that value's
 * counts, and a run's page lists its attributes. Saves screenshots under .tmp/console-screenshots/.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import type { AttributeChanges, Store } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { launchChromium, screenshot, unnamedControls } from './browser.spec-helper.js';
import { buildConsole } from './console-fleet.spec-helper.js';
import { freeConsolePort } from './console-port.spec-helper.js';
import { startConsole, type ConsoleServer } from './index.js';

let store: Store;
let server: ConsoleServer;
let browser: Browser;

async function runWith(runId: string, changes: AttributeChanges): Promise<void> {
  await store.runs.create({ runId, workflow: 'orders', version: 1, input: { runId }, idempotencyKey: null });
  const lease = await store.leases.acquire(runId, 'worker-page', 60_000);
  if (!lease.ok) throw new Error(`could not lease ${runId}`);
  await store.attributes.set(runId, lease.epoch, changes);
  await store.runs.finish(runId, lease.epoch, { status: 'completed', result: null });
}

beforeAll(async () => {
  await buildConsole();
  store = memoryStore();
  const client = new Client({ transport: memoryTransport(), store });
  server = await startConsole({ client, options: { port: await freeConsolePort() }, env: {}, log: () => {} });
  browser = await launchChromium();
  await runWith('run-42-a', {
    customerId: { type: 'keyword', value: '42' },
    total: { type: 'number', value: 120 },
  });
  await runWith('run-42-b', {
    customerId: { type: 'keyword', value: '42' },
    placedAt: { type: 'time', value: 0 },
  });
  await runWith('run-7', { customerId: { type: 'keyword', value: '7' } });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('the console’s search attribute filter', () => {
  it(
    'filters the runs page by an attribute, with its counts, and shows a run’s attributes',
    { timeout: 60_000 },
    async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(server.url);
      await page.locator('tr[data-run-id="run-7"]').waitFor();
      expect(await unnamedControls(page)).toEqual([]);

      await page.getByLabel('Search attributes').fill('customerId=42');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.waitForURL(/attr=customerId%3D42/);
      await page.locator('tr[data-run-id="run-7"]').waitFor({ state: 'detached' });
      await page.locator('tr[data-run-id="run-42-a"]').waitFor();
      const rows = await page
        .locator('table.runs tbody tr')
        .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run-id')));
      expect(rows.sort()).toEqual(['run-42-a', 'run-42-b']);
      await page.locator('.counts', { hasText: 'customerId=42' }).waitFor();
      expect(await page.locator('.counts').textContent()).toMatch(/completed\s*2/);
      await screenshot(page, 'runs-by-attribute');

      // A filter the server refuses is the page's error, not a blank page.
      await page.getByLabel('Search attributes').fill('total:number=lots');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.getByRole('alert').filter({ hasText: "'total:number=lots'" }).waitFor();

      await page.goto(new URL('/runs/run-42-b', server.url).toString());
      const listed = page.getByRole('list', { name: 'Search attributes' });
      await listed.waitFor();
      expect(await listed.textContent()).toMatch(/customerId\s*=\s*42\s*\(keyword\)/);
      expect(await listed.textContent()).toMatch(/placedAt\s*=\s*1970-01-01.*\(time\)/);
      await screenshot(page, 'run-attributes');
      await page.close();
    },
  );
});
