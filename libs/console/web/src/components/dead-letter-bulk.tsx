/**
 * Redriving dead letters in bulk, on the dead letters page: every letter or one code's. The count
 * comes first, in the confirmation (letters that would go back on the run queue, and those that
 * would be refused because their message does not decode); then the job's progress and summary,
 * each refused or failed letter with the reason. The server runs client.bulk.redriveDeadLetters.
 */
import { useEffect, useState } from 'preact/hooks';
import { get, post } from '../api.js';
import type { JobState } from './bulk-actions.js';
import { ConfirmDialog } from './confirm-dialog.js';
import { JobReport } from './job-report.js';

interface DeadLetterCount {
  code?: string;
  count: number;
  unreadable: number;
  codes: Record<string, number>;
}

export function DeadLetterBulk(props: { onDone: () => void }) {
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<Record<string, number>>({});
  const [count, setCount] = useState<DeadLetterCount | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [job, setJob] = useState<JobState | undefined>(undefined);

  const loadCodes = (): void => {
    get<DeadLetterCount>('/api/bulk/dead-letters/count').then(
      (answer) => setCodes(answer.codes),
      (err: unknown) => setError(err instanceof Error ? err.message : String(err)),
    );
  };
  useEffect(loadCodes, []);

  useEffect(() => {
    if (job === undefined || job.done) return;
    const timer = window.setTimeout(() => {
      get<JobState>(`/api/bulk/jobs/${encodeURIComponent(job.id)}`).then(
        (next) => {
          setJob(next);
          if (next.done) {
            loadCodes();
            props.onDone();
          }
        },
        (err: unknown) => setError(err instanceof Error ? err.message : String(err)),
      );
    }, 500);
    return () => window.clearTimeout(timer);
  }, [job]);

  async function askCount(): Promise<void> {
    setError(undefined);
    try {
      const answer = await get<DeadLetterCount>(
        `/api/bulk/dead-letters/count${code ? `?code=${encodeURIComponent(code)}` : ''}`,
      );
      setCodes(answer.codes);
      setCount(answer);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  }

  async function start(): Promise<void> {
    setBusy(true);
    try {
      setJob(await post<JobState>('/api/bulk/dead-letters/redrive', code ? { code } : {}));
      setCount(undefined);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  const which = code ? `with code ${code}` : 'of every code';
  return (
    <section aria-labelledby="dl-bulk-title" class="bulk">
      <h2 id="dl-bulk-title">Redrive in bulk</h2>
      <div class="button-row">
        <label>
          Dead letters to redrive
          <select value={code} onChange={(e) => setCode(e.currentTarget.value)}>
            <option value="">every code</option>
            {Object.entries(codes).map(([name, n]) => (
              <option key={name} value={name}>
                {name} ({n})
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => void askCount()}>
          Count and confirm redrive…
        </button>
      </div>
      {error && count === undefined && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <JobReport
        job={job}
        action="redrive"
        succeeded="redriven"
        items="dead letters"
        testId="dl-bulk-progress"
      />
      {count !== undefined && (
        <ConfirmDialog
          title={`Redrive ${count.count} dead letter(s)?`}
          consequence={
            `${count.count} dead letter(s) ${which} will have their original message put back on the run queue, ` +
            'and each letter is removed; a letter whose cause is not fixed is dead-lettered again.' +
            (count.unreadable > 0
              ? ` ${count.unreadable} more do not decode and will be refused (purge them instead).`
              : '')
          }
          confirmLabel={`Redrive ${count.count} dead letter(s)`}
          canConfirm={count.count > 0}
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
