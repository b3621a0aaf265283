/**
 * What has been said to a run, seen in a real headless Chromium (browser.spec-helper.ts) on the
 * run page of a console served in this process over a real in-process worker on the in-memory bus
 * and store: an update answered (its arguments and result) and one still under way (its handler
 * waits on a step), the run's pending durable promise with only its token's first characters until
 * "reveal" (then the whole token, the one `client.promises.pending` gives), no reveal on a
 * read-only console (and its POST refused 403), and the updates and the promise in the step
 * timeline, the promise resolved once completed. Saves screenshots under .tmp/console-screenshots/.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { defineActivity, defineUpdate, defineWorkflow } from '@baton/core';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Worker } from '@baton/worker';
import { launchChromium, screenshot, unnamedControls } from './browser.spec-helper.js';
import { buildConsole } from './console-fleet.spec-helper.js';
import { freeConsolePort } from './console-port.spec-helper.js';
import { startConsole, type ConsoleServer } from './index.js';

/** Lets the `slow_note` update's step finish (it waits for this). */
let releaseSlow: () => void = () => {};
const slowGate = new Promise<void>((resolve) => (releaseSlow = resolve));

const priceItem = defineActivity({
  name: 'interactions_price',
  run: async (item: { sku: string; qty: number }) => item.qty * 250,
});
const slowStep = defineActivity({
  name: 'interactions_slow',
  run: async (text: string) => {
    await slowGate;
    return text.length;
  },
});
const addItem = defineUpdate<{ sku: string; qty: number }, { totalCents: number }>('add_item');
const slowNote = defineUpdate<string, number>('slow_note');

/** Takes items by update until its approval (a durable promise) is resolved. */
const approvedOrder = defineWorkflow({
  name: 'interactions_order',
  version: 1,
  run: async (ctx, _input: { customer: string }) => {
    let totalCents = 0;
    ctx.onUpdate(addItem, async (item) => {
      totalCents += await ctx.run(priceItem, item);
      return { totalCents };
    });
    ctx.onUpdate(slowNote, (text) => ctx.run(slowStep, text));
    const approval = ctx.promise<{ by: string }>({ timeout: '1h' });
    const { by } = await approval.value;
    return { totalCents, by };
  },
});

let transport: ReturnType<typeof memoryTransport>;
let store: ReturnType<typeof memoryStore>;
let worker: Worker;
let client: Client;
let server: ConsoleServer;
let readOnly: ConsoleServer;
let browser: Browser;
const logged: string[] = [];

beforeAll(async () => {
  await buildConsole();
  transport = memoryTransport();
  store = memoryStore();
  worker = new Worker({ transport, store, workflows: [approvedOrder] });
  await worker.start();
  client = new Client({ transport, store });
  server = await startConsole({
    client,
    options: { port: await freeConsolePort() },
    env: {},
    log: (line) => logged.push(line),
  });
  readOnly = await startConsole({
    client,
    options: { port: await freeConsolePort(), readOnly: true },
    env: {},
    log: () => {},
  });
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  releaseSlow();
  await browser?.close();
  await server?.close();
  await readOnly?.close();
  await worker?.stop();
  await client?.close();
});

async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The text of the table row of the update whose id this is. */
function updateRow(page: Page, updateId: string) {
  return page.locator(`table.updates tr[data-update-id="${updateId}"]`);
}

