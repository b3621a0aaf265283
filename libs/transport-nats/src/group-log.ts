/**
 * Group logs on JetStream (group commit across runs, contracts/group-journal.ts): each log is one
 * subject of the journal stream, `<prefix>.journal.g.<log>`. A run's subject has three tokens
 * (`<prefix>.journal.<runId>`, a run id being one token) and a log's four, so neither can name the
 * other. A record's position is its stream sequence.
 *
 * Invariants:
 * 1. An append resolves with the record's sequence only after the server stored it, and a retry of
 *    an append whose acknowledgement was lost stores it at most once (append-retry.ts: a message
 *    id, then the subject's last record read back). The committer flushes one record at a time per
 *    log, so the log's last record is the one in question.
 * 2. A read by sequence answers only records of the log's own subject: a sequence that holds
 *    another subject's record, or none, is left out.
 * 3. A record that cannot fit (above the server's max_payload) is refused before anything is sent.
 */
import { checkGroupLogName, type GroupLog } from '@baton/core/adapter';
import type { TransportContext } from './context.js';
import { assertFits, maxPayload, toNatsHeaders } from './messages.js';
import { isApiError } from './setup.js';
import { getStoredMessage } from './stream-reader.js';
import { MSG_ID, publishWithRetry } from './append-retry.js';

/** Bytes of max_payload left for a group record's headers (its message id) and framing. */
const HEADER_ROOM = 1024;

/** JetStream API errors of a get that found no message at that sequence. */
const NO_MESSAGE_FOUND = [10037, 10043];

/** The subject of group log `log`. */
export function groupLogSubject(context: TransportContext, log: string): string {
  return `${context.layout.journalSubjects.slice(0, -1)}g.${log}`;
}

export class NatsGroupLog implements GroupLog {
  constructor(private readonly open: (operation: string) => TransportContext) {}

  maxRecordBytes(): number | undefined {
    let limit: number | undefined;
    try {
      limit = maxPayload(this.open('maxRecordBytes').session.nc);
    } catch {
      return undefined; // not connected: the append will say so
    }
    return limit === undefined ? undefined : Math.max(1, limit - HEADER_ROOM);
  }

  async appendGroupRecord(log: string, data: Uint8Array): Promise<number> {
    const context = this.open('appendGroupRecord');
    checkGroupLogName(log);
    const h = toNatsHeaders(undefined, { [MSG_ID]: context.messageIds.next() });
    assertFits(context.session.nc, `group record of log ${log}`, data, h);
    try {
      return await publishWithRetry(context, groupLogSubject(context, log), data, h, context.appendStats);
    } catch (err) {
      throw context.toError('appendGroupRecord', err);
    }
  }

  async readGroupRecords(log: string, positions: readonly number[]): Promise<Map<number, Uint8Array>> {
    const context = this.open('readGroupRecords');
    checkGroupLogName(log);
    const subject = groupLogSubject(context, log);
    const found = new Map<number, Uint8Array>();
    try {
      await Promise.all(
        [...new Set(positions)].map(async (seq) => {
          const record = await getStoredMessage(
            context,
            context.layout.journalStream,
            context.streams.journalReplicas,
            { seq },
          ).catch((err: unknown) => {
            if (NO_MESSAGE_FOUND.some((code) => isApiError(err, code))) return null;
            throw err;
          });
          if (record !== null && record.subject === subject) found.set(seq, record.data);
        }),
      );
    } catch (err) {
      throw context.toError('readGroupRecords', err);
    }
    return found;
  }

  async trimGroupLog(log: string, beforePosition: number): Promise<void> {
    const context = this.open('trimGroupLog');
    checkGroupLogName(log);
    // Nothing lies below sequence 1, and a purge given a sequence of 1 (or 0) removes the whole
    // subject on nats-server 2.9: it reads as "no sequence".
    if (beforePosition <= 1) return;
    try {
      // Purge with a sequence removes the subject's records below it and keeps the rest.
      await context.session.jsm.streams.purge(context.layout.journalStream, {
        filter: groupLogSubject(context, log),
        seq: beforePosition,
      });
    } catch (err) {
      throw context.toError('trimGroupLog', err);
    }
  }
}
