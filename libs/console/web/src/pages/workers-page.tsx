/**
 * The workers page: the live workers as they report themselves (host, Baton version, workflow
 * versions, runs held of their concurrency, last lease renewal, draining) and the run queue's
 * backlog per consumer or partition; the workers that left lately (kept by the store for the
 * workers' `BATON_DEPARTED_RETENTION_MS`): when each was last seen, how it ended and the
 * runs it held, each linked to its run page with where it is now; the last hour's throughput and
 * failures from the workers' own metrics (throughput-chart.tsx). Polled.
 */
import { get } from '../api.js';
import { usePolling } from '../hooks.js';
import { Time } from '../components/time.js';
import { onLinkClick } from '../router.js';
import type { DepartedFleetWorker, FleetBacklog, FleetWorker, MetricsHistorySnapshot } from '../types.js';
import { ThroughputChart } from './throughput-chart.js';

export function WorkersPage() {
  const workers = usePolling('workers', () => get<FleetWorker[]>('/api/workers'));
  const departed = usePolling(
    'departed-workers',
    () => get<DepartedFleetWorker[]>('/api/workers/departed'),
    5_000,
  );
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
              <td>
                <Time ms={w.startedAt} />
              </td>
              <td>
                <Time ms={w.lastRenewalAt} />
              </td>
              <td>{w.draining ? 'draining' : w.connected === false ? 'disconnected' : 'live'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {workers.data && workers.data.length === 0 && <p>No live worker reports to this store.</p>}
      <h2 id="departed-title">Recently departed</h2>
      {departed.error && (
        <p role="alert" class="error">
          {departed.error}
        </p>
      )}
      {departed.data && departed.data.length > 0 && <DepartedTable departed={departed.data} />}
      {departed.data && departed.data.length === 0 && <p>No worker left within the retention.</p>}
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

/** `handed-off`, or `expired` with what that means, for the Ended column. */
function endText(worker: DepartedFleetWorker): string {
  return worker.ended === 'handed-off' ? 'handed off (drained)' : 'expired (no word: killed or cut off)';
}

/** Where a held run is now, as the Runs held column says it after the run's link. */
function whereText(run: DepartedFleetWorker['heldRuns'][number], departedId: string): string {
  if (run.status === 'unknown') return 'no record (deleted)';
  if (run.owner === null) return run.status;
  if (run.owner === departedId) return `${run.status}, lease not lapsed yet`;
  return `${run.status} on ${run.owner}`;
}

function DepartedTable({ departed }: { departed: DepartedFleetWorker[] }) {
  return (
    <table aria-labelledby="departed-title">
      <thead>
        <tr>
          <th scope="col">Worker</th>
          <th scope="col">Host</th>
          <th scope="col">Ended</th>
          <th scope="col">Last seen</th>
          <th scope="col">Ended at</th>
          <th scope="col">Runs held, and where they are now</th>
        </tr>
      </thead>
      <tbody>
        {departed.map((w) => (
          <tr key={w.workerId} data-departed-worker-id={w.workerId} data-ended={w.ended}>
            <td>{w.workerId}</td>
            <td>
              {w.host} (pid {w.pid})
            </td>
            <td>{endText(w)}</td>
            <td>
              <Time ms={w.lastSeenAt} />
            </td>
            <td>
              <Time ms={w.endedAt} />
            </td>
            <td>
              {w.heldRuns.length === 0 ? (
                w.runsHeld === 0 ? (
                  'none'
                ) : (
                  `${w.runsHeld} (not listed by its release)`
                )
              ) : (
                <ul class="held-runs">
                  {w.heldRuns.map((run) => (
                    <li key={run.runId}>
                      <a href={`/runs/${encodeURIComponent(run.runId)}`} onClick={onLinkClick}>
                        {run.runId}
                      </a>{' '}
                      → {whereText(run, w.workerId)}
                    </li>
                  ))}
                  {w.runsHeld > w.heldRuns.length && <li>and {w.runsHeld - w.heldRuns.length} more</li>}
                </ul>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
