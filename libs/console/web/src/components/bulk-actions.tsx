/**
 * Bulk actions on the runs page's current filter: pick an action, see how many runs it would
 * take (the count comes first, in the confirmation), confirm, then watch its progress and read
 * its summary: done, refused with the reason, failed.
 */
import { useEffect, useState } from 'preact/hooks';
import { get, post } from '../api.js';
import { ConfirmDialog } from './confirm-dialog.js';
import { JobReport } from './job-report.js';

const ACTIONS = {
  cancel: 'request cancellation of every pending, running or suspended run',
  pause: 'pause every pending, running or suspended run',
  resume: 'resume every paused run',
  retry: 'retry every failed run from its last checkpoint',
  delete: 'delete every completed, failed or cancelled run for good',
} as const;
type BulkAction = keyof typeof ACTIONS;

export interface JobState {
  id: string;
  action: string;
  progress: { done: number; succeeded: number; refused: number; failed: number };
  summary?: {
    matched: number;
    refused: { id: string; reason: string }[];
    failed: { id: string; error: string }[];
  };
  error?: string;
  done: boolean;
}

/** The filter part of the page's query: what the bulk action takes. */
function filterOf(search: string): string {
  const params = new URLSearchParams(search);
  for (const key of ['cursor', 'limit', 'order', 'cols']) params.delete(key);
  return params.toString();
}

export function BulkActions(props: { search: string; onDone: () => void }) {
  // No action until the user picks one: a failed-runs filter must not offer "cancel" by default.
  const [action, setAction] = useState<BulkAction | ''>('');
  const [count, setCount] = useState<number | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [job, setJob] = useState<JobState | undefined>(undefined);
  const filter = filterOf(props.search);

  useEffect(() => {
    if (job === undefined || job.done) return;
    const timer = window.setTimeout(() => {
      get<JobState>(`/api/bulk/jobs/${encodeURIComponent(job.id)}`).then(
        (next) => {
          setJob(next);
          if (next.done) props.onDone();
        },
        (err: unknown) => setError(err instanceof Error ? err.message : String(err)),
      );
    }, 500);
    return () => window.clearTimeout(timer);
  }, [job]);

  async function askCount(): Promise<void> {
    if (action === '') return;
    setError(undefined);
    try {
      const answer = await get<{ count: number }>(
        `/api/bulk/count?action=${action}${filter ? `&${filter}` : ''}`,
      );
      setCount(answer.count);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  }

  async function start(): Promise<void> {
    if (action === '') return;
    setBusy(true);
    try {
      setJob(await post<JobState>('/api/bulk/run', { action, filter }));
      setCount(undefined);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="bulk-title" class="bulk">
      <h2 id="bulk-title">Bulk action on these filters</h2>
      <div class="button-row">
        <label>
          Bulk action
          <select value={action} onChange={(e) => setAction(e.currentTarget.value as BulkAction | '')}>
            <option value="" disabled>
              choose an action…
            </option>
            {Object.keys(ACTIONS).map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <button type="button" disabled={action === ''} onClick={() => void askCount()}>
          Count and confirm…
        </button>
      </div>
      {error && count === undefined && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <JobReport
        job={job}
        action={job?.action ?? action}
        succeeded="done"
        items="runs"
        testId="bulk-progress"
      />
      {count !== undefined && action !== '' && (
        <ConfirmDialog
          title={`Bulk ${action}: ${count} run(s)`}
          consequence={
            `${count} run(s) match the current filters${filter ? ` (${filter})` : ' (no filter: every run)'}. ` +
            `This will ${ACTIONS[action]} among them, oldest first; a run that changed meanwhile is refused with the reason.`
          }
          confirmLabel={`${action[0]!.toUpperCase()}${action.slice(1)} ${count} run(s)`}
          canConfirm={count > 0}
          danger={action === 'cancel' || action === 'delete'}
          busy={busy}
          error={error}
          onConfirm={() => void start()}
          onClose={() => {
            setCount(undefined);
            setError(undefined);
          }}
        />
      )}
    </section>
  );
}
