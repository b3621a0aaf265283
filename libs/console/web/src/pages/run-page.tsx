/**
 * The run page: the run's status, lease (owner, epoch, state), input and result; the actions it
 * accepts; its streams followed live (run-streams.tsx); its queries (run-queries.tsx), its updates
 * and pending durable promises (run-interactions.tsx); its step timeline as a chart
 * (timeline-chart.tsx) and as a table with each step's result, error and idempotency key. Polls, so
 * a run under way moves on screen.
 */
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { get, getSession, runPath, type SessionInfo } from '../api.js';
import { RunActions, type ForkChoice } from '../components/run-actions.js';
import { RunPromises, RunUpdates } from '../components/run-interactions.js';
import { RunQueries } from '../components/run-queries.js';
import { RunStreams } from '../components/run-streams.js';
import { durationText, jsonText, timeText, usePolling } from '../hooks.js';
import { onLinkClick } from '../router.js';
import type { RunDescription, TimelineAnswer, TimelineItem } from '../types.js';
import { EventList } from '../components/event-list.js';
import { laneLabel, TimelineChart, workerLanes } from './timeline-chart.js';
import { Time } from '../components/time.js';

function itemText(item: TimelineItem): string {
  switch (item.kind) {
    case 'activity':
      return `activity ${item.name}`;
    case 'signal':
      return `signal '${item.name}' ${item.outcome}`;
    case 'timer':
      return `timer ${item.outcome}`;
    case 'update':
      return `update '${item.name}' ${item.outcome}`;
    case 'promise':
      return `promise ${item.tokenHint} ${item.outcome}`;
    case 'attributes':
      return `attributes set: ${Object.keys(item.attributes).join(', ')}`;
    case 'checkpoint':
      return `checkpoint ${item.seq} (${item.status})`;
    case 'lease':
      return item.reason === 'takeover'
        ? `failover: epoch ${item.epoch} to ${item.workerId ?? '?'}`
        : `lease epoch ${item.epoch} (${item.reason})`;
    case 'end':
      return `run ${item.outcome}`;
    case 'fenced-write':
      return `fenced write ${item.entryType}`;
  }
}

function forkChoices(answer: TimelineAnswer | undefined): ForkChoice[] {
  if (answer === undefined || 'protected' in answer) return [];
  const fromCheckpoints = answer.checkpoints.map((c) => ({
    label: `checkpoint ${c.seq} (epoch ${c.epoch}, journal position ${c.journalPosition})`,
    point: { fromCheckpoint: c.seq },
  }));
  // Any journaled item is a point to fork from: the history up to and including its position.
  const seen = new Set<number>();
  const fromSteps = answer.timeline.items
    .filter((i) => i.kind !== 'checkpoint' && !seen.has(i.position) && seen.add(i.position))
    .map((i) => ({
      label: `journal position ${i.position} (${'seq' in i ? `#${i.seq} ` : ''}${itemText(i)})`,
      point: { fromJournalPosition: i.position },
    }));
  return [...fromCheckpoints, ...fromSteps];
}

