/**
 * The runs page: a table of runs for the filters in the URL's query (every field the store
 * filters by), a page at a time with the store's cursor, the counts by status, refreshed by
 * polling; bulk actions on that filter (components/bulk-actions.tsx). Changing a filter rewrites the URL (so it can be shared) and starts again at page one.
 * Search attributes (docs/search-attributes.md) are one text field of expressions separated by
 * spaces (`customerId=42 total>=100`), kept in the URL as one `attr=<expression>` each; the server
 * reads them (a bad one is its 400, shown as the page's error). With one keyword or boolean
 * attribute, the counts are that value's. The counts follow the filters (every one but status,
 * which picks among them): the store's kept counts for no filter, one workflow or one attribute,
 * else the server walks the matching runs up to a limit and says so. Each run shows when it
 * started (relative, the absolute time on hover), how long it took or has been running, what a
 * suspended or paused run waits for or a failed run's error, and the search attributes the user
 * picked as columns (`cols` in the URL).
 */
import { useState } from 'preact/hooks';
import { get, getSession, type SessionInfo } from '../api.js';
import { BulkActions } from '../components/bulk-actions.js';
import { Time } from '../components/time.js';
import { durationText, timeText, usePolling } from '../hooks.js';
import { navigate, onLinkClick } from '../router.js';
import {
  RUN_STATUSES,
  type FilteredCounts,
  type ListedRunView,
  type RunPage,
  type RunWait,
} from '../types.js';

/** The statuses a run ends in: its duration is from its start to its last change. */
const FINISHED = new Set(['completed', 'failed', 'cancelled']);

/** How long a run took, or `running for …` while it has not finished. */
function durationOf(run: ListedRunView, now: number): string {
  return FINISHED.has(run.status)
    ? durationText(run.updatedAt - run.createdAt)
    : `running for ${durationText(now - run.createdAt)}`;
}

/** One wait as the table says it. */
function waitText(wait: RunWait, now: number): string {
  switch (wait.kind) {
    case 'signal':
      return `signal ${wait.name}`;
    case 'promise':
      return 'a durable promise';
    case 'child':
      return `child ${wait.runId}`;
    case 'timer':
      return wait.at <= now ? `timer (due ${timeText(wait.at)})` : `timer at ${timeText(wait.at)}`;
    case 'pause':
      return wait.reason !== undefined ? `paused: ${wait.reason}` : 'paused';
  }
}

/** The details cell: what a suspended or paused run waits for, a failed run's error's first line. */
function detailOf(run: ListedRunView, now: number): string {
  if (run.waits !== undefined && run.waits.length > 0)
    return run.waits.map((w) => waitText(w, now)).join(', ');
  if (run.status === 'failed' && run.error !== undefined)
    return `${run.error.name}: ${run.error.message.split('\n')[0]}`;
  if (run.status === 'cancelled' && run.error !== undefined) return run.error.message.split('\n')[0] ?? '';
  return '';
}

/** The search attribute columns the URL names (`cols=customerId,tier`). */
function columnsOf(params: URLSearchParams): string[] {
  return (params.get('cols') ?? '')
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
}

/** A search attribute's value as a cell shows it (a time as the console's absolute time). */
function attributeText(attribute: { type: string; value: unknown } | undefined): string {
  if (attribute === undefined) return '-';
  return attribute.type === 'time' ? timeText(Number(attribute.value)) : String(attribute.value);
}

/** The search attribute expressions in a URL's query: `attr=` values and `attr.<name>=` shorthands. */
function attributeExpressions(params: URLSearchParams): string[] {
  const expressions: string[] = [];
  for (const [key, value] of params) {
    if (key === 'attr') expressions.push(value);
    else if (key.startsWith('attr.'))
      expressions.push(/^(>=|<=|>|<|=)/.test(value) ? `${key.slice(5)}${value}` : `${key.slice(5)}=${value}`);
  }
  return expressions;
}

/** The query with its search attributes replaced by `expressions`, one `attr` each. */
function withAttributes(search: string, expressions: string[]): string {
  const params = new URLSearchParams(search);
  for (const key of [...params.keys()]) if (key === 'attr' || key.startsWith('attr.')) params.delete(key);
  for (const expression of expressions) params.append('attr', expression);
  return params.toString();
}

