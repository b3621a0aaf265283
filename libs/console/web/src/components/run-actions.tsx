/**
 * The actions on one run, each behind a confirmation naming what it does: cancel, signal (a
 * JSON payload checked before it is sent), pause, resume, retry, fork from a chosen step, delete.
 * Only the actions the run's status allows are offered; none in read-only mode.
 */
import { useState } from 'preact/hooks';
import { post, runPath } from '../api.js';
import { navigate } from '../router.js';
import { ConfirmDialog } from './confirm-dialog.js';

type ActionName = 'cancel' | 'signal' | 'pause' | 'resume' | 'retry' | 'fork' | 'delete';

/** A point a fork may start from: a kept checkpoint or a step's journal position. */
export interface ForkChoice {
  label: string;
  point: { fromCheckpoint: number } | { fromJournalPosition: number };
}

const FINISHED = ['completed', 'failed', 'cancelled'];

/** Which actions a run in `status` accepts. */
export function actionsFor(status: string): ActionName[] {
  const list: ActionName[] = [];
  if (!FINISHED.includes(status)) list.push('cancel', 'signal');
  if (['pending', 'running', 'suspended'].includes(status)) list.push('pause');
  if (status === 'paused') list.push('resume');
  if (status === 'failed') list.push('retry');
  list.push('fork');
  if (FINISHED.includes(status)) list.push('delete');
  return list;
}

const LABELS: Record<ActionName, string> = {
  cancel: 'Cancel run',
  signal: 'Send signal',
  pause: 'Pause',
  resume: 'Resume',
  retry: 'Retry',
  fork: 'Fork',
  delete: 'Delete run',
};

/** Parses the payload editor's text: undefined for empty, the value, or why it is not JSON. */
export function parsePayload(text: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  if (text.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, problem: `not valid JSON: ${(err as Error).message}` };
  }
}

