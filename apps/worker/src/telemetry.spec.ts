/**
 * The worker's probes, metrics and spans, in process on the memory adapters: /healthz, /readyz
 * and /metrics over real HTTP, and one trace from `client.start` through two execution attempts
 * on two workers (the second after a hand-off), joined by the traceparent kept on the run record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace';
import { Client } from '@baton/client';
import { defineActivity, defineWorkflow } from '@baton/core';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { ATTR, SPAN } from '@baton/telemetry';
import { Worker, type WorkerHealth, type WorkerOptions } from '@baton/worker';
import { pino } from 'pino';
import { logEvent } from './event-log.js';
import { liveness, readiness, WorkerHttpServer } from './http-server.js';
import { startTelemetry, tracingRequested, type Telemetry } from './telemetry.js';

const spans = new InMemorySpanExporter();
let telemetry: Telemetry;

beforeAll(async () => {
  // Metrics through the same code the worker process runs; tracing through an in-memory exporter
  // (the process would export by OTLP), with the W3C propagator the SDK registers by default.
  telemetry = await startTelemetry({}, 'baton-worker-test');
  trace.setGlobalTracerProvider(
    new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] }),
  );
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(async () => {
  await telemetry.shutdown();
  trace.disable();
  propagation.disable();
  context.disable();
});

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

const step = defineActivity({
  name: 'step',
  run: async (x: number, io) => {
    await sleep(80, io.signal);
    return x + 1;
  },
});
const chain = defineWorkflow({
  name: 'telemetry_chain',
  version: 1,
  run: async (ctx, x: number) => {
    for (let i = 0; i < 6; i++) x = await ctx.run(step, x);
    return x;
  },
});

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const poll = (): void => {
      if (check()) return resolve();
      if (Date.now() > deadline) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(poll, 10);
    };
    poll();
  });
}

function metricValue(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels}`) && !l.startsWith('#'));
  if (!line) throw new Error(`metric ${name}${labels} not found in:\n${text}`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('worker probes, metrics and traces', () => {
  it('serves readiness and liveness over a worker lifetime, and reports the runs in /metrics', async () => {
    const transport = memoryTransport();
    const store = memoryStore();
    const worker = new Worker({ transport, store, workflows: [chain], drainTimeoutMs: 5_000 });
    let exposed: Worker | undefined;
    const server = new WorkerHttpServer({
      host: '127.0.0.1',
      port: 0,
      livenessStallMs: 5_000,
      source: { health: () => exposed?.health() },
      serveMetrics: (req, res) => telemetry.serveMetrics(req, res),
    });
    const port = await server.listen();
    try {
      // Before the worker exists the process is alive but not ready.
      expect((await get(port, '/healthz')).status).toBe(200);
      const starting = await get(port, '/readyz');
      expect(starting.status).toBe(503);
      expect(JSON.parse(starting.body)).toMatchObject({ status: 'starting' });

      exposed = worker;
      await worker.start();
      expect(await get(port, '/readyz')).toMatchObject({ status: 200 });

      const client = new Client({ transport, store });
      const done = await client.start(chain, 0);
      expect(await done.result({ timeoutMs: 5_000 })).toBe(6);

      const metrics = (await get(port, '/metrics')).body;
      expect(metricValue(metrics, 'baton_runs_started_total')).toBeGreaterThanOrEqual(1);
      expect(metricValue(metrics, 'baton_runs_completed_total')).toBeGreaterThanOrEqual(1);
      expect(metricValue(metrics, 'baton_activity_duration_seconds_count')).toBeGreaterThanOrEqual(6);
      expect(metricValue(metrics, 'baton_journal_append_duration_seconds_count')).toBeGreaterThan(6);
      expect(metricValue(metrics, 'baton_checkpoint_write_duration_seconds_count')).toBeGreaterThanOrEqual(1);
      expect(metrics).toContain('baton_runs_in_flight');

      // A run in flight while the worker drains: readiness drops at once, liveness stays.
      await client.start(chain, 100);
      await until(() => worker.ownedRuns.length === 1, 5_000, 'the second run to be claimed');
      const stopping = worker.stop();
      const draining = await get(port, '/readyz');
      expect(draining.status).toBe(503);
      expect(JSON.parse(draining.body)).toMatchObject({ status: 'draining' });
      expect((await get(port, '/healthz')).status).toBe(200);
      await stopping;
      expect((await get(port, '/readyz')).status).toBe(503);
      expect((await get(port, '/nope')).status).toBe(404);
    } finally {
      await worker.stop();
      await server.close();
    }
  });

  it('fails liveness when the lease keeper is stuck and readiness when the store is unreachable', () => {
    const now = Date.now();
    const healthy: WorkerHealth = {
      state: 'running',
      runsInFlight: 3,
      leasesHeld: 3,
      lastRenewalPassAt: now - 1_000,
      lastRenewalOkAt: now - 1_000,
      storeFailing: false,
      transportFailing: false,
    };
    expect(liveness(healthy, now, 30_000, now).ok).toBe(true);
    const stuck = liveness({ ...healthy, lastRenewalPassAt: now - 45_000 }, now, 30_000, now);
    expect(stuck.ok).toBe(false);
    expect(stuck.reasons.join()).toMatch(/no lease renewal round finished for 45000 ms .* 3 leases/);
    const blocked = liveness(healthy, now - 31_000, 30_000, now);
    expect(blocked.reasons.join()).toMatch(/event loop blocked for 31000 ms/);

    // A store that is down is not cured by a restart: liveness holds, readiness drops.
    expect(liveness({ ...healthy, storeFailing: true }, now, 30_000, now).ok).toBe(true);
    expect(readiness({ ...healthy, storeFailing: true }).reasons).toEqual([
      'the last lease renewal could not reach the store',
    ]);
    expect(readiness({ ...healthy, transportFailing: true }).ok).toBe(false);
    expect(readiness(healthy)).toEqual({ ok: true, status: 'running', reasons: [] });
  });

  it('joins enqueue and every execution attempt, on two workers, in one trace', async () => {
    spans.reset();
    const transport = memoryTransport();
    const store = memoryStore();
    const first = new Worker({ transport, store, workflows: [chain], drainTimeoutMs: 5_000 });
    const second = new Worker({ transport, store, workflows: [chain], drainTimeoutMs: 5_000 });
    await first.start();
    const client = new Client({ transport, store });

    // The producer's own span is the parent of the enqueue.
    const producerSpan = trace.getTracer('test-producer').startSpan('checkout');
    const handle = await context.with(trace.setSpan(context.active(), producerSpan), () =>
      client.start(chain, 0),
    );
    producerSpan.end();
    const traceId = producerSpan.spanContext().traceId;

    await until(() => first.ownedRuns.length === 1, 5_000, 'the first worker to claim the run');
    await sleep(200);
    await second.start();
    await first.stop(); // hands the run to the second worker mid-way
    expect(await handle.result({ timeoutMs: 5_000 })).toBe(6);
    await second.stop();
    // A span is exported when it ends, which may come after result() saw the run complete: wait
    // (bounded) for both attempts and every step before asserting on them.
    const ofRun = (name: string): ReadableSpan[] =>
      spans.getFinishedSpans().filter((s) => s.name === name && s.attributes[ATTR.runId] === handle.runId);
    await until(
      () =>
        ofRun(SPAN.run).length >= 2 &&
        new Set(ofRun(SPAN.activity).map((a) => a.attributes[ATTR.activitySeq])).size >= 6,
      5_000,
      'the spans of both attempts and every step',
    ).catch(() => undefined);

    const finished = spans.getFinishedSpans();
    const byName = (name: string): ReadableSpan[] => finished.filter((s) => s.name === name);
    const [enqueue] = byName(SPAN.enqueue);
    expect(enqueue?.spanContext().traceId).toBe(traceId);
    expect(enqueue?.attributes[ATTR.runId]).toBe(handle.runId);

    const runs = byName(SPAN.run).filter((s) => s.attributes[ATTR.runId] === handle.runId);
    expect(runs).toHaveLength(2);
    for (const run of runs) {
      expect(run.spanContext().traceId).toBe(traceId);
      expect(run.parentSpanContext?.spanId).toBe(enqueue?.spanContext().spanId);
      expect(run.attributes[ATTR.workflow]).toBe('telemetry_chain');
    }
    const [attempt1, attempt2] = runs.sort(
      (a, b) => Number(a.attributes[ATTR.epoch]) - Number(b.attributes[ATTR.epoch]),
    );
    expect(attempt1?.attributes).toMatchObject({ [ATTR.resumed]: false, [ATTR.end]: 'handed-off' });
    expect(attempt2?.attributes).toMatchObject({ [ATTR.resumed]: true, [ATTR.end]: 'completed' });
    expect(attempt1?.attributes[ATTR.workerId]).not.toBe(attempt2?.attributes[ATTR.workerId]);

    const activities = byName(SPAN.activity).filter((s) => s.attributes[ATTR.runId] === handle.runId);
    expect(new Set(activities.map((a) => a.attributes[ATTR.activitySeq])).size).toBe(6);
    for (const activity of activities) {
      expect(activity.spanContext().traceId).toBe(traceId);
      expect(activity.attributes).toMatchObject({ [ATTR.activity]: 'step', [ATTR.attempt]: 1 });
      expect(activity.attributes[ATTR.idempotencyKey]).toBe(
        `${handle.runId}:${String(activity.attributes[ATTR.activitySeq])}`,
      );
      const parent = runs.find((r) => r.spanContext().spanId === activity.parentSpanContext?.spanId);
      expect(parent, 'every activity span is a child of a run span').toBeDefined();
    }
  });

  it('starts tracing only when an exporter is configured', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x' })).toBe(
      false,
    );
    expect(tracingRequested({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBe(false);
  });
});

/** The value of the first series of `name` whose labels include every `label="value"` given. */
function seriesValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text
    .split('\n')
    .find(
      (l) =>
        (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && wanted.every((pair) => l.includes(pair)),
    );
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('metrics users can build on', () => {
  let release: () => void = () => undefined;
  let opened = 0;
  const gate = defineActivity({
    name: 'gate',
    run: async () => {
      opened++;
      await new Promise<void>((resolve) => (release = resolve));
      return 'open';
    },
  });
  const gated = defineWorkflow({
    name: 'telemetry_gated',
    version: 1,
    run: async (ctx) => ctx.run(gate, null),
  });

  it('shows counters at 0 before their first event, Node runtime metrics, the backlog and schedule-to-start', async () => {
    const transport = memoryTransport();
    const store = memoryStore();
    const worker = new Worker({
      transport,
      store,
      workflows: [gated],
      concurrency: 1,
      drainTimeoutMs: 5_000,
    });
    const server = new WorkerHttpServer({
      host: '127.0.0.1',
      port: 0,
      livenessStallMs: 5_000,
      source: { health: () => worker.health() },
      serveMetrics: (req, res) => telemetry.serveMetrics(req, res),
    });
    const port = await server.listen();
    try {
      const before = (await get(port, '/metrics')).body;
      // Known label values are there from the start, at 0.
      expect(seriesValue(before, 'baton_runs_started_total', { baton_workflow: 'telemetry_gated' })).toBe(0);
      expect(
        seriesValue(before, 'baton_dead_letters_total', { baton_dead_letter_code: 'unknown-workflow' }),
      ).toBe(0);
      // The meter is the process's: a hand-off in an earlier test of this file may have been reaped
      // on a loaded machine (its lease seen dead before its release), so these series are checked
      // to be there, not at 0. The two above name this test's own workflow and a code no test here
      // produces.
      expect(seriesValue(before, 'baton_runs_resumed_total', { baton_reason: 'reaped' })).toBeTypeOf(
        'number',
      );
      expect(seriesValue(before, 'baton_resume_failures_total', { baton_outcome: 'failed' })).toBeTypeOf(
        'number',
      );
      // Node's runtime, named with units as a Collector would name them.
      expect(
        seriesValue(before, 'v8js_memory_heap_used_bytes', { v8js_heap_space_name: 'old_space' }),
      ).toBeGreaterThan(0);
      expect(before).toMatch(/^nodejs_eventloop_utilization_ratio[{ ]/m);
      expect(before).not.toMatch(/^baton_activity_duration[{ ]/m);

      await worker.start();
      const client = new Client({ transport, store });
      const first = await client.start(gated, null);
      await until(() => worker.ownedRuns.length === 1, 5_000, 'the first run to be claimed');
      // concurrency 1: these wait on the bus while the first run holds the only slot.
      const waiting = await Promise.all([1, 2, 3].map(() => client.start(gated, null)));
      const busy = (await get(port, '/metrics')).body;
      expect(seriesValue(busy, 'baton_queue_backlog', { baton_transport: 'memory' })).toBe(3);
      expect(busy).toMatch(/^nodejs_eventloop_delay_p99_seconds[{ ]/m);

      // The memory queue is FIFO: the runs are claimed, and their gates opened, in start order.
      for (const [i, handle] of [first, ...waiting].entries()) {
        await until(() => opened === i + 1, 5_000, `run ${i + 1} to reach its gate`);
        release();
        expect(await handle.result({ timeoutMs: 5_000 })).toBe('open');
      }
      const after = (await get(port, '/metrics')).body;
      expect(seriesValue(after, 'baton_queue_backlog', { baton_transport: 'memory' })).toBe(0);
      expect(
        seriesValue(after, 'baton_runs_schedule_to_start_seconds_count', {
          baton_workflow: 'telemetry_gated',
          baton_run_via: 'start',
        }),
      ).toBe(4);
      expect(seriesValue(after, 'baton_runs_started_total', { baton_workflow: 'telemetry_gated' })).toBe(4);
    } finally {
      release();
      await worker.stop();
      await server.close();
    }
  });
});

describe('log lines about a run', () => {
  type Line = Record<string, unknown> & { msg: string; level: number };
  /** The worker process's logging, into an array: a pino logger, the worker's child, the event log. */
  function processLogging(): { lines: Line[]; options: Pick<WorkerOptions, 'logger' | 'onEvent'> } {
    const lines: Line[] = [];
    const logger = pino(
      { level: 'debug' },
      { write: (line: string) => void lines.push(JSON.parse(line) as Line) },
    );
    return {
      lines,
      options: {
        logger: logger.child({ component: 'worker' }),
        onEvent: (event, run) => logEvent(logger, event, run),
      },
    };
  }

  const charge = defineActivity({ name: 'charge', run: async () => ({ amount: 10n }) });
  const billing = defineWorkflow({
    name: 'telemetry_billing',
    version: 1,
    run: async (ctx) => {
      await ctx.run(charge, null);
    },
  });

  it('carry the run id, the workflow and the trace and span ids of the run', async () => {
    spans.reset();
    const transport = memoryTransport();
    const store = memoryStore();
    const { lines, options } = processLogging();
    const worker = new Worker({ transport, store, workflows: [billing], ...options });
    await worker.start();
    try {
      const run = await new Client({ transport, store }).start(billing, null);
      await expect(run.result({ timeoutMs: 5_000 })).rejects.toThrow(/BigInt/);
      await until(
        () =>
          spans.getFinishedSpans().some((s) => s.name === SPAN.run && s.attributes[ATTR.runId] === run.runId),
        5_000,
        'the run span to end',
      );
      const runSpan = spans
        .getFinishedSpans()
        .find((s) => s.name === SPAN.run && s.attributes[ATTR.runId] === run.runId)!;
      const about = lines.filter((l) => l.runId === run.runId);
      // The worker's own warning (from the run's session), and the process's lines for its events.
      expect(about.map((l) => l.msg)).toEqual(
        expect.arrayContaining([
          'activity result cannot be encoded: the step fails and the activity does not run again',
          'run-claimed',
          'run failed',
        ]),
      );
      for (const line of about) {
        expect(line, line.msg).toMatchObject({
          workflow: 'telemetry_billing',
          trace_id: runSpan.spanContext().traceId,
          span_id: runSpan.spanContext().spanId,
        });
      }
    } finally {
      await worker.stop();
    }
  });

  it('log a dead letter once, with the run id of its message', async () => {
    const transport = memoryTransport();
    const store = memoryStore();
    const { lines, options } = processLogging();
    const worker = new Worker({
      transport,
      store,
      workflows: [billing],
      missingVersionGraceMs: 0,
      ...options,
    });
    await worker.start();
    try {
      const elsewhere = defineWorkflow({ name: 'not_on_this_worker', version: 1, run: async () => 1 });
      const { runId } = await new Client({ transport, store }).start(elsewhere, null);
      await until(() => lines.some((l) => l.msg === 'message dead-lettered'), 5_000, 'the dead letter');
      const dead = lines.filter((l) => /dead-letter/.test(l.msg) && l.level >= 40);
      expect(dead).toHaveLength(1);
      expect(dead[0]).toMatchObject({ runId, code: 'unknown-workflow' });
    } finally {
      await worker.stop();
    }
  });
});

describe('liveness from the event-loop delay', () => {
  it('fails the probe after a stall longer than the limit, then passes again', async () => {
    const server = new WorkerHttpServer({
      host: '127.0.0.1',
      port: 0,
      livenessStallMs: 200,
      source: { health: () => undefined },
      serveMetrics: (req, res) => telemetry.serveMetrics(req, res),
    });
    const port = await server.listen();
    try {
      // As in a pod that has been up a while: Node's monitor has its first samples (it drops the
      // very first one after it starts).
      await sleep(100);
      expect((await get(port, '/healthz')).status).toBe(200);
      const until = Date.now() + 450;
      while (Date.now() < until) {
        // A synchronous stall of the event loop, as a runaway computation would cause.
      }
      const stalled = await get(port, '/healthz');
      expect(stalled.status).toBe(503);
      expect(JSON.parse(stalled.body).reasons.join()).toMatch(
        /event loop blocked for \d+ ms \(limit 200 ms\)/,
      );
      // A stall that is over fails the probe after it and at most one more.
      const next = [(await get(port, '/healthz')).status, (await get(port, '/healthz')).status];
      expect(next.at(-1)).toBe(200);
    } finally {
      await server.close();
    }
  });
});
