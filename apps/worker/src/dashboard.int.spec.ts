/**
 * The Grafana dashboard's queries (helm/baton-worker/dashboards/baton-workers.json) read only what
 * a real worker exposes: two worker processes on NATS + Redis in a namespace of their own; the first
 * is SIGKILLed holding a run, which the second takes over (a failover); the second then completes,
 * fails and cancels runs. Every query of the dashboard is checked against the second's /metrics
 * (dashboard.spec-helper.ts: metric names, selector labels and values, grouping labels), and the
 * run and step series are checked to carry the workflows and outcomes the runs had. The queries of
 * docs/metrics.md are checked the same way.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { loadAdapterCode, operatorAdapters, readOperatorConfig } from '@baton/host';
import { isolatedEnv, removeIsolated } from '@baton/host/testing';
import { REPO_ROOT, WorkerFleet, type WorkerProcess } from '@baton/testing/crash';
import { natsTestUrl, redisTestUrl } from '@baton/testing/servers';
import {
  dashboardQueries,
  parseExposition,
  queryProblems,
  readDashboard,
  type Exposition,
} from './dashboard.spec-helper.js';
import type { DashboardStepsInput } from './dashboard-workflows.spec-helper.js';
import { fencedBlocks } from './operations-doc.spec-helper.js';

const WORKFLOWS = resolve(REPO_ROOT, 'apps/worker/src/dashboard-workflows.spec-helper.ts');
const METRICS_DOC = resolve(REPO_ROOT, 'docs/metrics.md');
const STEPS = { name: 'dash_steps', version: 1 };
const WAIT = { name: 'dash_wait', version: 1 };

const bus = natsTestUrl();
const storeUrl = redisTestUrl();
const ns = `dash${randomBytes(4).toString('hex')}`;
const env: Record<string, string> = {
  BATON_TRANSPORT_URL: bus,
  BATON_STORE_URL: storeUrl,
  ...isolatedEnv('transport', bus, ns),
  ...isolatedEnv('store', storeUrl, ns),
};
await loadAdapterCode(readOperatorConfig(env));

/** Polls `check` until it returns a value other than undefined; fails naming `what` after `ms`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The value of the one series of `name` whose labels include `labels`; undefined when none. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const body = line.slice(name.length + 1, line.lastIndexOf('}'));
    if (Object.entries(labels).every(([k, v]) => body.includes(`${k}="${v}"`)))
      return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('the Grafana dashboard against a real worker', () => {
  const fleet = new WorkerFleet({
    ...env,
    BATON_WORKFLOWS: WORKFLOWS,
    BATON_LEASE_MS: '1500',
    BATON_REAP_INTERVAL_MS: '200',
    BATON_FETCH_WAIT_MS: '100',
  });
  const adapters = operatorAdapters(readOperatorConfig(env));
  const client = new Client({ transport: adapters.transport, store: adapters.store });
  let second: WorkerProcess;
  let text = '';
  let exposed: Exposition;

  async function finished(runId: string): Promise<string> {
    return until(`run ${runId} to finish`, async () => {
      const run = await client.describe(runId).catch(() => undefined);
      return run && ['completed', 'failed', 'cancelled'].includes(run.status) ? run.status : undefined;
    });
  }

  const start = async (input: DashboardStepsInput): Promise<string> =>
    (await client.start<DashboardStepsInput>(STEPS, input)).runId;

  beforeAll(async () => {
    await client.connect();
    const first = await fleet.spawn({ BATON_WORKER_ID: `${ns}-first` });
    // A run the first worker holds when it dies: the second takes it over once its lease expires.
    // Six seconds of steps: long enough for the second worker to start before it ends.
    const held = await start({ steps: 30, delayMs: 200 });
    await until('the first worker to run a step', async () => {
      const run = await client.describe(held).catch(() => undefined);
      return run?.status === 'running' ? true : undefined;
    });
    second = await fleet.spawn({ BATON_WORKER_ID: `${ns}-second` });
    const before = await client.describe(held);
    if (before.status !== 'running')
      throw new Error(
        `the held run is ${before.status} before the SIGKILL: the second worker started too late`,
      );
    first.signal('SIGKILL');
    await first.exited;
    expect(await finished(held)).toBe('completed');

    const completed = await Promise.all([0, 1, 2].map(() => start({ steps: 2, delayMs: 0 })));
    const failed = await Promise.all([0, 1].map(() => start({ steps: 3, delayMs: 0, failAt: 1 })));
    const waiting = (await client.start(WAIT, null)).runId;
    await until('the waiting run to suspend', async () => {
      const run = await client.describe(waiting).catch(() => undefined);
      return run?.status === 'suspended' ? true : undefined;
    });
    await client.cancel(waiting, 'dashboard spec');
    for (const runId of completed) expect(await finished(runId)).toBe('completed');
    for (const runId of failed) expect(await finished(runId)).toBe('failed');
    expect(await finished(waiting)).toBe('cancelled');

    const response = await fetch(`http://127.0.0.1:${second.httpPort}/metrics`);
    expect(response.status).toBe(200);
    text = await response.text();
    exposed = parseExposition(text);
  }, 180_000);

  afterAll(async () => {
    await fleet.shutdown();
    await adapters.close();
    await removeIsolated('transport', bus, ns);
    await removeIsolated('store', storeUrl, ns);
  }, 60_000);

  it('finds a misspelt metric, label or value in a query', () => {
    expect(queryProblems('sum(rate(baton_runs_finished_total[5m]))', exposed)).toEqual([]);
    expect(queryProblems('sum(rate(baton_runs_finish_total[5m]))', exposed)).toEqual([
      'metric baton_runs_finish_total is not on /metrics',
    ]);
    expect(queryProblems('sum(rate(baton_runs_finished_total{baton_workflw="x"}[5m]))', exposed)).toEqual([
      'baton_runs_finished_total has no label baton_workflw',
    ]);
    expect(
      queryProblems('sum(rate(baton_runs_finished_total{baton_outcome=~"completed|faild"}[5m]))', exposed),
    ).toEqual([expect.stringMatching(/^baton_runs_finished_total never has baton_outcome="faild"/)]);
    expect(queryProblems('sum by (baton_workflow) (baton_queue_backlog)', exposed)).toEqual([
      'groups by baton_workflow, which none of baton_queue_backlog has',
    ]);
    // Labels the scrape adds are not on /metrics, and are allowed.
    expect(
      queryProblems('sum by (pod) (baton_runs_in_flight{namespace=~"$namespace", job="x"})', exposed),
    ).toEqual([]);
  });

  it('reads in every query only metrics, labels and values the worker exposes', () => {
    const queries = dashboardQueries(readDashboard());
    // Six areas of panels and two variables: an empty parse must not pass.
    expect(queries.length).toBeGreaterThanOrEqual(30);
    const problems = queries.flatMap(({ where, expr }) =>
      queryProblems(expr, exposed).map((problem) => `${where}: ${problem}\n  ${expr}`),
    );
    expect(problems, 'dashboard queries that read what /metrics does not have').toEqual([]);
    // The panels the issue asks for, by what they read.
    const all = queries.map((q) => q.expr).join('\n');
    for (const name of [
      'baton_runs_finished_total',
      'baton_activity_duration_seconds_count',
      'baton_queue_backlog',
      'baton_failover_latency_seconds_bucket',
      'baton_runs_resumed_total',
      'baton_activity_duration_seconds_bucket',
      'baton_lease_renewals_total',
      'process_cpu_time_seconds_total',
      'process_memory_usage_bytes',
      'nodejs_eventloop_delay_p99_seconds',
      'v8js_gc_duration_seconds_sum',
    ])
      expect(all, `a panel reads ${name}`).toContain(name);
  });

  it("reads in docs/metrics.md's queries only what the worker exposes", () => {
    const queries = fencedBlocks(readFileSync(METRICS_DOC, 'utf8'), 'promql')
      .flatMap((block) => block.split('\n'))
      .map((line) => line.replace(/\s#.*$/, '').trim())
      .filter((line) => line !== '');
    expect(queries.length).toBeGreaterThanOrEqual(5);
    const problems = queries.flatMap((expr) => queryProblems(expr, exposed).map((p) => `${p}\n  ${expr}`));
    expect(problems, 'docs/metrics.md queries that read what /metrics does not have').toEqual([]);
  });

  it('labels run and step series with the workflow and the outcome they had', () => {
    const finished = (workflow: string, outcome: string) =>
      sample(text, 'baton_runs_finished_total', {
        baton_workflow: workflow,
        baton_workflow_version: '1',
        baton_outcome: outcome,
      });
    // The held run completed here after the failover, with the three short ones.
    expect(finished('dash_steps', 'completed')).toBe(4);
    expect(finished('dash_steps', 'failed')).toBe(2);
    expect(finished('dash_steps', 'cancelled')).toBe(0);
    expect(finished('dash_wait', 'cancelled')).toBe(1);
    expect(finished('dash_wait', 'completed')).toBe(0);
    const durations = (workflow: string, outcome: string) =>
      sample(text, 'baton_run_duration_seconds_count', { baton_workflow: workflow, baton_outcome: outcome });
    expect(durations('dash_steps', 'completed')).toBe(4);
    expect(durations('dash_steps', 'failed')).toBe(2);
    expect(durations('dash_wait', 'cancelled')).toBe(1);
    // The held run's duration spans its thirty 200 ms steps and its failover.
    const total = sample(text, 'baton_run_duration_seconds_sum', {
      baton_workflow: 'dash_steps',
      baton_outcome: 'completed',
    });
    expect(total).toBeGreaterThan(6);
    const steps = (outcome: string) =>
      sample(text, 'baton_activity_duration_seconds_count', {
        baton_workflow: 'dash_steps',
        baton_activity_name: 'dash_step',
        baton_outcome: outcome,
      });
    expect(steps('error')).toBe(2);
    // 3 runs of 2 steps, 2 runs with one step before the failing one, and what the held run had left.
    expect(steps('ok')).toBeGreaterThanOrEqual(3 * 2 + 2 + 1);
    // The held run was reaped once; a loaded machine may make the survivor's own lease lapse and
    // reap a run again, so at least once, and one failover latency per reap.
    const reaped = sample(text, 'baton_runs_resumed_total', { baton_reason: 'reaped' });
    expect(reaped).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'baton_failover_latency_seconds_count', { baton_reason: 'reaped' })).toBe(reaped);
    // No run id, ever: the labels are the bounded ones docs/metrics.md lists.
    expect(text).not.toMatch(/run_id|baton_run_id/);
  });

  it('reports the process and the Node runtime', () => {
    expect(sample(text, 'process_cpu_time_seconds_total', { cpu_mode: 'user' })).toBeGreaterThan(0);
    expect(sample(text, 'process_cpu_time_seconds_total', { cpu_mode: 'system' })).toBeGreaterThan(0);
    const rss = /^process_memory_usage_bytes\{[^}]*\} (\d+)/m.exec(text);
    expect(Number(rss?.[1])).toBeGreaterThan(10 * 1024 * 1024);
    for (const name of [
      'process_uptime_seconds',
      'nodejs_eventloop_delay_p99_seconds',
      'v8js_memory_heap_used_bytes',
      'v8js_gc_duration_seconds_count',
    ])
      expect(exposed.has(name), name).toBe(true);
  });
});
