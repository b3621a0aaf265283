/**
 * The worker's HTTP endpoints for Kubernetes and Prometheus:
 * - `GET /healthz` (liveness): 200 while the process is making progress; 503 when the event loop
 *   was blocked for `livenessStallMs` (Node's event-loop delay monitor, the measurement the runtime
 *   metrics report as `nodejs_eventloop_delay_*`; the longest delay of the last probe intervals), or
 *   the lease keeper has not finished a renewal round for that long (a wedged store call, say). Such a worker holds leases it cannot keep: restarting it
 *   is what hands its runs on. A store that is merely down does not fail liveness (restarts would
 *   not help); it fails readiness.
 * - `GET /readyz` (readiness): 200 while the worker claims runs: started, not draining, and its
 *   last fetch from the bus and last lease renewal succeeded.
 * - `GET /metrics`: Prometheus text.
 * Bodies are small JSON documents saying why, for `kubectl describe` and humans.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { WorkerHealth } from '@baton/worker';

export interface HealthSource {
  /** Undefined until the Worker exists. */
  health(): WorkerHealth | undefined;
}

export interface HttpServerOptions {
  host: string;
  port: number;
  livenessStallMs: number;
  source: HealthSource;
  serveMetrics(request: IncomingMessage, response: ServerResponse): void;
}

export interface Verdict {
  ok: boolean;
  status: string;
  reasons: string[];
}

/**
 * Liveness from a health snapshot and the time the event loop was last seen free (`now` minus the
 * longest event-loop delay measured lately; see WorkerHttpServer).
 */
export function liveness(
  health: WorkerHealth | undefined,
  lastLoopTickAt: number,
  stallMs: number,
  now = Date.now(),
): Verdict {
  const reasons: string[] = [];
  if (now - lastLoopTickAt > stallMs) {
    reasons.push(`event loop blocked for ${now - lastLoopTickAt} ms (limit ${stallMs} ms)`);
  }
  if (health && (health.state === 'running' || health.state === 'draining')) {
    const sincePass = now - health.lastRenewalPassAt;
    if (sincePass > stallMs) {
      reasons.push(
        `no lease renewal round finished for ${sincePass} ms (limit ${stallMs} ms) while holding ${health.leasesHeld} leases`,
      );
    }
  }
  return { ok: reasons.length === 0, status: health?.state ?? 'starting', reasons };
}

/** Readiness: the worker claims runs and can reach its bus and store. */
export function readiness(health: WorkerHealth | undefined): Verdict {
  if (!health) return { ok: false, status: 'starting', reasons: ['connecting to the bus and the store'] };
  const reasons: string[] = [];
  if (health.state === 'created') reasons.push('starting');
  if (health.state === 'draining') reasons.push('draining: handing runs to other workers');
  if (health.state === 'stopped') reasons.push('stopped');
  if (health.transportFailing) reasons.push('the last fetch from the bus failed');
  if (health.storeFailing) reasons.push('the last lease renewal could not reach the store');
  return { ok: reasons.length === 0, status: health.state, reasons };
}

export class WorkerHttpServer {
  private readonly server: Server;
  /**
   * Event-loop delays as Node samples them (nothing of ours ticks), in two histograms reset in
   * turn, one per probe: a histogram drops its first sample after a reset, so a stall that starts
   * right after a probe is missed by the one just reset and caught by the other.
   */
  private readonly loopDelay: [IntervalHistogram, IntervalHistogram];
  private resetNext = 0;

  constructor(private readonly options: HttpServerOptions) {
    // Sampling finer than a few percent of the limit adds cost and no precision that matters.
    const resolution = Math.min(1_000, Math.max(20, Math.floor(options.livenessStallMs / 50)));
    this.loopDelay = [monitorEventLoopDelay({ resolution }), monitorEventLoopDelay({ resolution })];
    for (const histogram of this.loopDelay) histogram.enable();
    this.server = createServer((req, res) => this.route(req, res));
    this.server.keepAliveTimeout = 5_000;
  }

  /** Listens; resolves with the bound port (useful when `port` was 0). */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  close(): Promise<void> {
    for (const histogram of this.loopDelay) histogram.disable();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    switch (path) {
      case '/healthz':
        return this.reply(
          res,
          liveness(this.options.source.health(), this.loopLastFreeAt(), this.options.livenessStallMs),
        );
      case '/readyz':
        return this.reply(res, readiness(this.options.source.health()));
      case '/metrics':
        return this.options.serveMetrics(req, res);
      default:
        res
          .writeHead(404, { 'content-type': 'text/plain' })
          .end('not found: try /healthz, /readyz or /metrics\n');
    }
  }

  /**
   * When the event loop was last free, as liveness() reads it: now minus the longest delay Node
   * measured over the last one or two probe intervals. A stall that is over fails the probe after
   * it (and at most one more); one that goes on fails every probe until the kubelet restarts the pod.
   */
  private loopLastFreeAt(now = Date.now()): number {
    let longestNs = 0;
    for (const histogram of this.loopDelay) {
      if (histogram.count > 0) longestNs = Math.max(longestNs, histogram.max);
    }
    this.loopDelay[this.resetNext]!.reset();
    this.resetNext = 1 - this.resetNext;
    return now - Math.round(longestNs / 1e6);
  }

  private reply(res: ServerResponse, verdict: Verdict): void {
    res
      .writeHead(verdict.ok ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' })
      .end(JSON.stringify(verdict));
  }
}
