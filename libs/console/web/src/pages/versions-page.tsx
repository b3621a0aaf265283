/**
 * The versions page: per workflow version, the work that still needs it (unfinished runs by
 * status, dead-lettered starts), the live workers that can take it and those draining, and its
 * state: drained (its code may be removed), stranded (work needs it and no live worker has it) or
 * in use. The same data as `baton versions` (client.fleet.versions). Polled.
 */
import { get } from '../api.js';
import { usePolling } from '../hooks.js';
import { onLinkClick } from '../router.js';
import type { VersionDrain, VersionsListing } from '../types.js';

function stateText(v: VersionDrain): string {
  return v.drained ? 'drained' : v.stranded ? 'stranded' : 'in use';
}

function byStatusText(v: VersionDrain): string {
  const parts = Object.entries(v.unfinished.byStatus).map(([status, n]) => `${status} ${n}`);
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

export function VersionsPage() {
  const versions = usePolling('versions', () => get<VersionsListing>('/api/versions'), 5_000);
  const listing = versions.data;
  return (
    <main aria-labelledby="versions-title">
      <h1 id="versions-title">Versions</h1>
      <p class="hint">
        A version is drained when no unfinished run and no dead-lettered start needs it: its code may then be
        removed. Stranded: work needs it and no live worker that is not draining registers it.
      </p>
      {versions.error && (
        <p role="alert" class="error">
          {versions.error}
        </p>
      )}
      {listing && !listing.complete && (
        <p class="hint">
          The walk stopped at its limit: the counts are lower bounds (+); drained and stranded are exact.
        </p>
      )}
      <table aria-label="Workflow versions">
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Unfinished runs</th>
            <th scope="col">Dead-lettered starts</th>
            <th scope="col">Live workers</th>
            <th scope="col">Draining workers</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {listing?.versions.map((v) => {
            const key = `${v.workflow}@${v.version}`;
            const runs = `/?workflow=${encodeURIComponent(v.workflow)}&version=${v.version}&status=pending,running,suspended,paused`;
            return (
              <tr key={key} data-version={key} class={v.stranded ? 'stranded' : undefined}>
                <td>{key}</td>
                <td data-testid="unfinished">
                  {v.unfinished.total === 0 ? (
                    '0'
                  ) : (
                    <a href={runs} onClick={onLinkClick}>
                      {v.unfinished.total}
                      {listing.complete ? '' : '+'}
                      {byStatusText(v)}
                    </a>
                  )}
                </td>
                <td>{v.deadLetteredStarts}</td>
                <td data-testid="workers">
                  {v.workers.length === 0
                    ? '-'
                    : v.workers.map((w, i) => (
                        <span key={w}>
                          {i > 0 && ' '}
                          <a href={`/?worker=${encodeURIComponent(w)}`} onClick={onLinkClick}>
                            {w}
                          </a>
                        </span>
                      ))}
                </td>
                <td>{v.drainingWorkers.join(' ') || '-'}</td>
                <td data-testid="state">
                  <span class={`badge version-${stateText(v).replace(' ', '-')}`}>{stateText(v)}</span>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {listing && listing.versions.length === 0 && (
        <p>No workflow version is registered by a live worker or needed by a run.</p>
      )}
    </main>
  );
}