/** The filter fields, as the API (and the store) name them, with their labels and input kinds. */
const FIELDS = [
  { name: 'workflow', label: 'Workflow', type: 'text' },
  { name: 'version', label: 'Version', type: 'number' },
  { name: 'runIdPrefix', label: 'Run id starts with', type: 'text' },
  { name: 'idempotencyKeyPrefix', label: 'Idempotency key starts with', type: 'text' },
  { name: 'worker', label: 'Held by worker', type: 'text' },
  { name: 'createdAfter', label: 'Created from', type: 'datetime-local' },
  { name: 'createdBefore', label: 'Created before', type: 'datetime-local' },
  { name: 'updatedAfter', label: 'Updated from', type: 'datetime-local' },
  { name: 'updatedBefore', label: 'Updated before', type: 'datetime-local' },
] as const;

const PAGE_SIZE = 50;

/** A datetime-local input's value (the browser's local time) as ms since epoch, for the URL. */
function toMs(local: string): string {
  const ms = new Date(local).getTime();
  return Number.isFinite(ms) ? String(ms) : local;
}

/** A URL's ms as the browser's local time, for a datetime-local input. */
function toLocalInput(ms: string | null): string {
  if (!ms || !/^\d+$/.test(ms)) return ms ?? '';
  const d = new Date(Number(ms));
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function withParam(search: string, changes: Record<string, string | undefined>): string {
  const params = new URLSearchParams(search);
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined || value === '') params.delete(key);
    else params.set(key, value);
  }
  const text = params.toString();
  return text === '' ? '/' : `/?${text}`;
}

