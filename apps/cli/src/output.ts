/**
 * What the CLI prints: human tables (cli-table3) by default, JSON with `--json`. Every printer
 * takes the records and returns text, so the unit specs check the text and the commands only
 * write it.
 */
import type { BulkSummary, ListedRun, RunTimeline, StoredDeadLetter, TimelineItem } from '@baton/client';
import { isSealedValue, protectedLabel } from '@baton/client';
import Table from 'cli-table3';

/** Where a command writes: stdout for results, stderr for progress and errors. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

/** A table without colours or borders between rows, as plain text. */
export function table(head: string[], rows: (string | number)[][]): string {
  const t = new Table({ head, style: { head: [], border: [] } });
  for (const row of rows) t.push(row.map(String));
  return t.toString();
}

/** `2026-11-25T10:00:00.000Z`, or `-` for none. */
export function time(ms: number | null | undefined): string {
  return ms === undefined || ms === null ? '-' : new Date(ms).toISOString();
}

/** `850 ms`, `12.4 s`, `3.0 min`, or `-`. */
export function duration(ms: number | undefined): string {
  if (ms === undefined) return '-';
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/** Pretty JSON with a final newline. */
export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** A page of runs: a table and, when there is more, the cursor to pass for the next page. */
export function runsTable(runs: readonly ListedRun[], cursor: string | undefined): string {
  const rows = runs.map((r) => [
    r.runId,
    `${r.workflow}@${r.version}`,
    r.status,
    time(r.createdAt),
    time(r.updatedAt),
    r.attempts,
    r.owner === null ? '-' : `${r.owner} (epoch ${r.epoch})`,
  ]);
  const text = table(['run id', 'workflow', 'status', 'created', 'updated', 'claims', 'held by'], rows);
  const footer =
    cursor === undefined
      ? `${runs.length} run(s); last page`
      : `${runs.length} run(s); next page: --cursor ${cursor}`;
  return `${text}\n${footer}\n`;
}

/** Dead letters, newest first, with the cursor for older ones. */
export function lettersTable(letters: readonly StoredDeadLetter[], cursor: string | undefined): string {
  const rows = letters.map((l) => [l.id, l.code, time(l.at), l.data.byteLength, oneLine(l.reason, 80)]);
  const text = table(['id', 'code', 'dead-lettered', 'bytes', 'reason'], rows);
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

function describeItem(item: TimelineItem): { what: string; outcome: string; detail: string } {
  switch (item.kind) {
    case 'activity':
      return {
        what: `activity ${item.seq} ${item.name}`,
        outcome:
          item.outcome + (item.reconciled ? ' (reconciled)' : '') + (item.refreshed ? ' (refreshed)' : ''),
        detail: `key ${item.idempotencyKey}${item.error ? `; ${item.error.name}: ${oneLine(item.error.message, 60)}` : ''}`,
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
        detail: item.error ? `${item.error.name}: ${oneLine(item.error.message, 60)}` : '',
      };
    case 'fenced-write':
      return {
        what: `fenced write ${item.entryType}${item.seq !== undefined ? ` ${item.seq}` : ''}`,
        outcome: 'ignored on replay',
        detail: 'written by an owner a newer epoch had fenced off',
      };
  }
}

/** How long an activity took (`~`: its start is estimated), or a wait lasted; empty for the rest. */
function tookText(item: TimelineItem): string {
  switch (item.kind) {
    case 'activity':
      return duration(item.durationMs) + (item.startKnown === 'estimated' ? ' ~' : '');
    case 'signal':
      return duration(item.endedAt === undefined ? undefined : item.endedAt - item.at);
    case 'timer':
      return duration(item.firedAt === undefined ? undefined : item.firedAt - item.at);
    default:
      return '';
  }
}

/** The timeline as a table: position, item, worker / epoch, start, duration, attempts, outcome, detail. */
export function timelineTable(timeline: RunTimeline): string {
  const rows = timeline.items.map((item) => {
    const { what, outcome, detail } = describeItem(item);
    const owner = item.kind === 'checkpoint' ? `- / ${item.epoch}` : ranBy(item);
    const took = tookText(item);
    const attempts = item.kind === 'activity' ? String(item.attempts ?? '-') : '';
    return [item.position, what, owner, time(item.at), took, attempts, outcome, detail];
  });
  const text = table(['pos', 'item', 'worker / epoch', 'at', 'took', 'attempts', 'outcome', 'detail'], rows);
  const epochs = timeline.epochs.map((e) => `${e.epoch}: ${e.workerId ?? '?'}`).join(', ');
  return (
    `run ${timeline.runId}\n${text}\n` +
    `epochs: ${epochs || 'none'}; failovers: ${timeline.failovers}` +
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
