/**
 * The workers page: the live workers as they report themselves (host, Baton version, workflow
 * versions, runs held of their concurrency, last lease renewal, draining) and the run queue's
 * backlog per consumer or partition; the last hour's throughput and failures from the workers' own
 * metrics (throughput-chart.tsx). Polled.
 */
import { get } from '../api.js';
import { timeText, usePolling } from '../hooks.js';
import { onLinkClick } from '../router.js';
import type { FleetBacklog, FleetWorker, MetricsHistorySnapshot } from '../types.js';
import { ThroughputChart } from './throughput-chart.js';

export function WorkersPage() {
  const workers = usePolling('workers', () => get<FleetWorker[]>('/api/workers'));
  const backlog = usePolling('backlog', () => get<FleetBacklog>('/api/backlog'), 5_000);
  const metrics = usePolling('metrics', () => get<MetricsHistorySnapshot>('/api/metrics'), 5_000);
  return (
    <main aria-labelledby="workers-title">
      <h1 id="workers-title">Workers</h1>
      {workers.error && (
        <p role="alert" class="error">
          {workers.error}
        </p>
      )}
      <table aria-label="Workers">
        <thead>
          <tr>
            <th scope="col">Worker</th>
            <th scope="col">Host</th>
            <th scope="col">Baton</th>
            <th scope="col">Workflows</th>
            <th scope="col">Runs held</th>
            <th scope="col">Started</th>
            <th scope="col">Last renewal</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {workers.data?.map((w) => (
            <tr key={w.workerId} data-worker-id={w.workerId}>
              <td>
                <a href={`/?worker=${encodeURIComponent(w.workerId)}`} onClick={onLinkClick}>
                  {w.workerId}
                </a>
              </td>
              <td>
                {w.host} (pid {w.pid})
              </td>
              <td>{w.batonVersion}</td>
              <td>{w.workflows.map((f) => `${f.name}@${f.versions.join(',')}`).join(' ') || '-'}</td>
              <td>
                {w.runsHeld}/{w.concurrency}
              </td>
              <td>{timeText(w.startedAt)}</td>
              <td>{timeText(w.lastRenewalAt)}</td>
              <td>{w.draining ? 'draining' : w.connected === false ? 'disconnected' : 'live'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {workers.data && workers.data.length === 0 && <p>No live worker reports to this store.</p>}
      <h2>Backlog</h2>
      {backlog.error && (
        <p role="alert" class="error">
          {backlog.error}
        </p>
      )}
      {backlog.data && (
        <>
          <p>
            {backlog.data.transport}: <strong>{backlog.data.total}</strong> run message(s) waiting
          </p>
          <table aria-label="Backlog">
            <thead>
              <tr>
                <th scope="col">Part</th>
                <th scope="col">Pending</th>
                <th scope="col">Ack pending</th>
              </tr>
            </thead>
            <tbody>
              {backlog.data.parts.map((p) => (
                <tr key={p.name}>
                  <td>{p.name}</td>
                  <td>{p.pending}</td>
                  <td>{p.ackPending ?? '-'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      <h2>Last hour</h2>
      {metrics.error && (
        <p role="alert" class="error">
          {metrics.error}
        </p>
      )}
      {metrics.data && <ThroughputChart snapshot={metrics.data} />}
    </main>
  );
}
