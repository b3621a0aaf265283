/**
 * The runs list as an operator reads it, in a real headless Chromium (browser.spec-helper.ts), on
 * a console served in this process over a real in-process worker on the in-memory bus and store:
 * each run's start (relative, the absolute time and time zone on hover), its duration or how long
 * it has been running, what a suspended or paused run waits for (a signal, a durable promise, a
 * timer, a pause and its reason), a failed run's error's first line, search attributes as the
 * columns the URL names; counts that follow the filters (the store's for one workflow, walked for
 * a run id prefix); no bulk action chosen until the user picks one; and the light and dark themes
 * following the system's preference.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { defineWorkflow } from '@baton/core';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Worker } from '@baton/worker';
import { launchChromium, screenshot } from './browser.spec-helper.js';
import { buildConsole } from './console-fleet.spec-helper.js';
import { freeConsolePort } from './console-port.spec-helper.js';
import { startConsole, type ConsoleServer } from './index.js';

const waitsForGo = defineWorkflow({
  name: 'rl_wait',
  version: 1,
  run: async (ctx, _input: unknown) => ctx.waitForSignal<boolean>('go'),
});
const sleeps = defineWorkflow({
  name: 'rl_sleep',
  version: 1,
  run: async (ctx, _input: unknown) => {
    await ctx.sleep('2h');
    return 'slept';
  },
});
const promises = defineWorkflow({
  name: 'rl_promise',
  version: 1,
  run: async (ctx, _input: unknown) => ctx.promise<string>().value,
});
const fails = defineWorkflow({
  name: 'rl_fail',
  version: 1,
  run: async (_ctx, _input: unknown): Promise<never> => {
    throw new Error('card declined\nsecond line the list does not show');
  },
});
const tagged = defineWorkflow({
  name: 'rl_tagged',
  version: 1,
  run: async (ctx, input: { customer: string }) => {
    await ctx.setAttributes({ customerId: input.customer, tier: 'gold' });
    return input.customer;
  },
});

let store: ReturnType<typeof memoryStore>;
let worker: Worker;
let client: Client;
let server: ConsoleServer;
let browser: Browser;

beforeAll(async () => {
  await buildConsole();
  const transport = memoryTransport();
  store = memoryStore();
  worker = new Worker({ transport, store, workflows: [waitsForGo, sleeps, promises, fails, tagged] });
  await worker.start();
  client = new Client({ transport, store });
  server = await startConsole({ client, options: { port: await freeConsolePort() }, env: {}, log: () => {} });
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await worker?.stop();
  await client?.close();
});

async function until(runId: string, status: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while ((await store.runs.get(runId))?.status !== status) {
    if (Date.now() > deadline) throw new Error(`run ${runId} did not become ${status}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The text of a cell of the run's row. */
function cell(page: Page, runId: string, testId: string) {
  return page.locator(`tr[data-run-id="${runId}"] [data-testid="${testId}"]`);
}

