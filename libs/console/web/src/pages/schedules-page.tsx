/**
 * The schedules page: every schedule (a page at a time) with what it starts, when (the cron
 * expression and its time zone, or the interval), its next due times, the last run it started,
 * and its policies; and, unless the console is read-only, its actions, each behind a confirmation
 * naming what will happen: pause, resume, trigger now (one run at once, the due times unchanged)
 * and edit (timing, input, overlap, note). Polled.
 */
import { useState } from 'preact/hooks';
import { get, getSession, post, type SessionInfo } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { parsePayload } from '../components/run-actions.js';
import { Time } from '../components/time.js';
import { durationText, jsonText, usePolling } from '../hooks.js';
import { onLinkClick } from '../router.js';
import type { ListedSchedule } from '../types.js';

type ScheduleAction = 'pause' | 'resume' | 'trigger' | 'edit';

function timingText(s: ListedSchedule): string {
  return 'cron' in s.spec
    ? `cron ${s.spec.cron} (${s.spec.timeZone ?? 'UTC'})`
    : `every ${durationText(s.spec.everyMs)}`;
}

function runLink(runId: string) {
  return (
    <a href={`/runs/${encodeURIComponent(runId)}`} onClick={onLinkClick}>
      {runId}
    </a>
  );
}

/** The edit form's fields, as text. */
interface EditFields {
  kind: 'cron' | 'every';
  cron: string;
  timeZone: string;
  every: string;
  input: string;
  overlap: string;
  note: string;
}

function editFieldsOf(s: ListedSchedule): EditFields {
  return {
    kind: 'cron' in s.spec ? 'cron' : 'every',
    cron: 'cron' in s.spec ? s.spec.cron : '',
    timeZone: 'cron' in s.spec ? (s.spec.timeZone ?? 'UTC') : 'UTC',
    every: 'everyMs' in s.spec ? `${s.spec.everyMs}` : '',
    input: jsonText(s.input),
    overlap: s.overlap,
    note: s.note ?? '',
  };
}

/** The update to send: only what changed from the schedule as listed. */
function updateOf(s: ListedSchedule, fields: EditFields): Record<string, unknown> {
  const before = editFieldsOf(s);
  const update: Record<string, unknown> = {};
  if (
    fields.kind === 'cron' &&
    (fields.cron !== before.cron || fields.timeZone !== before.timeZone || before.kind !== 'cron')
  )
    Object.assign(update, { cron: fields.cron, timeZone: fields.timeZone });
  if (fields.kind === 'every' && (fields.every !== before.every || before.kind !== 'every'))
    update['every'] = fields.every;
  if (fields.input !== before.input) {
    const parsed = parsePayload(fields.input);
    if (parsed.ok) update['input'] = parsed.value ?? null;
  }
  if (fields.overlap !== before.overlap) update['overlap'] = fields.overlap;
  if (fields.note !== before.note) update['note'] = fields.note;
  return update;
}