export function RunPage(props: { runId: string }) {
  const { runId } = props;
  const run = usePolling(`run:${runId}`, () => get<RunDescription>(runPath(runId)));
  const timeline = usePolling(`timeline:${runId}`, () => get<TimelineAnswer>(runPath(runId, '/timeline')));
  const session = usePolling<SessionInfo>('session', getSession, 60_000);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const r = run.data;
  // The first render of the timeline is marked for the render benchmark (src/bench/): it measures
  // from the timeline's response to this mark, once the DOM holds every bar.
  const marked = useRef(false);
  useLayoutEffect(() => {
    if (timeline.data === undefined || marked.current) return;
    marked.current = true;
    performance.mark('baton:timeline-rendered');
  }, [timeline.data]);

  return (
    <main aria-labelledby="run-title">
      <h1 id="run-title">
        Run <code>{runId}</code>
      </h1>
      <p role="status" class="notice">
        {notice ?? ''}
      </p>
      {run.error && (
        <p role="alert" class="error">
          {run.error}
        </p>
      )}
      {r && (
        <dl class="facts">
          <dt>Status</dt>
          <dd>
            <span class={`badge status-${r.status}`} data-testid="run-status">
              {r.status}
            </span>
            {r.lease?.cancelRequested && r.status !== 'cancelled' ? ' (cancel requested)' : ''}
            {r.lease?.pauseRequested ? ' (pause requested)' : ''}
          </dd>
          <dt>Workflow</dt>
          <dd>
            {r.workflow}@{r.version}
          </dd>
          <dt>Lease</dt>
          <dd>
            {r.lease
              ? `${r.lease.state}, epoch ${r.lease.epoch}, owner ${r.lease.owner ?? 'none'}`
              : 'no lease yet'}
          </dd>
          <dt>Idempotency key</dt>
          <dd>{r.idempotencyKey ?? '-'}</dd>
          <dt>Created</dt>
          <dd>
            <Time ms={r.createdAt} />
          </dd>
          <dt>Updated</dt>
          <dd>
            <Time ms={r.updatedAt} />
          </dd>
          <dt>Claims</dt>
          <dd>{r.attempts}</dd>
          {r.attributes && Object.keys(r.attributes).length > 0 && (
            <>
              <dt>Search attributes</dt>
              <dd>
                <ul class="attributes" aria-label="Search attributes">
                  {Object.entries(r.attributes).map(([name, attribute]) => (
                    <li key={name}>
                      <code>{name}</code> ={' '}
                      {attribute.type === 'time' ? timeText(attribute.value) : String(attribute.value)}{' '}
                      <span class="muted">({attribute.type})</span>
                    </li>
                  ))}
                </ul>
              </dd>
            </>
          )}
          {r.forkedFrom && (
            <>
              <dt>Forked from</dt>
              <dd>
                <a href={`/runs/${encodeURIComponent(r.forkedFrom.runId)}`} onClick={onLinkClick}>
                  {r.forkedFrom.runId}
                </a>
              </dd>
            </>
          )}
          <dt>Input</dt>
          <dd>
            <pre>{jsonText(r.input)}</pre>
          </dd>
          {r.status === 'completed' && (
            <>
              <dt>Result</dt>
              <dd>
                <pre>{jsonText(r.result)}</pre>
              </dd>
            </>
          )}
          {r.error && (
            <>
              <dt>{r.status === 'cancelled' ? 'Reason' : 'Error'}</dt>
              <dd>
                <pre>{`${r.error.name}: ${r.error.message}`}</pre>
              </dd>
            </>
          )}
        </dl>
      )}
      {r && session.data && !session.data.readOnly && (
        <RunActions
          runId={runId}
          status={r.status}
          forkChoices={forkChoices(timeline.data)}
          onDone={(message) => {
            setNotice(message);
            run.refresh();
            timeline.refresh();
          }}
        />
      )}
      {r && <RunStreams runId={runId} finished={['completed', 'failed', 'cancelled'].includes(r.status)} />}
      {r && <RunQueries runId={runId} />}
      {r && (
        <RunUpdates
          items={timeline.data && 'timeline' in timeline.data ? timeline.data.timeline.items : undefined}
        />
      )}
      {r && session.data && (
        <RunPromises
          runId={runId}
          finished={['completed', 'failed', 'cancelled'].includes(r.status)}
          readOnly={session.data.readOnly}
        />
      )}
      <section aria-labelledby="timeline-title">
        <h2 id="timeline-title">Step timeline</h2>
        {timeline.error && (
          <p role="alert" class="error">
            {timeline.error}
          </p>
        )}
        {timeline.data && 'protected' in timeline.data && (
          <p class="protected">
            Protected: this console has no key to read the run's journal ({timeline.data.protected})
          </p>
        )}
        {timeline.data && 'timeline' in timeline.data && <HistoryFlag size={timeline.data.historySize} />}
        {timeline.data && 'timeline' in timeline.data && <TimelineView answer={timeline.data} />}
      </section>
    </main>
  );
}

/** The last column of an update, a promise or an attribute change; `-` for the rest. */
/** A run whose history nears or passed the soft limit: continue as new (docs/continue-as-new.md). */
function HistoryFlag(props: { size: Extract<TimelineAnswer, { timeline: unknown }>['historySize'] }) {
  const { size } = props;
  if (size === undefined || size.percent < 80) return null;
  return (
    <p role="status" class="warning" data-testid="history-flag">
      History at {size.percent}% of the soft limit ({size.entries} entries, {size.bytes} bytes; limit{' '}
      {size.softEntries} entries or {size.softBytes} bytes): continue as new (ctx.continueAsNew, when
      ctx.historyInfo().suggested)
    </p>
  );
}

