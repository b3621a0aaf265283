/**
 * Group logs (group commit across runs, `@baton/core` contracts/group-journal.ts) on Redis
 * Streams: one stream per log, `<prefix>:group:<log>`, entry ids `0-<position>`.
 *
 * Invariants:
 * 1. Positions strictly increase within a log and are never given twice: `XADD <key> 0-*` numbers
 *    on from the stream's last id, which trimming keeps.
 * 2. An append whose reply was lost is retried with the same token, and the script answers the
 *    landed record's position instead of writing it again (lua/group-append.lua): a log has one
 *    writer, so its own record is still the newest when the retry arrives.
 */
import { randomBytes } from 'node:crypto';
import { BatonError } from '@baton/core';
import { bufferView, checkGroupLogName, ownedBytes, type GroupLog } from '@baton/core/adapter';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TransportContext } from './context.js';
import { redisCommandFailed } from './errors.js';
import { fieldsOf, positionOfEntryId, type StreamEntry } from './streams.js';

/** Attempts of one append while Redis is unavailable (invariant 2), as for journal appends. */
const APPEND_ATTEMPTS = 3;
const APPEND_RETRY_DELAY_MS = 250;

export class RedisGroupLog implements GroupLog {
  constructor(private readonly open: (operation: string) => TransportContext) {}

  async appendGroupRecord(log: string, data: Uint8Array): Promise<number> {
    checkGroupLogName(log);
    const context = this.open('appendGroupRecord');
    const token = randomBytes(12).toString('base64url');
    const bytes = Buffer.from(bufferView(data));
    for (let attempt = 1; ; attempt++) {
      try {
        const position = await context.writeReplicated('appendGroupRecord', () =>
          context.scripts('group-append', [context.layout.groupLog(log)], [bytes, token]),
        );
        if (typeof position !== 'number') {
          throw redisCommandFailed(
            `redis transport: the group append script answered ${JSON.stringify(position)} for log ${log}; expected a position`,
          );
        }
        return position;
      } catch (err) {
        const retryable = err instanceof BatonError && err.retryable;
        if (!retryable || attempt >= APPEND_ATTEMPTS || context.closing.aborted) throw err;
        await sleep(APPEND_RETRY_DELAY_MS);
      }
    }
  }

  async readGroupRecords(log: string, positions: readonly number[]): Promise<Map<number, Uint8Array>> {
    checkGroupLogName(log);
    const context = this.open('readGroupRecords');
    const wanted = [...new Set(positions)].filter((p) => Number.isSafeInteger(p) && p > 0);
    const found = new Map<number, Uint8Array>();
    if (wanted.length === 0) return found;
    const key = context.layout.groupLog(log);
    const replies = await context.call('readGroupRecords', async () => {
      const pipeline = context.redis.pipeline();
      for (const position of wanted) pipeline.xrangeBuffer(key, `0-${position}`, `0-${position}`);
      return (await pipeline.exec()) ?? [];
    });
    for (const [err, entries] of replies) {
      if (err !== null) throw context.toError('readGroupRecords', err);
      for (const [id, fields] of entries as StreamEntry[]) {
        found.set(positionOfEntryId(id), ownedBytes(fieldsOf(fields).get('d') ?? Buffer.alloc(0)));
      }
    }
    return found;
  }

  async trimGroupLog(log: string, beforePosition: number): Promise<void> {
    checkGroupLogName(log);
    const context = this.open('trimGroupLog');
    if (!(beforePosition > 1)) return;
    // MINID removes every entry whose id is below the threshold: exactly the records before it.
    await context.call('trimGroupLog', () =>
      context.redis.xtrim(context.layout.groupLog(log), 'MINID', `0-${Math.floor(beforePosition)}`),
    );
  }
}
