/**
 * A run's step timeline drawn as SVG: one lane per worker that ran part of the run (its epochs as
 * marks on the lane, a failover as a red line from the lane it left to the lane that took over),
 * one bar per activity on a shared time axis, coloured by outcome, labelled with its step and its
 * duration when there is room; marks for signals, timers, updates, durable promises, attribute
 * changes and checkpoints. Every mark has a <title>, so a pointer or a screen reader names it.
 * An epoch whose worker the journal does not name (a run journaled before first owners named
 * themselves, docs/console.md) has a lane of its own.
 */
import { durationText } from '../hooks.js';
import type { ActivityItem, Owner, RunTimeline, TimelineItem } from '../types.js';

const LANE_HEIGHT = 34;
const LABEL_WIDTH = 230;
const CHART_WIDTH = 760;
const AXIS_HEIGHT = 26;

/** An epoch and its worker, as the steps table's column says it. */
export function laneLabel(owner: Owner): string {
  return `epoch ${owner.epoch} · ${owner.workerId ?? 'worker not journaled'}`;
}

/** The lane an epoch is drawn in: its worker's, or its own when the journal names none. */
function laneKey(owner: Owner): string {
  return owner.workerId ?? `epoch ${owner.epoch} (worker not journaled)`;
}

/** The workers' lanes in the order they first ran the run, each with its epochs. */
export function workerLanes(epochs: readonly Owner[]): { key: string; epochs: number[] }[] {
  const lanes = new Map<string, number[]>();
  for (const owner of epochs) {
    const key = laneKey(owner);
    lanes.set(key, [...(lanes.get(key) ?? []), owner.epoch]);
  }
  return [...lanes].map(([key, list]) => ({ key, epochs: list }));
}

function ownerOf(item: TimelineItem): Owner | undefined {
  if (item.kind === 'checkpoint') return { epoch: item.epoch, workerId: null };
  if (item.kind === 'lease') return { epoch: item.epoch, workerId: item.workerId };
  return { epoch: item.epoch, workerId: item.workerId };
}

function span(item: TimelineItem, now: number): [number, number] {
  switch (item.kind) {
    case 'activity':
      return [item.startedAt, item.endedAt ?? now];
    case 'signal':
      return [item.at, item.endedAt ?? now];
    case 'timer':
      return [item.at, item.firedAt ?? item.wakeAt];
    case 'update':
    case 'promise':
      return [item.at, item.endedAt ?? now];
    default:
      return [item.at, item.at];
  }
}