function InteractionDetail(props: { item: TimelineItem }) {
  const { item } = props;
  switch (item.kind) {
    case 'update':
      return (
        <>
          id <code>{item.updateId}</code>, args <code>{item.args ?? '-'}</code>
          {item.result !== undefined && (
            <>
              , result <code>{item.result}</code>
            </>
          )}
        </>
      );
    case 'promise':
      return (
        <>
          {item.timeoutAt ? `deadline ${timeText(item.timeoutAt)}` : 'no deadline'}
          {item.value !== undefined && (
            <>
              , value <code>{item.value}</code>
            </>
          )}
        </>
      );
    case 'attributes':
      return (
        <>
          {Object.entries(item.attributes)
            .map(
              ([name, a]) =>
                `${name} = ${a === null ? '(removed)' : a.type === 'time' ? timeText(a.value) : String(a.value)}`,
            )
            .join(', ')}
        </>
      );
    default:
      return <>-</>;
  }
}

function TimelineView(props: { answer: Extract<TimelineAnswer, { timeline: unknown }> }) {
  const { timeline, outcomes } = props.answer;
  // Compact (the default): the event list in words. Full: every journal item with its position.
  const [view, setView] = useState<'compact' | 'full'>('compact');
  const workers = workerLanes(timeline.epochs);
  return (
    <>
      <p data-testid="timeline-summary">
        {workers.length} worker(s):{' '}
        {workers.map((w) => `${w.key} (epoch ${w.epochs.join(', ')})`).join('; ') || 'none yet'}.{' '}
        {timeline.failovers} failover(s).
      </p>
      <TimelineChart timeline={timeline} now={Date.now()} />
      <ul class="legend" aria-label="Legend">
        <li class="outcome-completed">completed</li>
        <li class="outcome-failed">failed</li>
        <li class="outcome-in-flight">in flight</li>
        <li class="lease-takeover">failover</li>
        <li class="lease-first">lease change</li>
        <li class="checkpoint">checkpoint</li>
        <li class="update">update</li>
        <li class="promise">durable promise</li>
      </ul>
      <div class="button-row" role="group" aria-label="History view">
        <button type="button" aria-pressed={view === 'compact'} onClick={() => setView('compact')}>
          Compact
        </button>
        <button type="button" aria-pressed={view === 'full'} onClick={() => setView('full')}>
          Full history
        </button>
      </div>
      {view === 'compact' && <EventList items={timeline.items} outcomes={outcomes} />}
      {view === 'full' && (
        <table aria-label="Steps" class="steps">
          <thead>
            <tr>
              <th scope="col">Position</th>
              <th scope="col">Step</th>
              <th scope="col">Outcome</th>
              <th scope="col">Attempts</th>
              <th scope="col">Epoch · worker</th>
              <th scope="col">Started</th>
              <th scope="col">Duration</th>
              <th scope="col">Idempotency key</th>
              <th scope="col">Result or error</th>
            </tr>
          </thead>
          <tbody>
            {timeline.items.map((item) => {
              const a = item.kind === 'activity' ? item : undefined;
              const outcome = a ? outcomes[a.seq] : undefined;
              return (
                <tr
                  key={`${item.kind}-${item.position}-${'seq' in item ? item.seq : ''}`}
                  data-kind={item.kind}
                >
                  <td>{item.position}</td>
                  <td>
                    {'seq' in item && item.kind !== 'checkpoint' ? `#${item.seq} ` : ''}
                    {itemText(item)}
                  </td>
                  <td>{'outcome' in item ? item.outcome : item.kind === 'lease' ? item.reason : '-'}</td>
                  <td>{a?.attempts ?? '-'}</td>
                  <td>{item.kind === 'checkpoint' ? `epoch ${item.epoch}` : laneLabel(item)}</td>
                  <td>
                    <Time ms={a ? a.startedAt : item.at} />
                  </td>
                  <td>{a?.durationMs !== undefined ? durationText(a.durationMs) : '-'}</td>
                  <td>{a ? <code>{a.idempotencyKey}</code> : '-'}</td>
                  <td>
                    {a?.error ? (
                      <span class="error">{`${a.error.name}: ${a.error.message}`}</span>
                    ) : outcome && 'result' in outcome ? (
                      <code>{JSON.stringify(outcome.result)}</code>
                    ) : (item.kind === 'end' || item.kind === 'update' || item.kind === 'promise') &&
                      item.error ? (
                      <span class="error">{`${item.error.name}: ${item.error.message}`}</span>
                    ) : (
                      <InteractionDetail item={item} />
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <p class="hint">
        A step's input is not journaled (its result is): replay gives each step the same input from the
        workflow's code.
      </p>
    </>
  );
}
