/**
 * docs/operations.md's queries and alerts name metrics a worker really exposes: every metric name in
 * its PromQL (blocks, alert rules, inline queries) is looked up in the /metrics text of in-process
 * workers that went through a start, a hand-off and a dead letter; every Prometheus-looking name
 * elsewhere on the page (tables, prose) is a name the telemetry library declares. A typo fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { defineActivity, defineWorkflow } from '@baton/core';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { PROMETHEUS_NAME } from '@baton/telemetry';
import { Worker } from '@baton/worker';
import { WorkerHttpServer } from './http-server.js';
import { docQueries, metricNamesIn, readOperationsDoc } from './operations-doc.spec-helper.js';
import { startTelemetry, type Telemetry } from './telemetry.js';

let telemetry: Telemetry;
beforeAll(async () => {
  telemetry = await startTelemetry({}, 'baton-worker-doc-test');
});
afterAll(() => telemetry.shutdown());

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const step = defineActivity({
  name: 'doc_step',
  run: async (x: number, io) => {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, 60);
      io.signal.addEventListener('abort', () => (clearTimeout(timer), reject(io.signal.reason)), {
        once: true,
      });
    });
    return x + 1;
  },
});
const chain = defineWorkflow({
  name: 'doc_chain',
  version: 1,
  run: async (ctx, x: number) => {
    for (let i = 0; i < 5; i++) x = await ctx.run(step, x);
    return x;
  },
});
const elsewhere = defineWorkflow({ name: 'doc_not_registered', version: 1, run: async () => null });

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(10);
  }
}

/** Every series name on a /metrics page (histograms' `_bucket`, `_sum`, `_count` included). */
function seriesNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    names.add(/^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)![0]);
  }
  return names;
}

/** The /metrics text after a run started, handed off to a second worker, completed, and a dead letter. */
async function scrapeAfterAWorkout(): Promise<string> {
  const transport = memoryTransport();
  const store = memoryStore();
  const first = new Worker({
    transport,
    store,
    workflows: [chain],
    drainTimeoutMs: 5_000,
    missingVersionGraceMs: 0,
  });
  const second = new Worker({
    transport,
    store,
    workflows: [chain],
    drainTimeoutMs: 5_000,
    missingVersionGraceMs: 0,
  });
  const server = new WorkerHttpServer({
    host: '127.0.0.1',
    port: 0,
    livenessStallMs: 5_000,
    source: { health: () => second.health() },
    serveMetrics: (req, res) => telemetry.serveMetrics(req, res),
  });
  const port = await server.listen();
  try {
    await first.start();
    const client = new Client({ transport, store });
    const run = await client.start(chain, 0);
    await until(() => first.ownedRuns.length === 1, 'the first worker to claim the run');
    await pause(100);
    await second.start();
    await first.stop(); // a hand-off: the second worker resumes the run
    expect(await run.result({ timeoutMs: 5_000 })).toBe(5);
    await client.start(elsewhere, null); // dead-lettered: no worker registers it
    // Garbage, so that V8 collects at least once and the GC histogram has a point.
    for (let i = 0; i < 200; i++) new Array(10_000).fill(i);
    await pause(100);
    return await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  } finally {
    await Promise.all([first.stop(), second.stop()]);
    await server.close();
  }
}

describe('docs/operations.md', () => {
  it('reads the metric names out of PromQL, and finds a misspelt one', () => {
    expect(
      metricNamesIn(
        'histogram_quantile(0.99, sum by (le) (rate(baton_activity_duration_seconds_bucket{baton_outcome="ok"}[5m])))',
      ),
    ).toEqual(['baton_activity_duration_seconds_bucket']);
    expect(metricNamesIn('min_over_time(max(baton_queue_backlog)[15m:1m]) > 1000')).toEqual([
      'baton_queue_backlog',
    ]);
    expect(
      metricNamesIn(
        'sum(rate(a_total[10m])) / (sum(rate(b_total[10m])) + sum by (pod) (c)) > 0.05 and on (x) d',
      ),
    ).toEqual(['a_total', 'b_total', 'c', 'd']);
    const exposed = new Set(['baton_runs_completed_total']);
    const typo = metricNamesIn('sum(rate(baton_runs_complete_total[5m]))').filter((n) => !exposed.has(n));
    expect(typo).toEqual(['baton_runs_complete_total']);
  });

  it('names in its queries and alerts only metrics a worker exposes on /metrics', async () => {
    const doc = readOperationsDoc();
    const queries = docQueries(doc);
    // The page has its useful queries, eight alerts and inline ones: an empty parse must not pass.
    expect(queries.length).toBeGreaterThanOrEqual(15);
    const named = new Set(queries.flatMap(metricNamesIn));
    expect(named.size).toBeGreaterThanOrEqual(10);

    const exposed = seriesNames(await scrapeAfterAWorkout());
    const missing = [...named].filter((name) => !exposed.has(name)).sort();
    expect(missing, `metrics the doc's queries name but /metrics does not have`).toEqual([]);
  });

  it('names elsewhere on the page only metrics the telemetry library declares, or runtime ones', () => {
    const doc = readOperationsDoc();
    // The renamed table names the old names on purpose.
    const start = doc.indexOf('### Renamed metrics');
    const end = doc.indexOf('\n#', start + 1);
    expect(start).toBeGreaterThan(0);
    const page = doc.slice(0, start) + doc.slice(end);
    const declared = new Set<string>();
    for (const name of Object.values(PROMETHEUS_NAME)) {
      for (const suffix of ['', '_bucket', '_sum', '_count']) declared.add(name + suffix);
    }
    const labels = new Set([
      'baton_workflow',
      'baton_workflow_version',
      'baton_reason',
      'baton_outcome',
      'baton_dead_letter_code',
      'baton_activity_name',
      'baton_run_via',
      'baton_transport',
    ]);
    const mentioned = new Set([...page.matchAll(/\bbaton_[a-z0-9_]+\b/g)].map((m) => m[0]));
    const unknown = [...mentioned].filter((n) => !declared.has(n) && !labels.has(n)).sort();
    expect(unknown, 'baton_* names on the page that are neither a metric nor a label').toEqual([]);
  });
});
