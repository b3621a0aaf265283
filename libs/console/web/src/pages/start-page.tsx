/**
 * The start page: pick a workflow version (those the console loaded with `--workflows` and those
 * the live workers register), give its input, in a form generated from its input's JSON Schema
 * when the console has one (schema-form.tsx) or as JSON otherwise, and an optional idempotency
 * key; the start goes through a confirmation naming what will happen, then opens the new run. The
 * schema's refusals are shown beside their fields. A read-only console offers no start.
 */
import { useState } from 'preact/hooks';
import { ApiError, get, getSession, post, type SessionInfo } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { parsePayload } from '../components/run-actions.js';
import { inputOfFields, issuesByField, schemaFields, SchemaForm } from '../components/schema-form.js';
import { usePolling } from '../hooks.js';
import { navigate } from '../router.js';
import type { StartableVersion } from '../types.js';

const keyOf = (v: StartableVersion): string => `${v.name}@${v.version}`;

export function StartPage(props: { search: string }) {
  const startable = usePolling('startable', () => get<StartableVersion[]>('/api/startable'), 10_000);
  const session = usePolling<SessionInfo>('session', getSession, 60_000);
  const wanted = new URLSearchParams(props.search).get('workflow') ?? '';
  const [picked, setPicked] = useState<string | undefined>(undefined);
  const [values, setValues] = useState<Record<string, string>>({});
  const [json, setJson] = useState('');
  const [asJson, setAsJson] = useState(false);
  const [key, setKey] = useState('');
  const [issues, setIssues] = useState<Record<string, string[]>>({});
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();

  const list = startable.data ?? [];
  const chosenKey = picked ?? (list.some((v) => keyOf(v) === wanted) ? wanted : list[0] && keyOf(list[0]));
  const chosen = list.find((v) => keyOf(v) === chosenKey);
  const fields = chosen && !asJson ? schemaFields(chosen.inputSchema) : undefined;
  const fromFields = fields ? inputOfFields(fields, values) : undefined;
  const parsedJson = parsePayload(json);
  const localProblems: Record<string, string[]> = Object.fromEntries(
    Object.entries(fromFields?.problems ?? {}).map(([name, problem]) => [name, [problem]]),
  );
  const shownProblems = { ...issues, ...localProblems };
  const ready =
    chosen !== undefined && (fromFields ? Object.keys(fromFields.problems).length === 0 : parsedJson.ok);
  const readOnly = session.data?.readOnly !== false;

  function input(): unknown {
    if (fromFields) return fromFields.input;
    return parsedJson.ok ? parsedJson.value : undefined;
  }

  function pick(next: string): void {
    setPicked(next);
    setValues({});
    setIssues({});
    setError(undefined);
    navigate(`/start?workflow=${encodeURIComponent(next)}`, true);
  }

  async function start(): Promise<void> {
    if (!chosen) return;
    setBusy(true);
    setError(undefined);
    try {
      const value = input();
      const answer = await post<{ runId: string; created: boolean; done: string }>('/api/start', {
        workflow: chosen.name,
        version: chosen.version,
        ...(value !== undefined && { input: value }),
        ...(key.trim() !== '' && { idempotencyKey: key.trim() }),
      });
      setConfirming(false);
      setBusy(false);
      navigate(`/runs/${encodeURIComponent(answer.runId)}`);
    } catch (err) {
      setBusy(false);
      const refused = err instanceof ApiError ? err.body['issues'] : undefined;
      if (Array.isArray(refused)) {
        // Shown beside the fields (or under the JSON): the dialog closes so they can be fixed.
        setIssues(issuesByField(refused.map(String)));
        setConfirming(false);
        setError(err instanceof Error ? err.message : String(err));
      } else setError(err instanceof Error ? err.message : String(err));
    }
  }

  const generalIssues = [
    ...(issues[''] ?? []),
    ...(fields
      ? []
      : Object.entries(issues)
          .filter(([k]) => k !== '')
          .map(([k, m]) => `${k}: ${m.join('; ')}`)),
  ];
  return (
    <main aria-labelledby="start-title">
      <h1 id="start-title">Start a run</h1>
      {startable.error && (
        <p role="alert" class="error">
          {startable.error}
        </p>
      )}
      {startable.data && list.length === 0 && (
        <p>
          No workflow to start: no live worker registers one, and this console loaded none (`baton console
          --workflows &lt;module&gt;`).
        </p>
      )}
      {chosen && (
        <form
          class="start-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (ready && !readOnly) {
              setError(undefined);
              setConfirming(true);
            }
          }}
        >
          <label>
            Workflow
            <select value={chosenKey} onChange={(e) => pick(e.currentTarget.value)}>
              {list.map((v) => (
                <option key={keyOf(v)} value={keyOf(v)}>
                  {keyOf(v)}
                  {v.live ? '' : ' (no live worker)'}
                </option>
              ))}
            </select>
          </label>
          <p class="hint" data-testid="schema-note">
            {chosen.inputSchema
              ? fields
                ? 'The form follows the input schema; the start is checked against it before anything is sent.'
                : 'The input is checked against its schema before anything is sent.'
              : chosen.loaded
                ? 'This workflow’s input schema has no JSON Schema form: give the input as JSON; it is checked against the schema before anything is sent.'
                : 'This console has no input schema for this workflow (load it with `baton console --workflows <module>`): give the input as JSON; the worker checks it when it starts the run.'}
          </p>
          {chosen.inputSchema && schemaFields(chosen.inputSchema) && (
            <label class="check">
              <input
                type="checkbox"
                checked={asJson}
                onChange={(e) => {
                  const toJson = e.currentTarget.checked;
                  if (toJson && fromFields) setJson(JSON.stringify(fromFields.input, null, 2));
                  setAsJson(toJson);
                }}
              />
              Edit the input as JSON
            </label>
          )}
          {fields ? (
            <SchemaForm fields={fields} values={values} problems={shownProblems} onChange={setValues} />
          ) : (
            <>
              <label>
                Input (JSON)
                <textarea
                  rows={8}
                  value={json}
                  aria-invalid={!parsedJson.ok || generalIssues.length > 0}
                  aria-describedby="start-input-check"
                  onInput={(e) => setJson(e.currentTarget.value)}
                />
              </label>
              <p id="start-input-check" class={parsedJson.ok ? 'hint' : 'error'}>
                {parsedJson.ok ? (json.trim() === '' ? 'No input.' : 'Valid JSON.') : parsedJson.problem}
              </p>
            </>
          )}
          {generalIssues.length > 0 && (
            <ul class="error field-error" aria-label="Input problems">
              {generalIssues.map((issue) => (
                <li key={issue}>{issue}</li>
              ))}
            </ul>
          )}
          <label>
            Idempotency key (optional: a second start with the same key opens the same run)
            <input value={key} onInput={(e) => setKey(e.currentTarget.value)} />
          </label>
          {error && !confirming && (
            <p role="alert" class="error">
              {error}
            </p>
          )}
          {readOnly ? (
            <p class="hint">This console is read-only: it starts no run.</p>
          ) : (
            <div class="button-row">
              <button type="submit" class="primary" disabled={!ready}>
                Start run…
              </button>
            </div>
          )}
        </form>
      )}
      {confirming && chosen && (
        <ConfirmDialog
          title={`Start a run of ${keyOf(chosen)}?`}
          consequence={
            `A new run of ${keyOf(chosen)} starts with the input given` +
            (key.trim() !== ''
              ? ` under the idempotency key '${key.trim()}': if that key already names a run, nothing new starts and that run opens.`
              : '.') +
            (chosen.live
              ? ''
              : ' No live worker registers this version yet: the start is refused unless one does.')
          }
          confirmLabel="Start the run"
          busy={busy}
          error={error}
          onConfirm={() => void start()}
          onClose={() => {
            setConfirming(false);
            setError(undefined);
          }}
        />
      )}
    </main>
  );
}