function EditFieldsForm(props: { fields: EditFields; set: (f: EditFields) => void }) {
  const { fields, set } = props;
  const parsed = parsePayload(fields.input);
  return (
    <>
      <fieldset>
        <legend>When</legend>
        <label class="check">
          <input
            type="radio"
            name="timing"
            checked={fields.kind === 'cron'}
            onChange={() => set({ ...fields, kind: 'cron' })}
          />
          Cron expression
        </label>
        <label class="check">
          <input
            type="radio"
            name="timing"
            checked={fields.kind === 'every'}
            onChange={() => set({ ...fields, kind: 'every' })}
          />
          Fixed interval
        </label>
        {fields.kind === 'cron' ? (
          <>
            <label>
              Cron (5 fields, or 6 with seconds first)
              <input value={fields.cron} onInput={(e) => set({ ...fields, cron: e.currentTarget.value })} />
            </label>
            <label>
              Time zone (IANA)
              <input
                value={fields.timeZone}
                onInput={(e) => set({ ...fields, timeZone: e.currentTarget.value })}
              />
            </label>
          </>
        ) : (
          <label>
            Every (ms, or a number and a unit: 30s, 15m, 1h)
            <input value={fields.every} onInput={(e) => set({ ...fields, every: e.currentTarget.value })} />
          </label>
        )}
      </fieldset>
      <label>
        Input of the runs to come (JSON)
        <textarea
          rows={5}
          value={fields.input}
          aria-invalid={!parsed.ok}
          aria-describedby="schedule-input-check"
          onInput={(e) => set({ ...fields, input: e.currentTarget.value })}
        />
      </label>
      <p id="schedule-input-check" class={parsed.ok ? 'hint' : 'error'}>
        {parsed.ok ? 'Valid JSON.' : parsed.problem}
      </p>
      <label>
        When the previous run is not finished
        <select value={fields.overlap} onChange={(e) => set({ ...fields, overlap: e.currentTarget.value })}>
          <option value="skip">skip the due time</option>
          <option value="queue-one">queue one, start it when the previous run ends</option>
          <option value="allow">start alongside</option>
        </select>
      </label>
      <label>
        Note
        <input value={fields.note} onInput={(e) => set({ ...fields, note: e.currentTarget.value })} />
      </label>
    </>
  );
}