export function RunsPage(props: { search: string }) {
  const params = new URLSearchParams(props.search);
  // The cursors of the pages before this one, so "Previous" goes back without refetching history.
  const [trail, setTrail] = useState<string[]>([]);
  const query = new URLSearchParams(params);
  query.set('limit', String(PAGE_SIZE));
  const page = usePolling(`runs?${query.toString()}`, () =>
    get<RunPage & { runs: ListedRunView[] }>(`/api/runs?${query.toString()}`),
  );
  const attributes = attributeExpressions(params);
  // The counts follow every filter but status (they are by status) and the page's own settings.
  const countsParams = new URLSearchParams(props.search);
  for (const key of ['status', 'cursor', 'limit', 'order', 'cols']) countsParams.delete(key);
  const countsQuery = countsParams.toString();
  const counts = usePolling(`counts?${countsQuery}`, () =>
    get<FilteredCounts>(`/api/run-counts${countsQuery === '' ? '' : `?${countsQuery}`}`),
  );
  const columns = columnsOf(params);
  const now = Date.now();
  const session = usePolling<SessionInfo>('session', getSession, 60_000);
  const statuses = (params.get('status') ?? '').split(',').filter((s) => s !== '');

  const setFilter = (changes: Record<string, string | undefined>, expressions: string[]): void => {
    setTrail([]);
    const search = withAttributes(props.search, expressions);
    navigate(withParam(search, { ...changes, cursor: undefined }), true);
  };

  return (
    <main aria-labelledby="runs-title">
      <h1 id="runs-title">Runs</h1>
      <section aria-label="Counts by status" class="counts">
        {counts.data !== undefined && (
          <span class="count" data-testid="counts-scope">
            {counts.data.scope === 'all'
              ? 'all runs:'
              : counts.data.scope === 'attribute'
                ? 'runs with '
                : counts.data.capped === true
                  ? 'the first runs these filters match:'
                  : 'runs these filters match:'}
            {counts.data.scope === 'attribute' && (
              <>
                <code>{counts.data.attribute}</code>:
              </>
            )}
          </span>
        )}
        {counts.data &&
          RUN_STATUSES.map((status) => (
            <span key={status} class={`count status-${status}`}>
              {status} <strong>{counts.data!.byStatus[status] ?? 0}</strong>
            </span>
          ))}
        {counts.data && (
          <span class="count">
            total <strong>{counts.data.total}</strong>
          </span>
        )}
      </section>
      <form
        class="filters"
        aria-label="Filters"
        onSubmit={(e) => {
          e.preventDefault();
          const data = new FormData(e.currentTarget);
          const changes: Record<string, string | undefined> = {};
          for (const field of FIELDS) {
            const value = String(data.get(field.name) ?? '').trim();
            changes[field.name] = field.type === 'datetime-local' && value !== '' ? toMs(value) : value;
          }
          changes['status'] = RUN_STATUSES.filter((s) => data.get(`status-${s}`) === 'on').join(',');
          changes['order'] = data.get('order') === 'oldest' ? 'oldest' : undefined;
          changes['cols'] = String(data.get('cols') ?? '')
            .split(',')
            .map((c) => c.trim())
            .filter((c) => c !== '')
            .join(',');
          const expressions = String(data.get('attr') ?? '')
            .split(/\s+/)
            .filter((e) => e !== '');
          setFilter(changes, expressions);
        }}
      >
        <fieldset>
          <legend>Status</legend>
          {RUN_STATUSES.map((status) => (
            <label key={status} class="check">
              <input type="checkbox" name={`status-${status}`} defaultChecked={statuses.includes(status)} />
              {status}
            </label>
          ))}
        </fieldset>
        {FIELDS.map((field) => (
          <label key={field.name}>
            {field.label}
            <input
              name={field.name}
              type={field.type as 'text'}
              defaultValue={
                field.type === 'datetime-local'
                  ? toLocalInput(params.get(field.name))
                  : (params.get(field.name) ?? '')
              }
              min={field.type === 'number' ? 1 : undefined}
            />
          </label>
        ))}
        <label>
          Search attributes
          <input
            name="attr"
            type="text"
            placeholder="customerId=42 total>=100"
            defaultValue={attributes.join(' ')}
            title="name=value (a keyword), name:number=42, name:boolean=true, name:time=ISO, or name>=10 (also >, <=, <); separated by spaces"
          />
        </label>
        <label>
          Attribute columns
          <input
            name="cols"
            type="text"
            placeholder="customerId, tier"
            defaultValue={columns.join(', ')}
            title="search attributes to show as columns, separated by commas"
          />
        </label>
        <label>
          Order
          <select name="order" defaultValue={params.get('order') ?? 'newest'}>
            <option value="newest">newest first</option>
            <option value="oldest">oldest first</option>
          </select>
        </label>
        <div class="button-row">
          <button type="submit" class="primary">
            Apply filters
          </button>
          <button
            type="button"
            onClick={() => {
              setTrail([]);
              navigate('/', true);
            }}
          >
            Clear filters
          </button>
        </div>
      </form>
      {session.data && !session.data.readOnly && (
        <BulkActions
          search={props.search}
          onDone={() => {
            page.refresh();
            counts.refresh();
          }}
        />
      )}
      {page.error && (
        <p role="alert" class="error">
          {page.error}
        </p>
      )}
      <table class="runs" aria-label="Runs">
        <thead>
          <tr>
            <th scope="col">Status</th>
            <th scope="col">Workflow</th>
            <th scope="col">Run id</th>
            <th scope="col">Started</th>
            <th scope="col">Duration</th>
            <th scope="col">Waits for / error</th>
            {columns.map((name) => (
              <th scope="col" key={`attr-${name}`}>
                {name}
              </th>
            ))}
            <th scope="col">Owner</th>
          </tr>
        </thead>
        <tbody>
          {page.data?.runs.map((run) => (
            <tr key={run.runId} data-run-id={run.runId}>
              <td>
                <span class={`badge status-${run.status}`}>{run.status}</span>
              </td>
              <td>
                {run.workflow}@{run.version}
              </td>
              <td>
                <a href={`/runs/${encodeURIComponent(run.runId)}`} onClick={onLinkClick}>
                  <code>{run.runId}</code>
                </a>
                {run.idempotencyKey !== null && (
                  <div class="muted" title="idempotency key">
                    {run.idempotencyKey}
                  </div>
                )}
              </td>
              <td>
                <Time ms={run.createdAt} now={now} />
              </td>
              <td data-testid="duration">{durationOf(run, now)}</td>
              <td data-testid="detail" class={run.status === 'failed' ? 'error-text' : undefined}>
                {detailOf(run, now)}
              </td>
              {columns.map((name) => (
                <td key={`attr-${name}`}>{attributeText(run.attributes?.[name])}</td>
              ))}
              <td>{run.owner ? `${run.owner} (epoch ${run.epoch})` : '-'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {page.data && page.data.runs.length === 0 && <p>No run matches these filters.</p>}
      <nav aria-label="Pages" class="button-row">
        <button
          type="button"
          disabled={trail.length === 0}
          onClick={() => {
            const previous = trail.slice(0, -1);
            setTrail(previous);
            navigate(withParam(props.search, { cursor: previous[previous.length - 1] }), true);
          }}
        >
          Previous page
        </button>
        <button
          type="button"
          disabled={page.data?.cursor === undefined}
          onClick={() => {
            const cursor = page.data?.cursor;
            if (cursor === undefined) return;
            setTrail([...trail, cursor]);
            navigate(withParam(props.search, { cursor }), true);
          }}
        >
          Next page
        </button>
      </nav>
    </main>
  );
}
