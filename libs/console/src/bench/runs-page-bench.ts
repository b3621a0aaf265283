/**
 * `npm run bench:console -- --runs-page`: the runs page's first page with a big store behind the
 * console, end to end. A benchmark, not a test: it prints figures and asserts nothing about them.
 *
 * The store is one seeded beforehand, typically by the run-query benchmark with a million runs
 * (`npm run bench:queries -- --stores postgres --keep`, which prints the schema it kept), named by
 * the fleet's own variables: BATON_STORE_URL plus BATON_POSTGRES_SCHEMA or BATON_REDIS_KEY_PREFIX
 * (BATON_TRANSPORT_URL defaults to the local NATS; the runs page never reads the bus). The
 * console is started over a client for it, as `baton console` would.
 *
 * Two figures per filter, over `--samples` loads each:
 * - api: GET /api/runs (the page's own request) from this process, request sent to JSON parsed;
 * - page: in headless Chromium, the runs page opened afresh until its table shows the rows, from
 *   the navigation's start (the page's HTML, script, and its /api/runs and /api/run-counts calls).
 */
import { Client } from '@baton/client';
import { loadAdapterCode, operatorAdapters, readOperatorConfig } from '@baton/host';
import { launchChromium } from '../browser.spec-helper.js';
import { freeConsolePort } from '../console-port.spec-helper.js';
import { startConsole } from '../index.js';

/** The filters timed: the page as it opens, and the ones an operator reaches for first. */
const FILTERS: Array<[string, string]> = [
  ['no filter (newest first)', ''],
  ['status=failed', 'status=failed'],
  ['status=running', 'status=running'],
  ['status=completed, oldest first', 'status=completed&order=oldest'],
];

interface Shown {
  ms: number;
  rows: number;
  apiMs: number;
  apiSentAt: number;
}

/** Reads the page's figures once its table shows rows: ms since navigation start, and the rows. */
const ROWS_SHOWN = `(() => {
  const rows = document.querySelectorAll('table.runs tbody tr[data-run-id]').length;
  if (rows === 0) return undefined;
  const api = performance.getEntriesByType('resource').find((e) => /\\/api\\/runs(\\?|$)/.test(e.name));
  return {
    ms: performance.now(),
    rows,
    apiMs: api ? api.responseEnd - api.startTime : NaN,
    apiSentAt: api ? api.startTime : NaN,
  };
})()`;

function stats(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return `p50 ${at(0.5).toFixed(1)} ms, p95 ${at(0.95).toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms`;
}

export async function runsPageBench(samples: number, port: number | undefined): Promise<void> {
  const env: Record<string, string | undefined> = {
    BATON_TRANSPORT_URL: 'nats://127.0.0.1:4222',
    ...process.env,
  };
  if (env['BATON_STORE_URL'] === undefined) {
    console.error(
      'set BATON_STORE_URL (and BATON_POSTGRES_SCHEMA or BATON_REDIS_KEY_PREFIX) to a seeded store, ' +
        'for example the one `npm run bench:queries -- --stores postgres --keep` leaves',
    );
    process.exit(2);
  }
  const config = readOperatorConfig(env);
  await loadAdapterCode(config);
  const adapters = operatorAdapters(config);
  const client = new Client({ transport: adapters.transport, store: adapters.store });
  await client.connect();
  const counts = await client.runs.count();
  console.log(`store: ${counts.total.toLocaleString('en')} runs (${JSON.stringify(counts.byStatus)})`);
  const server = await startConsole({
    client,
    options: { port: port ?? (await freeConsolePort()) },
    env,
    log: () => {},
  });
  const browser = await launchChromium();
  try {
    for (const [label, query] of FILTERS) {
      const api: number[] = [];
      const page: number[] = [];
      const inPage: number[] = [];
      const sentAt: number[] = [];
      const url = new URL(`/api/runs${query ? `?${query}` : ''}`, server.url).toString();
      await (await fetch(url)).json(); // warm: connections, plans, caches
      for (let i = 0; i < samples; i++) {
        const t0 = performance.now();
        const answer = await fetch(url);
        if (!answer.ok) throw new Error(`GET ${url}: ${answer.status} ${await answer.text()}`);
        await answer.json();
        api.push(performance.now() - t0);
      }
      for (let i = 0; i < Math.min(samples, 10); i++) {
        const tab = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        await tab.goto(new URL(`/runs${query ? `?${query}` : ''}`, server.url).toString(), {
          waitUntil: 'commit',
        });
        let shown: Shown | undefined;
        const deadline = Date.now() + 30_000;
        while (shown === undefined) {
          if (Date.now() > deadline) throw new Error(`the runs page (${label}) showed no row within 30 s`);
          // Evaluated over the DevTools protocol: the console's CSP rightly refuses eval in the page.
          shown = await tab.evaluate<Shown | undefined>(ROWS_SHOWN);
          if (shown === undefined) await new Promise((r) => setTimeout(r, 5));
        }
        page.push(shown.ms);
        inPage.push(shown.apiMs);
        sentAt.push(shown.apiSentAt);
        await tab.close();
      }
      console.log(
        `${label}: api ${stats(api)} (${samples} calls); in the page: /api/runs sent ${stats(sentAt)} ` +
          `after navigation start, answered in ${stats(inPage)}, rows shown ${stats(page)} after it ` +
          `(${page.length} loads)`,
      );
    }
  } finally {
    await browser.close();
    await server.close();
    await adapters.close();
  }
}