export function SchedulesPage() {
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const schedules = usePolling(
    `schedules ${cursor ?? ''}`,
    () =>
      get<{ schedules: ListedSchedule[]; cursor?: string }>(
        `/api/schedules${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`,
      ),
    5_000,
  );
  const session = usePolling<SessionInfo>('session', getSession, 60_000);
  const writable = session.data !== undefined && !session.data.readOnly;
  const [open, setOpen] = useState<{ action: ScheduleAction; schedule: ListedSchedule } | undefined>();
  const [fields, setFields] = useState<EditFields | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState('');

  const close = (): void => {
    setOpen(undefined);
    setBusy(false);
    setError(undefined);
  };

  async function send(action: ScheduleAction, s: ListedSchedule): Promise<void> {
    setBusy(true);
    setError(undefined);
    try {
      const path = `/api/schedules/${encodeURIComponent(s.scheduleId)}/${action === 'edit' ? 'update' : action}`;
      const body = action === 'edit' && fields ? updateOf(s, fields) : {};
      const answer = await post<{ done: string }>(path, body);
      close();
      setNotice(`Schedule ${s.scheduleId}: ${answer.done}`);
      schedules.refresh();
    } catch (err) {
      setBusy(false);
      setError(err instanceof Error ? err.message : String(err));
    }
  }

  function dialog(action: ScheduleAction, s: ListedSchedule) {
    const common = {
      busy,
      error,
      onClose: close,
      onConfirm: () => void send(action, s),
    };
    const what = `${s.workflow}@${s.version}`;
    if (action === 'pause')
      return (
        <ConfirmDialog
          {...common}
          title={`Pause schedule ${s.scheduleId}?`}
          consequence={`It starts no run of ${what} until resumed; the due times that pass meanwhile start nothing, even after it resumes. Runs already started go on.`}
          confirmLabel="Pause the schedule"
        />
      );
    if (action === 'resume')
      return (
        <ConfirmDialog
          {...common}
          title={`Resume schedule ${s.scheduleId}?`}
          consequence={`It starts runs of ${what} again from its next due time after now (${timingText(s)}); the due times missed while paused start no run.`}
          confirmLabel="Resume the schedule"
        />
      );
    if (action === 'trigger')
      return (
        <ConfirmDialog
          {...common}
          title={`Start a run of schedule ${s.scheduleId} now?`}
          consequence={`One run of ${what} starts at once with the schedule's input. It is a run of its own: the schedule's due times do not change, and its next due run still starts on time.`}
          confirmLabel="Start the run now"
        />
      );
    const update = fields ? updateOf(s, fields) : {};
    const changed = Object.keys(update);
    return (
      <ConfirmDialog
        {...common}
        title={`Edit schedule ${s.scheduleId}`}
        consequence={
          changed.length === 0
            ? 'Change a field below. Runs already started are not touched.'
            : `Saves ${changed.join(', ')}. ${'cron' in update || 'every' in update ? 'The schedule carries on from its first due time after now under the new timing. ' : ''}Runs already started are not touched; the runs to come use the new values.`
        }
        confirmLabel="Save the schedule"
        canConfirm={changed.length > 0 && (fields === undefined || parsePayload(fields.input).ok)}
      >
        {fields && <EditFieldsForm fields={fields} set={setFields} />}
      </ConfirmDialog>
    );
  }

  const rows = schedules.data?.schedules ?? [];
  return (
    <main aria-labelledby="schedules-title">
      <h1 id="schedules-title">Schedules</h1>
      <p class="notice" role="status">
        {notice}
      </p>
      {schedules.error && (
        <p role="alert" class="error">
          {schedules.error}
        </p>
      )}
      <table aria-label="Schedules">
        <thead>
          <tr>
            <th scope="col">Schedule</th>
            <th scope="col">Workflow</th>
            <th scope="col">When</th>
            <th scope="col">Next due</th>
            <th scope="col">Last run</th>
            <th scope="col">Overlap</th>
            <th scope="col">State</th>
            {writable && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {rows.map((s) => (
            <tr key={s.scheduleId} data-schedule-id={s.scheduleId}>
              <td>
                {s.scheduleId}
                {s.note && <div class="hint">{s.note}</div>}
              </td>
              <td>
                {s.workflow}@{s.version}
              </td>
              <td>{timingText(s)}</td>
              <td data-testid="next-due">
                {s.paused ? (
                  'paused'
                ) : s.upcoming.length === 0 ? (
                  'never again'
                ) : (
                  <ul class="due-times">
                    {s.upcoming.map((at) => (
                      <li key={at}>
                        <Time ms={at} />
                      </li>
                    ))}
                  </ul>
                )}
              </td>
              <td>
                {s.lastRunId ? runLink(s.lastRunId) : '-'}
                {s.lastDueAt !== null && (
                  <div class="hint">
                    due <Time ms={s.lastDueAt} />
                  </div>
                )}
              </td>
              <td>{s.overlap}</td>
              <td data-testid="state">{s.paused ? 'paused' : 'active'}</td>
              {writable && (
                <td>
                  <div class="button-row">
                    {(s.paused ? (['resume'] as const) : (['pause'] as const)).map((action) => (
                      <button
                        key={action}
                        type="button"
                        aria-label={`${action === 'pause' ? 'Pause' : 'Resume'} schedule ${s.scheduleId}`}
                        onClick={() => setOpen({ action, schedule: s })}
                      >
                        {action === 'pause' ? 'Pause' : 'Resume'}
                      </button>
                    ))}
                    <button
                      type="button"
                      aria-label={`Trigger schedule ${s.scheduleId} now`}
                      onClick={() => setOpen({ action: 'trigger', schedule: s })}
                    >
                      Trigger now
                    </button>
                    <button
                      type="button"
                      aria-label={`Edit schedule ${s.scheduleId}`}
                      onClick={() => {
                        setFields(editFieldsOf(s));
                        setOpen({ action: 'edit', schedule: s });
                      }}
                    >
                      Edit
                    </button>
                  </div>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {schedules.data && rows.length === 0 && (
        <p>No schedule in this store: create one with client.schedules.create or `baton schedules create`.</p>
      )}
      <div class="button-row">
        {cursor !== undefined && (
          <button type="button" onClick={() => setCursor(undefined)}>
            First page
          </button>
        )}
        {schedules.data?.cursor !== undefined && (
          <button type="button" onClick={() => setCursor(schedules.data?.cursor)}>
            Next page
          </button>
        )}
      </div>
      {open && dialog(open.action, open.schedule)}
    </main>
  );
}
