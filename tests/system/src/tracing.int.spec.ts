/**
 * One trace across processes: this test process is the producer (with a tracing SDK), two real
 * worker processes export their spans by OTLP/HTTP JSON to a collector this test runs, and the
 * first worker is SIGTERMed mid-run so the second resumes its runs. Every `baton.run` span of a
 * run, from either process, must carry the producer's trace id.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { CrashWorld } from '@baton/testing/crash';
import { ATTR, SPAN } from '@baton/telemetry';
import { crashEnvironment } from './crash-environment.spec-helper.js';

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: OtlpAttribute[];
}
interface ExportedSpan extends OtlpSpan {
  pid: number;
  attrs: Record<string, unknown>;
}

/** A minimal OTLP/HTTP JSON trace receiver: keeps every span with its exporter's process id. */
class Collector {
  readonly spans: ExportedSpan[] = [];
  private readonly server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') this.accept(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(body: string): void {
    const payload = JSON.parse(body) as {
      resourceSpans: Array<{
        resource: { attributes: OtlpAttribute[] };
        scopeSpans: Array<{ spans: OtlpSpan[] }>;
      }>;
    };
    for (const rs of payload.resourceSpans) {
      const pid = Number(valueOf(rs.resource.attributes.find((a) => a.key === 'process.pid')?.value));
      for (const ss of rs.scopeSpans) {
        for (const span of ss.spans) {
          const attrs = Object.fromEntries((span.attributes ?? []).map((a) => [a.key, valueOf(a.value)]));
          this.spans.push({ ...span, pid, attrs });
        }
      }
    }
  }
}

function valueOf(value: OtlpValue | undefined): unknown {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.boolValue;
}

/** How long the test waits for the workers' spans to reach the collector. */
const SPANS_WAIT_MS = 20_000;

/** Resolves once `ready()` holds or `timeoutMs` passed; the assertions that follow say what is missing. */
async function eventually(timeoutMs: number, ready: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
}

/** True once `pid` has an activity in flight, false when `waitMs` passed without. */
async function busyWithin(world: CrashWorld, pid: number, waitMs: number): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    if ((await world.ledger.busyPids()).has(pid)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const producerSpans = new InMemorySpanExporter();
const collector = new Collector();
let endpoint: string;
let world: CrashWorld | undefined;

beforeAll(async () => {
  endpoint = await collector.listen();
  trace.setGlobalTracerProvider(
    new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: producerSpans })] }),
  );
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(async () => {
  await collector.close();
  trace.disable();
  propagation.disable();
  context.disable();
});
afterEach(async () => {
  await world?.dispose();
  world = undefined;
});

describe('tracing across worker processes (nats+redis)', () => {
  it(
    'puts enqueue and the attempts of two worker processes into the producer trace',
    { timeout: 90_000 },
    async () => {
      world = await CrashWorld.create(crashEnvironment('redis'), {
        workerEnv: {
          OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_BSP_SCHEDULE_DELAY: '100',
          OTEL_SERVICE_NAME: 'baton-worker-trace-test',
        },
      });
      const w = world;
      const first = await w.fleet.spawn();
      const shape = { steps: 10, minDelayMs: 150, maxDelayMs: 250 };
      const runs = await w.enqueue(4, shape);
      await w.waitForExecutions(first.pid, 4);
      const second = await w.fleet.spawn();
      // The hand-off needs runs in flight on the first worker when it is told to stop. On a slow
      // machine the second may finish booting after the first finished its runs: then a small
      // wave more goes out, until (bounded) the first has an activity in flight.
      for (let wave = 1; !(await busyWithin(w, first.pid, 3_000)); wave++) {
        if (wave > 5) throw new Error(`worker ${first.pid} had no activity in flight after ${wave} waves`);
        runs.push(...(await w.enqueue(4, shape)));
      }
      first.signal('SIGTERM');
      expect(await first.exited).toEqual({ code: 0, signal: null });
      await w.waitForAll(60_000);
      second.signal('SIGTERM'); // flushes its last spans
      expect(await second.exited).toEqual({ code: 0, signal: null });

      // Spans reach the collector by HTTP, in batches, possibly after the run they describe is
      // done: wait (bounded) until every run's spans are in, then assert on what arrived.
      const spansOf = (name: string, runId: string): ExportedSpan[] =>
        collector.spans.filter((s) => s.name === name && s.attrs[ATTR.runId] === runId);
      await eventually(
        SPANS_WAIT_MS,
        () =>
          runs.every(
            (run) =>
              spansOf(SPAN.run, run.runId).length > 0 &&
              new Set(spansOf(SPAN.activity, run.runId).map((a) => a.attrs[ATTR.activitySeq])).size >= 10,
          ) && runs.some((run) => new Set(spansOf(SPAN.run, run.runId).map((a) => a.pid)).size === 2),
      );
      const enqueues = producerSpans.getFinishedSpans().filter((s) => s.name === SPAN.enqueue);
      let resumedElsewhere = 0;
      for (const run of runs) {
        const enqueue = enqueues.find((s) => s.attributes[ATTR.runId] === run.runId);
        expect(enqueue, `enqueue span of ${run.runId}`).toBeDefined();
        const traceId = enqueue!.spanContext().traceId;
        const attempts = collector.spans.filter(
          (s) => s.name === SPAN.run && s.attrs[ATTR.runId] === run.runId,
        );
        expect(attempts.length).toBeGreaterThanOrEqual(1);
        for (const attempt of attempts) {
          expect(attempt.traceId).toBe(traceId);
          expect(attempt.parentSpanId).toBe(enqueue!.spanContext().spanId);
        }
        const activities = collector.spans.filter(
          (s) => s.name === SPAN.activity && s.attrs[ATTR.runId] === run.runId,
        );
        expect(activities.every((a) => a.traceId === traceId)).toBe(true);
        // Each of the 10 steps ran (and was traced) once, whichever process ran it.
        expect(new Set(activities.map((a) => a.attrs[ATTR.activitySeq])).size).toBeGreaterThanOrEqual(10);
        if (new Set(attempts.map((a) => a.pid)).size === 2) resumedElsewhere++;
      }
      // The SIGTERM handed runs over: at least one run's trace spans both processes.
      expect(resumedElsewhere).toBeGreaterThan(0);
    },
  );
});
