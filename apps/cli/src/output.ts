/**
 * What the CLI prints: human tables by default (table.ts: 120 columns wide, every column with
 * `wide`), JSON with `--json`. Every printer takes the records and returns text, so the unit specs
 * check the text and the commands only write it.
 */
import type {
  BulkSummary,
  ListedRun,
  RunAttribute,
  RunTimeline,
  StoredDeadLetter,
  TimelineItem,
} from '@baton/client';
import { isSealedValue, protectedLabel } from '@baton/client';
import { listTable, shortened, TABLE_WIDTH, wrapped, type Column } from './table.js';

/** Where a command writes: stdout for results, stderr for progress and errors. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

/** `2026-11-25T10:00:00.000Z`, or `-` for none. */
export function time(ms: number | null | undefined): string {
  return ms === undefined || ms === null ? '-' : new Date(ms).toISOString();
}

/** A search attribute's value as text: a time as ISO 8601, anything else as it is. */
export function attributeText(attribute: RunAttribute): string {
  return attribute.type === 'time' ? time(attribute.value) : String(attribute.value);
}

/** `850 ms`, `12.4 s`, `3.0 min`, or `-`. */
export function duration(ms: number | undefined): string {
  if (ms === undefined) return '-';
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

const SPAN_UNITS = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
] as const;

/**
 * A time span as the duration flags take it (`2m`, `90s`, `1500ms`, `0`): the largest unit that
 * divides it exactly, so what is shown can be given back as it is.
 */