export function RunActions(props: {
  runId: string;
  status: string;
  forkChoices: ForkChoice[];
  onDone: (message: string) => void;
}) {
  const [open, setOpen] = useState<ActionName | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [reason, setReason] = useState('');
  const [signalName, setSignalName] = useState('');
  const [payload, setPayload] = useState('');
  const [fork, setFork] = useState(0);
  const { runId } = props;

  const close = (): void => {
    setOpen(undefined);
    setError(undefined);
    setBusy(false);
  };

  async function send(action: ActionName): Promise<void> {
    setBusy(true);
    setError(undefined);
    try {
      let body: unknown = {};
      if (action === 'cancel' || action === 'pause') body = reason ? { reason } : {};
      if (action === 'signal') {
        const parsed = parsePayload(payload);
        body = {
          name: signalName,
          ...(parsed.ok && parsed.value !== undefined && { payload: parsed.value }),
        };
      }
      if (action === 'fork') body = props.forkChoices[fork]?.point ?? {};
      const answer = await post<{ done: string; runId?: string }>(runPath(runId, `/${action}`), body);
      close();
      props.onDone(`${LABELS[action]}: ${answer.done}`);
      if (action === 'fork' && answer.runId) navigate(`/runs/${encodeURIComponent(answer.runId)}`);
      if (action === 'delete') navigate('/');
    } catch (err) {
      setBusy(false);
      setError(err instanceof Error ? err.message : String(err));
    }
  }

  const parsed = parsePayload(payload);
  const dialogs: Record<ActionName, () => preact.JSX.Element> = {
    cancel: () => (
      <ConfirmDialog
        title={`Cancel run ${runId}?`}
        consequence="The run stops at its next step and ends cancelled; activities already running finish first. This cannot be undone."
        confirmLabel="Cancel the run"
        danger
        busy={busy}
        error={error}
        onConfirm={() => void send('cancel')}
        onClose={close}
      >
        <label>
          Reason (optional)
          <input value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        </label>
      </ConfirmDialog>
    ),
    signal: () => (
      <ConfirmDialog
        title={`Send a signal to run ${runId}`}
        consequence="The run receives the signal at its next wait for that name; a run that has finished drops it."
        confirmLabel="Send the signal"
        canConfirm={signalName.trim() !== '' && parsed.ok}
        busy={busy}
        error={error}
        onConfirm={() => void send('signal')}
        onClose={close}
      >
        <label>
          Signal name
          <input value={signalName} required onInput={(e) => setSignalName(e.currentTarget.value)} />
        </label>
        <label>
          Payload (JSON)
          <textarea
            rows={6}
            value={payload}
            aria-invalid={!parsed.ok}
            aria-describedby="payload-check"
            onInput={(e) => setPayload(e.currentTarget.value)}
          />
        </label>
        <p id="payload-check" class={parsed.ok ? 'hint' : 'error'}>
          {parsed.ok ? (payload.trim() === '' ? 'No payload.' : 'Valid JSON.') : parsed.problem}
        </p>
      </ConfirmDialog>
    ),
    pause: () => (
      <ConfirmDialog
        title={`Pause run ${runId}?`}
        consequence="The run finishes the activities in flight, starts nothing new and stays paused (no worker runs it) until you resume it. Signals sent meanwhile are kept."
        confirmLabel="Pause the run"
        busy={busy}
        error={error}
        onConfirm={() => void send('pause')}
        onClose={close}
      >
        <label>
          Reason (optional)
          <input value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        </label>
      </ConfirmDialog>
    ),
    resume: () => (
      <ConfirmDialog
        title={`Resume run ${runId}?`}
        consequence="A worker claims the run at once and it goes on from its last journaled step."
        confirmLabel="Resume the run"
        busy={busy}
        error={error}
        onConfirm={() => void send('resume')}
        onClose={close}
      />
    ),
    retry: () => (
      <ConfirmDialog
        title={`Retry run ${runId}?`}
        consequence="The run resumes from its last checkpoint: the steps that failed run again, every step that succeeded is replayed, not executed."
        confirmLabel="Retry the run"
        busy={busy}
        error={error}
        onConfirm={() => void send('retry')}
        onClose={close}
      />
    ),
    fork: () => (
      <ConfirmDialog
        title={`Fork run ${runId}`}
        consequence="A new run of the same workflow version and input starts: the steps before the chosen point replay from this run's history, the steps after it execute again. This run is only read."
        confirmLabel="Start the fork"
        canConfirm={props.forkChoices.length > 0}
        busy={busy}
        error={error}
        onConfirm={() => void send('fork')}
        onClose={close}
      >
        {props.forkChoices.length === 0 && (
          <p class="hint">No fork point yet: the run has journaled nothing.</p>
        )}
        <label>
          Fork from
          <select value={String(fork)} onChange={(e) => setFork(Number(e.currentTarget.value))}>
            {props.forkChoices.map((choice, i) => (
              <option key={choice.label} value={String(i)}>
                {choice.label}
              </option>
            ))}
          </select>
        </label>
      </ConfirmDialog>
    ),
    delete: () => (
      <ConfirmDialog
        title={`Delete run ${runId}?`}
        consequence="Its record, checkpoints, lease, signals and idempotency key are deleted for good, then its journal. This cannot be undone."
        confirmLabel="Delete for good"
        danger
        busy={busy}
        error={error}
        onConfirm={() => void send('delete')}
        onClose={close}
      />
    ),
  };

  return (
    <section aria-labelledby="actions-title" class="actions">
      <h2 id="actions-title">Actions</h2>
      <div class="button-row">
        {actionsFor(props.status).map((action) => (
          <button
            key={action}
            type="button"
            class={action === 'cancel' || action === 'delete' ? 'danger' : ''}
            onClick={() => {
              setReason('');
              setOpen(action);
            }}
          >
            {LABELS[action]}
          </button>
        ))}
      </div>
      {open && dialogs[open]()}
    </section>
  );
}