export function TimelineChart(props: { timeline: RunTimeline; now: number }) {
  const { timeline, now } = props;
  const epochs = timeline.epochs.length > 0 ? timeline.epochs : [{ epoch: 0, workerId: null }];
  const lanes = workerLanes(epochs);
  const laneIndex = new Map(lanes.map((lane, i) => [lane.key, i]));
  // A checkpoint names its epoch only: it is drawn in the lane of the worker that held that epoch.
  const laneOf = new Map(epochs.map((owner) => [owner.epoch, laneIndex.get(laneKey(owner)) ?? 0]));
  const times = timeline.items.flatMap((item) => span(item, now));
  const start = Math.min(...times, now);
  const end = Math.max(...times, start + 1);
  const x = (t: number): number => LABEL_WIDTH + ((t - start) / (end - start)) * (CHART_WIDTH - 50);
  const y = (item: TimelineItem): number =>
    AXIS_HEIGHT + (laneOf.get(ownerOf(item)?.epoch ?? 0) ?? 0) * LANE_HEIGHT;
  const height = AXIS_HEIGHT + lanes.length * LANE_HEIGHT + 8;
  const laneTop = (epoch: number): number => AXIS_HEIGHT + (laneOf.get(epoch) ?? 0) * LANE_HEIGHT;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => start + f * (end - start));

  const activity = (item: ActivityItem) => {
    const [from, to] = span(item, now);
    const left = x(from);
    const width = Math.max(3, x(to) - left);
    return (
      <g key={`a${item.position}-${item.seq}`} class={`bar outcome-${item.outcome}`} data-kind="activity">
        <title>
          {`#${item.seq} ${item.name}: ${item.outcome}` +
            (item.attempts !== undefined ? `, ${item.attempts} attempt(s)` : '') +
            (item.durationMs !== undefined ? `, ${durationText(item.durationMs)}` : '') +
            `, key ${item.idempotencyKey}, ${laneLabel(item)}`}
        </title>
        <rect x={left} y={y(item) + 6} width={width} height={LANE_HEIGHT - 12} rx={3} />
        {width > 40 && (
          <text x={left + 4} y={y(item) + LANE_HEIGHT / 2 + 4} class="bar-label">
            {`#${item.seq}${item.attempts && item.attempts > 1 ? ` ×${item.attempts}` : ''}` +
              (width > 110 && item.durationMs !== undefined ? ` ${durationText(item.durationMs)}` : '')}
          </text>
        )}
      </g>
    );
  };

  return (
    <svg
      class="timeline-chart"
      role="img"
      aria-label={`Step timeline: ${lanes.length} worker(s), ${epochs.length} epoch(s), ${timeline.failovers} failover(s)`}
      viewBox={`0 0 ${LABEL_WIDTH + CHART_WIDTH} ${height}`}
      width="100%"
    >
      {ticks.map((t) => (
        <g key={`t${t}`} class="axis">
          <line x1={x(t)} x2={x(t)} y1={AXIS_HEIGHT - 6} y2={height} />
          <text x={x(t)} y={14} text-anchor="middle">{`+${durationText(t - start)}`}</text>
        </g>
      ))}
      {lanes.map((lane, i) => (
        <g key={`l${lane.key}`} class="lane" data-lane={lane.key}>
          <rect
            x={0}
            y={AXIS_HEIGHT + i * LANE_HEIGHT}
            width={LABEL_WIDTH + CHART_WIDTH}
            height={LANE_HEIGHT}
          />
          <text x={6} y={AXIS_HEIGHT + i * LANE_HEIGHT + LANE_HEIGHT / 2 + 4}>
            <title>{`${lane.key}: epoch(s) ${lane.epochs.join(', ')}`}</title>
            {lane.key.length > 30 ? `${lane.key.slice(0, 29)}…` : lane.key}
          </text>
        </g>
      ))}
      {timeline.items.map((item) => {
        switch (item.kind) {
          case 'activity':
            return activity(item);
          case 'lease': {
            // The epoch's mark on its worker's lane; a failover also joins the lane it left.
            const top = laneTop(item.epoch);
            const from = item.previous !== undefined ? laneTop(item.previous.epoch) : top;
            const [y1, y2] = from <= top ? [from, top + LANE_HEIGHT] : [top, from + LANE_HEIGHT];
            return (
              <g
                key={`l${item.position}-${item.epoch}`}
                class={`lease lease-${item.reason}`}
                data-kind="lease"
              >
                <title>
                  {item.reason === 'takeover'
                    ? `failover: epoch ${item.epoch} taken by ${item.workerId ?? '?'} after ${item.previous ? laneLabel(item.previous) : 'an earlier owner'} stopped mid-run`
                    : `lease: epoch ${item.epoch} taken by ${item.workerId ?? '?'} (${item.reason})`}
                </title>
                <line
                  x1={x(item.at)}
                  x2={x(item.at)}
                  y1={item.reason === 'takeover' ? y1 : top}
                  y2={item.reason === 'takeover' ? y2 : top + LANE_HEIGHT}
                />
                <text x={x(item.at) + 3} y={top + 10} class="epoch-mark">{`e${item.epoch}`}</text>
              </g>
            );
          }
          case 'checkpoint':
            return (
              <g key={`c${item.position}-${item.seq}`} class="checkpoint" data-kind="checkpoint">
                <title>{`checkpoint ${item.seq} (epoch ${item.epoch}, ${item.status}, ${item.sizeBytes} bytes)`}</title>
                <path d={`M ${x(item.at)} ${AXIS_HEIGHT - 8} l -4 -6 h 8 z`} />
              </g>
            );
          case 'signal': {
            const [from, to] = span(item, now);
            return (
              <g key={`s${item.position}`} class={`signal signal-${item.outcome}`} data-kind="signal">
                <title>{`signal '${item.name}': ${item.outcome}`}</title>
                <line x1={x(from)} x2={x(to)} y1={y(item) + LANE_HEIGHT / 2} y2={y(item) + LANE_HEIGHT / 2} />
                <path d={`M ${x(to)} ${y(item) + LANE_HEIGHT / 2 - 6} l 6 6 l -6 6 l -6 -6 z`} />
              </g>
            );
          }
          case 'timer': {
            const [from, to] = span(item, now);
            return (
              <g key={`m${item.position}`} class={`timer timer-${item.outcome}`} data-kind="timer">
                <title>{`timer: ${item.outcome}, ${Math.round(item.wakeAt - item.at)} ms`}</title>
                <line x1={x(from)} x2={x(to)} y1={y(item) + LANE_HEIGHT / 2} y2={y(item) + LANE_HEIGHT / 2} />
                <circle cx={x(to)} cy={y(item) + LANE_HEIGHT / 2} r={5} />
              </g>
            );
          }
          case 'update':
          case 'promise': {
            const [from, to] = span(item, now);
            const label =
              item.kind === 'update'
                ? `update '${item.name}' (id ${item.updateId}): ${item.outcome}`
                : `durable promise #${item.seq} (${item.tokenHint}): ${item.outcome}`;
            const mid = y(item) + LANE_HEIGHT / 2;
            return (
              <g
                key={`${item.kind}${item.position}`}
                class={`${item.kind} ${item.kind}-${item.outcome}`}
                data-kind={item.kind}
              >
                <title>{label}</title>
                <line x1={x(from)} x2={x(to)} y1={mid + 4} y2={mid + 4} />
                <path d={`M ${x(from)} ${mid - 2} l 5 6 l -5 6 l -5 -6 z`} />
              </g>
            );
          }
          case 'attributes':
            return (
              <g key={`at${item.position}`} class="attributes" data-kind="attributes">
                <title>{`attributes set: ${Object.keys(item.attributes).join(', ')}`}</title>
                <circle cx={x(item.at)} cy={y(item) + 8} r={3} />
              </g>
            );
          case 'end':
            return (
              <g key="end" class={`end end-${item.outcome}`} data-kind="end">
                <title>{`run ${item.outcome}${item.error ? `: ${item.error.message}` : ''}`}</title>
                <rect x={x(item.at) - 5} y={y(item) + LANE_HEIGHT / 2 - 5} width={10} height={10} />
              </g>
            );
          case 'fenced-write':
            return (
              <g key={`f${item.position}`} class="fenced" data-kind="fenced-write">
                <title>{`fenced write (${item.entryType}) by ${laneLabel(item)}: ignored on replay`}</title>
                <path
                  d={`M ${x(item.at) - 5} ${y(item) + 8} l 10 ${LANE_HEIGHT - 16} M ${x(item.at) + 5} ${y(item) + 8} l -10 ${LANE_HEIGHT - 16}`}
                />
              </g>
            );
        }
      })}
    </svg>
  );
}
