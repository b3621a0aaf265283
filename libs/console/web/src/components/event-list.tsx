/**
 * A run's compact event list, beside its timeline (as Temporal's "compact" view is beside its
 * "full" one): one line per thing that happened, its time from the run's first event, what it
 * was in words, and where it matters which worker. No journal positions, checkpoints or fenced
 * writes: those are in the full history (the steps table). A child's start and end link to the
 * child run.
 */
import { durationText } from '../hooks.js';
import { onLinkClick } from '../router.js';
import type { StepOutcome, TimelineItem } from '../types.js';

/** The activity name a child's start is journaled under, and its end's signal name (core's). */
const CHILD_PREFIX = 'baton.child:';

function ChildLink(props: { runId: string }) {
  return (
    <a href={`/runs/${encodeURIComponent(props.runId)}`} onClick={onLinkClick}>
      <code>{props.runId}</code>
    </a>
  );
}

/** An event's words (and links). */
function EventText(props: { item: TimelineItem; outcome: StepOutcome | undefined }) {
  const { item } = props;
  switch (item.kind) {
    case 'activity': {
      const child = props.outcome?.result as { runId?: unknown; workflow?: unknown } | undefined;
      if (item.name.startsWith(CHILD_PREFIX) && typeof child?.runId === 'string')
        return (
          <>
            started child {String(child.workflow ?? '')} <ChildLink runId={child.runId} />
          </>
        );
      return (
        <>
          <strong>{item.name}</strong> {item.outcome}
          {item.durationMs !== undefined && ` in ${durationText(item.durationMs)}`}
          {item.attempts !== undefined && item.attempts > 1 && ` after ${item.attempts} attempts`}
          {item.error !== undefined && (
            <span class="error">{` (${item.error.name}: ${item.error.message})`}</span>
          )}
        </>
      );
    }
    case 'signal':
      if (item.name.startsWith(CHILD_PREFIX))
        return (
          <>
            {item.outcome === 'waiting' ? 'waits for child ' : 'child ended: '}
            <ChildLink runId={item.name.slice(CHILD_PREFIX.length)} />
          </>
        );
      return (
        <>
          {item.outcome === 'waiting' ? 'waits for signal ' : `signal `}
          <strong>{item.name}</strong>
          {item.outcome === 'received' ? ' received' : item.outcome === 'timed-out' ? ' timed out' : ''}
          {item.endedAt !== undefined &&
            item.outcome === 'received' &&
            ` after ${durationText(item.endedAt - item.at)}`}
        </>
      );
    case 'timer':
      return (
        <>
          sleep {durationText(item.wakeAt - item.at)}
          {item.outcome === 'fired' ? '' : ' (pending)'}
        </>
      );
    case 'update':
      return (
        <>
          update <strong>{item.name}</strong> {item.outcome}
        </>
      );
    case 'promise':
      return (
        <>
          durable promise #{item.seq} {item.outcome}
        </>
      );
    case 'attributes':
      return <>attributes set: {Object.keys(item.attributes).join(', ')}</>;
    case 'lease':
      return (
        <>
          {item.reason === 'first'
            ? 'started on '
            : item.reason === 'after-wait'
              ? 'resumed on '
              : item.reason === 'after-retry'
                ? 'retried on '
                : 'failover: taken over by '}
          <strong>{item.workerId ?? 'a worker the journal does not name'}</strong>
          {item.reason === 'takeover' && item.previous?.workerId ? ` from ${item.previous.workerId}` : ''}
          {` (epoch ${item.epoch})`}
        </>
      );
    case 'end':
      return (
        <>
          run <strong>{item.outcome}</strong>
          {item.error !== undefined && (
            <span class="error">{`: ${item.error.name}: ${item.error.message}`}</span>
          )}
        </>
      );
    default:
      return null;
  }
}

export function EventList(props: { items: readonly TimelineItem[]; outcomes: Record<number, StepOutcome> }) {
  const shown = props.items.filter((item) => item.kind !== 'checkpoint' && item.kind !== 'fenced-write');
  const start = Math.min(...shown.map((item) => item.at));
  return (
    <ol class="events" aria-label="Events">
      {shown.map((item) => (
        <li
          key={`${item.kind}-${item.position}-${'seq' in item ? item.seq : ''}-${'epoch' in item ? item.epoch : ''}`}
          data-kind={item.kind}
          class={item.kind === 'lease' ? `lease-${item.reason}` : undefined}
        >
          <span class="offset">+{durationText(item.at - start)}</span>{' '}
          <EventText item={item} outcome={'seq' in item ? props.outcomes[item.seq] : undefined} />
        </li>
      ))}
    </ol>
  );
}