describe('the runs list', () => {
  it(
    'says how long each run took, what each waiting run waits for, why each failed, and shows picked attributes',
    { timeout: 90_000 },
    async () => {
      const waiting = await client.start(waitsForGo, null);
      const sleeping = await client.start(sleeps, null);
      const promising = await client.start(promises, null);
      const failed = await client.start(fails, null);
      const done = await client.start(tagged, { customer: 'c-42' });
      const paused = await client.start(waitsForGo, null);
      await until(waiting.runId, 'suspended');
      await until(sleeping.runId, 'suspended');
      await until(promising.runId, 'suspended');
      await until(failed.runId, 'failed');
      await until(done.runId, 'completed');
      await until(paused.runId, 'suspended');
      expect(await client.runs.pause(paused.runId, 'checking the data')).toBe('paused');

      const page = await browser.newPage();
      await page.goto(`${server.url}?cols=customerId,tier`);
      await page.locator(`tr[data-run-id="${done.runId}"]`).waitFor();
      expect(await cell(page, waiting.runId, 'detail').textContent()).toBe('signal go');
      expect(await cell(page, sleeping.runId, 'detail').textContent()).toMatch(
        /^timer at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/,
      );
      expect(await cell(page, promising.runId, 'detail').textContent()).toBe('a durable promise');
      expect(await cell(page, paused.runId, 'detail').textContent()).toBe('paused: checking the data');
      expect(await cell(page, failed.runId, 'detail').textContent()).toBe('Error: card declined');
      expect(await cell(page, done.runId, 'detail').textContent()).toBe('');
      expect(await cell(page, done.runId, 'duration').textContent()).toMatch(/^\d+(\.\d)? (ms|s)$/);
      expect(await cell(page, waiting.runId, 'duration').textContent()).toMatch(/^running for \d/);
      // The attribute columns the URL names, in its order, after the details.
      const headers = await page.locator('table.runs thead th').allTextContents();
      expect(headers).toEqual([
        'Status',
        'Workflow',
        'Run id',
        'Started',
        'Duration',
        'Waits for / error',
        'customerId',
        'tier',
        'Owner',
      ]);
      const doneCells = await page.locator(`tr[data-run-id="${done.runId}"] td`).allTextContents();
      expect(doneCells.slice(6, 8)).toEqual(['c-42', 'gold']);
      // One time format: relative, the absolute time and the time zone on hover.
      const started = page.locator(`tr[data-run-id="${done.runId}"] time`);
      expect(await started.textContent()).toMatch(/^(just now|\d+(\.\d)? s ago)$/);
      expect(await started.getAttribute('title')).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(.+\)$/);
      await screenshot(page, 'runs-list');

      // Counts follow the filters: one workflow from the store's counts, a run id prefix walked.
      await page.goto(`${server.url}?workflow=rl_wait`);
      await expect
        .poll(() => page.getByTestId('counts-scope').textContent())
        .toBe('runs these filters match:');
      expect(await page.locator('.count.status-suspended strong').textContent()).toBe('1');
      expect(await page.locator('.count.status-paused strong').textContent()).toBe('1');
      expect(await page.locator('.count.status-failed strong').textContent()).toBe('0');
      await page.goto(`${server.url}?runIdPrefix=${encodeURIComponent(failed.runId)}`);
      await expect.poll(() => page.locator('.count.status-failed strong').textContent()).toBe('1');
      expect(
        (await page.locator('section.counts').textContent())?.replace(/\s+/g, ' ').includes('total 1'),
      ).toBe(true);

      // No destructive default: nothing is chosen, and nothing can be counted, until the user picks.
      const action = page.getByRole('combobox', { name: /^Bulk action/ });
      expect(await action.inputValue()).toBe('');
      expect(await page.getByRole('button', { name: 'Count and confirm…' }).isDisabled()).toBe(true);
      await action.selectOption('retry');
      expect(await page.getByRole('button', { name: 'Count and confirm…' }).isDisabled()).toBe(false);
      await page.close();
    },
  );

  it(
    'follows the system: light by default, dark when the system asks for it',
    { timeout: 60_000 },
    async () => {
      const colours = async (colorScheme: 'light' | 'dark'): Promise<[string, string]> => {
        const page = await browser.newPage({ colorScheme });
        await page.goto(server.url);
        await page.locator('table.runs').waitFor();
        // Evaluated in the page (a string: this spec is compiled without the DOM's types).
        const found = (await page.evaluate(
          '[getComputedStyle(document.documentElement).backgroundColor, getComputedStyle(document.documentElement).color]',
        )) as [string, string];
        if (colorScheme === 'dark') await screenshot(page, 'runs-dark');
        await page.close();
        return found;
      };
      expect(await colours('light')).toEqual(['rgb(255, 255, 255)', 'rgb(17, 24, 39)']);
      expect(await colours('dark')).toEqual(['rgb(17, 24, 39)', 'rgb(229, 231, 235)']);
    },
  );
});
