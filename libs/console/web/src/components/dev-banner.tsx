/**
 * `baton dev`'s banner: what the workers run since the last reload, the runs in flight that reload
 * would break (each a link to its page, with the step where code and journal part), and a change
 * that did not load. Polls `/api/dev` every two seconds, so an edit shows here as soon as the
 * terminal prints it.
 */
import { get } from '../api.js';
import { usePolling } from '../hooks.js';
import { onLinkClick } from '../router.js';
import type { DevReport } from '../types.js';

const DEV_POLL_MS = 2_000;

export function DevBanner() {
  const report = usePolling<DevReport>('dev', () => get<DevReport>('/api/dev'), DEV_POLL_MS);
  const data = report.data;
  if (data === undefined) return null;
  return (
    <section class="dev-banner" aria-label="baton dev">
      <p>
        <span class="badge">baton dev</span> running {data.workflows.join(', ')}
        {data.reloadedAt !== undefined && (
          <> · reloaded at {new Date(data.reloadedAt).toLocaleTimeString()}</>
        )}
      </p>
      {data.notLoaded !== undefined && (
        <p class="error" role="alert">
          The last change did not load; the workers keep the code they had: {data.notLoaded}
        </p>
      )}
      {data.broken.length > 0 && (
        <div role="alert">
          <p class="error">
            {data.broken.length} run(s) in flight would break on the new code (NonDeterminismError when they
            resume):
          </p>
          <ul>
            {data.broken.map((b) => (
              <li key={b.runId}>
                <a href={`/runs/${encodeURIComponent(b.runId)}`} onClick={onLinkClick}>
                  {b.runId}
                </a>{' '}
                ({b.workflow}): {b.detail}
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
