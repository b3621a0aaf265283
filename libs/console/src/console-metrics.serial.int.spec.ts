/**
 * The workers page's last hour, end to end: two real worker processes on NATS + Redis serve their
 * /metrics; the console is given both URLs and scrapes them. After both were scraped once (the
 * baseline), runs are started: some complete after two steps each, some fail after their one step
 * fails both its attempts. GET /api/metrics then sums to exactly those runs and attempts across
 * the two workers, and the workers page in a real headless Chromium shows the same totals and both
 * charts. A third URL where no worker listens is reported as failing, by URL, and counts nothing.
 * A screenshot is saved under .tmp/console-screenshots/.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerProcess } from '@baton/testing/crash';
import { launchChromium, screenshot, unnamedControls } from './browser.spec-helper.js';
import { buildConsole, consoleFleet, until } from './console-fleet.spec-helper.js';
import { freeConsolePort } from './console-port.spec-helper.js';
import { startConsole, type ConsoleServer, type MetricsHistorySnapshot } from './index.js';

const STEPS = { name: 'console_steps', version: 1 };
const FAIL = { name: 'console_fail', version: 1 };
const COMPLETING = 6;
const FAILING = 3;

const { ns, env, fleet, client, dispose } = consoleFleet('conm', { BATON_FETCH_WAIT_MS: '100' });
let browser: Browser | undefined;
let server: ConsoleServer | undefined;
let workers: WorkerProcess[] = [];
let deadUrl = '';

function metricsUrl(worker: WorkerProcess): string {
  const port = worker.logs.find((l) => l.msg === 'worker ready')?.httpPort;
  if (typeof port !== 'number') throw new Error(`${worker.name} logged no httpPort in 'worker ready'`);
  return `http://127.0.0.1:${port}/metrics`;
}

async function snapshot(): Promise<MetricsHistorySnapshot> {
  const res = await fetch(new URL('/api/metrics', server!.url));
  expect(res.status).toBe(200);
  return (await res.json()) as MetricsHistorySnapshot;
}

const hourTotal = (
  s: MetricsHistorySnapshot,
  key: 'runsCompleted' | 'runsFailed' | 'activities' | 'activitiesFailed',
) => s.minutes.reduce((n, m) => n + m[key], 0);

beforeAll(async () => {
  await buildConsole();
  await client.connect();
  workers = await Promise.all([1, 2].map((n) => fleet.spawn({ BATON_WORKER_ID: `${ns}-w${n}` })));
  // A port of the console's range that nothing listens on: a worker that is down. Not the
  // console's own port: both are free when chosen, so the second pick could name the first (seen
  // in CI: the "dead" source was scraped without an error).
  const consolePort = await freeConsolePort();
  let deadPort = await freeConsolePort();
  while (deadPort === consolePort) deadPort = await freeConsolePort();
  deadUrl = `http://127.0.0.1:${deadPort}/metrics`;
  server = await startConsole({
    client,
    options: { port: consolePort, metricsUrls: [...workers.map(metricsUrl), deadUrl] },
    env,
    log: () => {},
    metricsIntervalMs: 250,
  });
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await dispose();
}, 60_000);

describe("the workers page's last hour, from real workers' /metrics", () => {
  it(
    'counts exactly the runs completed and failed and the activity attempts, across both workers',
    { timeout: 120_000 },
    async () => {
      // Both workers scraped once: the baseline, so only what follows is counted.
      await until('both workers to be scraped', async () => {
        const s = await snapshot();
        return s.sources.slice(0, 2).every((src) => src.lastScrapeAt !== undefined) ? true : undefined;
      });
      const runs = await Promise.all([
        ...Array.from({ length: COMPLETING }, () => client.start(STEPS, { steps: 2, delayMs: 0 })),
        ...Array.from({ length: FAILING }, (_, i) => client.start(FAIL, { why: `run ${i}` })),
      ]);
      for (const run of runs) {
        await until(`run ${run.runId} to finish`, async () => {
          const status = (await client.describe(run.runId).catch(() => undefined))?.status;
          return status === 'completed' || status === 'failed' ? status : undefined;
        });
      }
      const expected = {
        runsCompleted: COMPLETING,
        runsFailed: FAILING,
        activities: COMPLETING * 2 + FAILING * 2,
        activitiesFailed: FAILING * 2,
      };
      const final = await until('the scraped counts to reach the runs', async () => {
        const s = await snapshot();
        const seen = {
          runsCompleted: hourTotal(s, 'runsCompleted'),
          runsFailed: hourTotal(s, 'runsFailed'),
          activities: hourTotal(s, 'activities'),
          activitiesFailed: hourTotal(s, 'activitiesFailed'),
        };
        return JSON.stringify(seen) === JSON.stringify(expected) ? s : undefined;
      });
      expect(final.configured).toBe(true);
      expect(final.minutes).toHaveLength(60);
      // Counters never count twice: one more round of scrapes adds nothing.
      await new Promise((r) => setTimeout(r, 600));
      const again = await snapshot();
      expect(hourTotal(again, 'runsCompleted')).toBe(COMPLETING);
      expect(hourTotal(again, 'activities')).toBe(expected.activities);
      expect(again.sources.map((s) => s.url)).toEqual([...workers.map(metricsUrl), deadUrl]);
      expect(again.sources[2]!.error).toMatch(/^scraping http:\/\/127\.0\.0\.1:\d+\/metrics failed: /);
      expect(again.sources[2]!.lastScrapeAt).toBeUndefined();

      const page = await browser!.newPage({ viewport: { width: 1280, height: 1100 } });
      await page.goto(new URL('/workers', server!.url).toString());
      const totals = page.getByTestId('hour-totals');
      await totals.waitFor();
      await until('the page to show the totals', async () =>
        (await totals.locator('[data-counter="runsCompleted"]').textContent()) === String(COMPLETING)
          ? true
          : undefined,
      );
      expect(await totals.locator('td').allTextContents()).toEqual(
        [expected.runsCompleted, expected.runsFailed, expected.activities, expected.activitiesFailed].map(
          String,
        ),
      );
      expect(await page.getByRole('img', { name: 'Runs per minute over the last hour' }).count()).toBe(1);
      expect(
        await page.getByRole('img', { name: 'Activity attempts per minute over the last hour' }).count(),
      ).toBe(1);
      expect(await page.getByRole('list', { name: 'Metrics sources' }).textContent()).toContain('failed');
      expect(await unnamedControls(page)).toEqual([]);
      await screenshot(page, 'workers-last-hour');
      await page.close();
    },
  );
});
