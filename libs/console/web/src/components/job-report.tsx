/**
 * A bulk job as it goes (announced to screen readers as a status) and, once done, the items it
 * refused or failed: shared by the runs page's bulk actions and the dead letters' bulk redrive.
 */
import type { JobState } from './bulk-actions.js';

export function JobReport(props: {
  job: JobState | undefined;
  /** The job's name in the progress line: `cancel`, `redrive`, … */
  action: string;
  /** What a success is called: `done`, `redriven`. */
  succeeded: string;
  /** The items, for the problems list's name: `runs`, `dead letters`. */
  items: string;
  testId: string;
}) {
  const { job } = props;
  return (
    <>
      <p role="status" class="notice" data-testid={props.testId}>
        {job
          ? `${props.action}: ${job.progress.done} handled (${job.progress.succeeded} ${props.succeeded}, ${job.progress.refused} refused, ${job.progress.failed} failed)` +
            (job.done ? (job.error ? `; stopped: ${job.error}` : '; finished') : '…')
          : ''}
      </p>
      {job?.summary && (job.summary.refused.length > 0 || job.summary.failed.length > 0) && (
        <ul class="bulk-problems" aria-label={`Refused or failed ${props.items}`}>
          {job.summary.refused.map((r) => (
            <li key={r.id}>
              <code>{r.id}</code> refused: {r.reason}
            </li>
          ))}
          {job.summary.failed.map((f) => (
            <li key={f.id} class="error">
              <code>{f.id}</code> failed: {f.error}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