export function spanText(ms: number): string {
  if (ms === 0) return '0';
  for (const [unit, size] of SPAN_UNITS) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** A run id: shortened in its middle, as far as the ids shown stay distinct (table.ts). */
export const RUN_ID: Column = { head: 'run id', shorten: 'middle', min: 36 };

/** Pretty JSON with a final newline. */
export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** A page of runs: a table and, when there is more, the cursor to pass for the next page. */
export function runsTable(runs: readonly ListedRun[], cursor: string | undefined, wide = false): string {
  const rows = runs.map((r) => [
    r.runId,
    `${r.workflow}@${r.version}`,
    r.status,
    time(r.createdAt),
    time(r.updatedAt),
    r.attempts,
    // Narrow, the worker alone: shortened in its middle, its host and its random end stay.
    r.owner === null ? '-' : wide ? `${r.owner} (epoch ${r.epoch})` : r.owner,
  ]);
  const text = listTable(
    [
      RUN_ID,
      { head: 'workflow', shorten: 'end' },
      'status',
      'created',
      { head: 'updated', wideOnly: true },
      { head: 'claims', wideOnly: true },
      { head: 'held by', shorten: 'middle' },
    ],
    rows,
    wide,
  );
  const footer =
    cursor === undefined
      ? `${runs.length} run(s); last page`
      : `${runs.length} run(s); next page: --cursor ${cursor}`;
  return `${text}\n${footer}\n`;
}

/** Dead letters, newest first, with the cursor for older ones. */
export function lettersTable(
  letters: readonly StoredDeadLetter[],
  cursor: string | undefined,
  wide = false,
): string {
  const rows = letters.map((l) => [l.id, l.code, time(l.at), l.data.byteLength, l.reason]);
  const text = listTable(
    [
      { head: 'id', shorten: 'middle' },
      { head: 'code', shorten: 'end' },
      'dead-lettered',
      'bytes',
      { head: 'reason', shorten: 'end' },
    ],
    rows,
    wide,
  );
  const footer =
    cursor === undefined
      ? `${letters.length} letter(s); last page`
      : `${letters.length} letter(s); older ones: --cursor ${cursor}`;
  return `${text}\n${footer}\n`;
}

/** A dead letter as JSON: its bytes as base64 (and the decoded message beside it, when shown). */
export function letterJson<L extends StoredDeadLetter>(letter: L): Omit<L, 'data'> & { data: string } {
  return { ...letter, data: Buffer.from(letter.data).toString('base64') };
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function ranBy(item: { epoch: number; workerId: string | null }): string {
  return `${item.workerId ?? '?'} / ${item.epoch}`;
}

/**
 * An item's row: what it is, its outcome and its detail. Narrow, an error message is cut at 60
 * characters (the table shortens the detail anyway); wide, it is whole.
 */
function describeItem(item: TimelineItem, wide: boolean): { what: string; outcome: string; detail: string } {
  const errorMax = wide ? Infinity : 60;
  switch (item.kind) {
    case 'activity':
      return {
        what: `activity ${item.seq} ${item.name}`,
        outcome:
          item.outcome + (item.reconciled ? ' (reconciled)' : '') + (item.refreshed ? ' (refreshed)' : ''),
        detail: `key ${item.idempotencyKey}${item.error ? `; ${item.error.name}: ${oneLine(item.error.message, errorMax)}` : ''}`,
      };
    case 'signal':
      return {
        what: `signal ${item.seq} '${item.name}'`,
        outcome: item.outcome,
        detail:
          (item.timeoutAt ? `deadline ${time(item.timeoutAt)}` : 'no deadline') +
          (item.signalId !== undefined ? `; signal id ${item.signalId}` : ''),
      };
    case 'timer':
      return {
        what: `timer ${item.seq}`,
        outcome: item.outcome,
        detail: `wake at ${time(item.wakeAt)}`,
      };
    case 'update':
      return {
        what: `update '${item.name}'`,
        outcome: item.outcome === 'accepted' ? 'accepted (no answer yet)' : item.outcome,
        detail:
          `id ${item.updateId}; args ${item.args ?? '-'}` +
          (item.result !== undefined ? `; result ${item.result}` : '') +
          (item.error ? `; ${item.error.name}: ${oneLine(item.error.message, errorMax)}` : ''),
      };
    case 'promise':
      return {
        what: `promise ${item.seq}`,
        outcome: item.outcome,
        detail:
          `token ${item.tokenHint}; ` +
          (item.timeoutAt
            ? `deadline ${time(item.timeoutAt)}`
            : item.timeoutAt === null
              ? 'no deadline'
              : '') +
          (item.value !== undefined ? `; value ${item.value}` : '') +
          (item.error
            ? `; ${item.error.name}${item.error.code !== undefined ? ` (${item.error.code})` : ''}: ${oneLine(item.error.message, errorMax)}`
            : ''),
      };
    case 'attributes':
      return {
        what: `attributes ${item.seq}`,
        outcome: 'set',
        detail: Object.entries(item.attributes)
          .map(
            ([name, attribute]) => `${name}=${attribute === null ? '(removed)' : attributeText(attribute)}`,
          )
          .join(', '),
      };
    case 'checkpoint':
      return {
        what: `checkpoint ${item.seq}`,
        outcome: item.status,
        detail: `${item.sizeBytes} bytes, covers journal up to ${item.position}`,
      };
    case 'lease':
      return {
        what: `lease epoch ${item.epoch}`,
        outcome: item.reason === 'takeover' ? 'takeover (failover)' : item.reason,
        detail:
          (item.previous === undefined ? 'first owner' : `previous: ${ranBy(item.previous)}`) +
          (item.unmarked === true ? ' (no lease marker: worker not journaled)' : ''),
      };
    case 'end':
      return {
        what: 'run ended',
        outcome: item.outcome,
        detail: item.error ? `${item.error.name}: ${oneLine(item.error.message, errorMax)}` : '',
      };
    case 'fenced-write':
      return {
        what: `fenced write ${item.entryType}${item.seq !== undefined ? ` ${item.seq}` : ''}`,
        outcome: 'ignored on replay',
        detail: 'written by an owner a newer epoch had fenced off',
      };
  }
}

/**
 * How long an activity took (`~`: its start is estimated), a wait lasted, an update took to answer
 * or a promise to complete; empty for the rest.
 */
function tookText(item: TimelineItem): string {
  switch (item.kind) {
    case 'activity':
      return duration(item.durationMs) + (item.startKnown === 'estimated' ? ' ~' : '');
    case 'signal':
      return duration(item.endedAt === undefined ? undefined : item.endedAt - item.at);
    case 'timer':
      return duration(item.firedAt === undefined ? undefined : item.firedAt - item.at);
    case 'update':
    case 'promise':
      return duration(item.endedAt === undefined ? undefined : item.endedAt - item.at);
    default:
      return '';
  }
}

/** The timeline as a table: position, item, worker / epoch, start, duration, attempts, outcome, detail. */
export function timelineTable(timeline: RunTimeline, wide = false): string {
  const rows = timeline.items.map((item) => {
    const { what, outcome, detail } = describeItem(item, wide);
    const owner = item.kind === 'checkpoint' ? `- / ${item.epoch}` : ranBy(item);
    const took = tookText(item);
    const attempts = item.kind === 'activity' ? String(item.attempts ?? '-') : '';
    return [item.position, what, owner, time(item.at), took, attempts, outcome, detail];
  });
  const text = listTable(
    [
      'pos',
      { head: 'item', shorten: 'end', min: 16 },
      { head: 'worker / epoch', shorten: 'middle', min: 14 },
      { head: 'at', wideOnly: true },
      'took',
      'attempts',
      { head: 'outcome', shorten: 'end' },
      { head: 'detail', shorten: 'end' },
    ],
    rows,
    wide,
  );
  const epochs = timeline.epochs.map((e) => `${e.epoch}: ${e.workerId ?? '?'}`).join(', ');
  const summary = `epochs: ${epochs || 'none'}; failovers: ${timeline.failovers}`;
  return (
    `run ${wide ? timeline.runId : shortened(timeline.runId, TABLE_WIDTH - 4, 'middle')}\n${text}\n` +
    `${wide ? summary : wrapped(summary, TABLE_WIDTH)}` +
    '\n(~: start estimated from the previous entry; activities that are not idempotent journal their start)\n'
  );
}

/** The summary of a bulk action, for people. */
export function summaryText(summary: BulkSummary): string {
  const lines = [
    `${summary.action}: ${summary.matched} matched, ${summary.succeeded.length} done, ` +
      `${summary.refused.length} refused, ${summary.failed.length} failed` +
      (summary.interrupted ? ' (interrupted: run it again to finish)' : ''),
  ];
  for (const r of summary.refused) lines.push(`  refused ${r.id}: ${r.reason}`);
  for (const f of summary.failed) lines.push(`  failed  ${f.id}: ${f.error}`);
  return `${lines.join('\n')}\n`;
}

/**
 * A value as one line of JSON, with `protected (key k1)` in the place of every value inside it the
 * workers sealed and this CLI has no key for (give it their BATON_ENCRYPTION_KEYS; docs/integrity.md).
 */
export function valueText(value: unknown): string {
  const shown = (inner: unknown): unknown => (isSealedValue(inner) ? protectedLabel(inner) : inner);
  if (isSealedValue(value)) return protectedLabel(value);
  return JSON.stringify(value, (_key, inner: unknown) => shown(inner)) ?? '-';
}