describe('a run’s updates and durable promises on the console’s run page', () => {
  it(
    'shows updates answered and under way, and a pending promise whose token only a reveal shows',
    { timeout: 90_000 },
    async () => {
      const run = await client.start(approvedOrder, { customer: 'c-42' });
      const pending = await until('the run to make its promise', async () => {
        const [first] = await client.promises.pending(run.runId).catch(() => []);
        return first;
      });
      const token = pending.token;
      expect(await client.update(run.runId, addItem, { sku: 'A7', qty: 2 }, { updateId: 'add-1' })).toEqual({
        totalCents: 500,
      });
      // Its handler waits on a step the spec releases later: accepted, not answered.
      const slow = client.update(run.runId, slowNote, 'hello', { updateId: 'slow-1', timeoutMs: 60_000 });
      await until('the slow update to be accepted', async () =>
        (await client.history(run.runId)).some(
          (p) => p.entry.type === 'UpdateAccepted' && p.entry.updateId === 'slow-1',
        )
          ? true
          : undefined,
      );

      const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      await page.goto(new URL(`/runs/${encodeURIComponent(run.runId)}`, server.url).toString());
      await updateRow(page, 'slow-1').waitFor();
      expect(await updateRow(page, 'add-1').getAttribute('data-outcome')).toBe('completed');
      expect(await updateRow(page, 'add-1').textContent()).toMatch(
        /add_item.*add-1.*completed.*\{"sku":"A7","qty":2\}.*\{"totalCents":500\}/,
      );
      expect(await updateRow(page, 'slow-1').getAttribute('data-outcome')).toBe('accepted');
      expect(await updateRow(page, 'slow-1').textContent()).toMatch(
        /slow_note.*accepted.*"hello".*no answer yet/,
      );

      // The pending promise: its token's first characters only, until revealed.
      const shownToken = page.getByTestId(`promise-token-${pending.seq}`);
      await shownToken.waitFor();
      expect(await shownToken.textContent()).toBe(`${token.slice(0, 6)}…`);
      expect(await page.content()).not.toContain(token);
      // The timeline holds the updates and the promise, and no token either: the compact list by
      // default, the full history (with journal positions) on request.
      await page.locator('ol.events li[data-kind="promise"]').waitFor();
      expect(await page.locator('ol.events li[data-kind="update"]').count()).toBe(2);
      expect(await page.locator('table.steps').count()).toBe(0);
      await page.getByRole('button', { name: 'Full history' }).click();
      await page.locator('table.steps tr[data-kind="promise"]').waitFor();
      expect(await page.locator('table.steps tr[data-kind="update"]').count()).toBe(2);
      expect(await page.locator('svg.timeline-chart g[data-kind="update"]').count()).toBe(2);
      expect(await unnamedControls(page)).toEqual([]);
      await screenshot(page, 'run-updates-and-promises');

      await page.getByRole('button', { name: `Reveal token of #${pending.seq}` }).click();
      await page.getByRole('button', { name: `Hide token of #${pending.seq}` }).waitFor();
      expect(await shownToken.textContent()).toBe(token);
      expect(
        logged.some((line) => line.includes(`POST /api/runs/${run.runId}/promises/${pending.seq}/token`)),
      ).toBe(true);
      expect(logged.join('\n')).not.toContain(token);
      await page.getByRole('button', { name: `Hide token of #${pending.seq}` }).click();
      expect(await shownToken.textContent()).toBe(`${token.slice(0, 6)}…`);

      // A read-only console lists the promise but offers no reveal, and refuses the POST.
      const viewer = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      await viewer.goto(new URL(`/runs/${encodeURIComponent(run.runId)}`, readOnly.url).toString());
      await viewer.getByTestId(`promise-token-${pending.seq}`).waitFor();
      await viewer.getByText('This console is read-only, so it does not reveal tokens.').waitFor();
      expect(await viewer.getByRole('button', { name: /Reveal token/ }).count()).toBe(0);
      expect(await viewer.content()).not.toContain(token);
      const session = (await (await fetch(new URL('/api/session', readOnly.url))).json()) as {
        csrfToken: string;
      };
      const refused = await fetch(
        new URL(`/api/runs/${run.runId}/promises/${pending.seq}/token`, readOnly.url),
        {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': session.csrfToken },
          body: '{}',
        },
      );
      const refusedText = await refused.text();
      expect(refused.status, refusedText).toBe(403);
      expect(refusedText).not.toContain(token);
      await viewer.close();

      // The slow update answers, the promise is resolved: the page shows both as they ended.
      releaseSlow();
      expect(await slow).toBe(5);
      expect(await client.promises.resolve(token, { by: 'ann' })).toEqual({ state: 'resolved' });
      expect(await run.result({ timeoutMs: 20_000 })).toEqual({ totalCents: 500, by: 'ann' });
      await page.locator('table.updates tr[data-update-id="slow-1"][data-outcome="completed"]').waitFor();
      expect(await updateRow(page, 'slow-1').textContent()).toMatch(/completed.*"hello".*5/);
      await page.getByText('The run has finished: nothing waits for a promise any more.').waitFor();
      const promiseRow = page.locator('table.steps tr[data-kind="promise"]');
      await promiseRow.filter({ hasText: 'resolved' }).waitFor();
      expect(await promiseRow.textContent()).toMatch(/\{"by":"ann"\}/);
      expect(await page.content()).not.toContain(token);
      // Each new owner resumed the run after a wait (its promise): no failover.
      await page.getByText(/0 failover\(s\)/).waitFor();
      await screenshot(page, 'run-updates-and-promise-resolved');
      await page.close();
    },
  );
});
