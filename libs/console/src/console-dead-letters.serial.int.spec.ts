/**
 * Redriving dead letters in bulk from the dead letters page, end to end in a real headless
 * Chromium over a worker process on NATS + Redis: starts of a workflow the worker lacks are
 * dead-lettered (unknown-workflow); the page's bulk redrive, filtered to that code and reached by
 * keyboard, shows the count in its confirmation, then its progress to the end; every letter left
 * and its start went back on the run queue (it is dead-lettered again as a new letter of the same
 * run, since nothing registers the workflow: a worker that does would redrive such letters by
 * itself when it starts, so this spec cannot use one as the fix). A read-only console shows no
 * bulk redrive and refuses one sent anyway. Screenshots are saved under .tmp/console-screenshots/.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshot, tabTo, unnamedControls } from './browser.spec-helper.js';
import { buildConsole, consoleFleet, until } from './console-fleet.spec-helper.js';
import { freeConsolePort } from './console-port.spec-helper.js';
import { startConsole, type ConsoleServer } from './index.js';

const LATE = { name: 'console_late', version: 1 };
const LETTERS = 3;

const { ns, env, fleet, client, dispose } = consoleFleet('condl', {
  BATON_FETCH_WAIT_MS: '100',
  // A start for a workflow no worker has is dead-lettered at once.
  BATON_MISSING_VERSION_GRACE_MS: '0',
});
let browser: Browser | undefined;
const consoles: ConsoleServer[] = [];

async function openPage(server: ConsoleServer, path: string): Promise<Page> {
  const page = await browser!.newPage({ viewport: { width: 1280, height: 1000 } });
  await page.goto(new URL(path, server.url).toString());
  return page;
}

beforeAll(async () => {
  await buildConsole();
  await client.connect();
  await fleet.spawn({ BATON_WORKER_ID: `${ns}-w1` });
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all(consoles.map((c) => c.close()));
  await dispose();
}, 60_000);

describe('redriving dead letters in bulk, in a real browser on NATS + Redis', () => {
  it(
    'counts the letters of a code first, then redrives them all with progress to the end',
    { timeout: 120_000 },
    async () => {
      const runs = await Promise.all(
        Array.from({ length: LETTERS }, (_, i) => client.start(LATE, { n: i + 1 })),
      );
      const before = await until(`${LETTERS} unknown-workflow letters`, async () => {
        const letters = (await client.deadLetters.list()).letters;
        const late = letters.filter((l) => l.code === 'unknown-workflow');
        return late.length === LETTERS ? late.map((l) => l.id) : undefined;
      });

      const server = await startConsole({
        client,
        options: { port: await freeConsolePort() },
        env,
        log: () => {},
      });
      consoles.push(server);
      const page = await openPage(server, '/dead-letters');
      for (const id of before) await page.locator(`tr[data-letter-id="${id}"]`).waitFor();
      const select = page.getByLabel('Dead letters to redrive');
      const option = select.locator('option[value="unknown-workflow"]');
      await option.waitFor({ state: 'attached' });
      expect(await option.textContent()).toBe(`unknown-workflow (${LETTERS})`);
      await select.selectOption('unknown-workflow');
      expect(await unnamedControls(page)).toEqual([]);
      // The keyboard reaches the bulk redrive.
      expect(await tabTo(page, 'Count and confirm redrive…')).toBe(true);
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain(
        `${LETTERS} dead letter(s) with code unknown-workflow will have their original message put back on the run queue`,
      );
      await screenshot(page, 'dead-letters-bulk-confirm');
      await dialog.getByRole('button', { name: `Redrive ${LETTERS} dead letter(s)` }).click();
      const progress = page.getByTestId('dl-bulk-progress');
      await progress.filter({ hasText: 'finished' }).waitFor({ timeout: 30_000 });
      expect(await progress.textContent()).toBe(
        `redrive: ${LETTERS} handled (${LETTERS} redriven, 0 refused, 0 failed); finished`,
      );
      // Each letter left and its start went back on the run queue. No worker registers
      // console_late (nothing was fixed), so each comes back as a new letter of the same run.
      for (const id of before)
        await page.locator(`tr[data-letter-id="${id}"]`).waitFor({ state: 'detached' });
      const after = await until('the starts to be dead-lettered again', async () => {
        const letters = (await client.deadLetters.list()).letters.filter(
          (l) => l.code === 'unknown-workflow',
        );
        return letters.length === LETTERS ? letters : undefined;
      });
      expect(after.filter((l) => before.includes(l.id))).toEqual([]);
      const runIds = await Promise.all(
        after.map(async (l) => {
          const shown = await client.deadLetters.show(l.id);
          return shown.message.readable ? shown.message.message.runId : undefined;
        }),
      );
      expect(runIds.sort()).toEqual(runs.map((r) => r.runId).sort());
      await screenshot(page, 'dead-letters-bulk-done');
      await page.close();
    },
  );

  it(
    'a read-only console shows no bulk redrive and refuses one sent anyway',
    { timeout: 60_000 },
    async () => {
      await client.start({ name: 'console_nowhere', version: 1 }, {});
      await until('a letter', async () =>
        (await client.deadLetters.list()).letters.length > 0 ? true : undefined,
      );
      const server = await startConsole({
        client,
        options: { port: await freeConsolePort(), readOnly: true },
        env,
        log: () => {},
      });
      consoles.push(server);
      const page = await openPage(server, '/dead-letters');
      await page.locator('tr[data-letter-id]').first().waitFor();
      expect(await page.getByRole('button', { name: 'Count and confirm redrive…' }).count()).toBe(0);
      const refused = await page.evaluate(async () => {
        const session = (await (await fetch('/api/session')).json()) as { csrfToken: string };
        const res = await fetch('/api/bulk/dead-letters/redrive', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': session.csrfToken },
          body: '{}',
        });
        return { status: res.status, body: await res.text() };
      });
      expect(refused.status).toBe(403);
      expect(refused.body).toContain('read-only');
      expect((await client.deadLetters.list()).letters.length).toBeGreaterThan(0);
      await page.close();
    },
  );
});
