/**
 * The Kafka run queue's ownership mode `presence` (run-queue.ts chooses it once the worker handed
 * over its store's membership): no consumer group is joined. This member computes its partitions
 * of the runs topic from the live workers (partition-ownership.ts) and reads them with a partition
 * reader of its own into the shared buffer (run-buffer.ts), committing positions to the group's
 * offsets as a consumer outside the group does (so lag, backlogDetail and KEDA read them as before).
 *
 * - A change of the member list moves only the partitions that change hands; the others never
 *   stop. Each partition's tenure starts when this member gains it: deliveries of an older tenure
 *   commit nothing, like deliveries of an older generation in mode `group`.
 * - A gained partition is read from the group's committed offset, or from the log's start when
 *   that offset is outside the log (retention passed it, or the topic is new).
 * - One long poll at a time reads every owned partition with a known position; while the buffer is
 *   full no poll is made, and a poll stops at the first record the buffer did not take, which is
 *   read again after resume.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Admin, Kafka } from 'kafkajs';
import type { RunQueueMembership } from '@baton/core/adapter';
import type { KafkaLogHook } from './client.js';
import type { KafkaLayout } from './layout.js';
import type { ResolvedKafkaOptions } from './options.js';
import { PartitionOwnership } from './partition-ownership.js';
import { PartitionReader } from './partition-reader.js';
import type { PartitionFeed, RunBuffer } from './run-buffer.js';

/** How long one poll of the owned partitions waits on the broker for a first record. */
const OWNED_POLL_WAIT_MS = 250;

export class PresenceReader implements PartitionFeed {
  private readonly options: ResolvedKafkaOptions;
  private readonly layout: KafkaLayout;
  private readonly log: KafkaLogHook | undefined;
  /**
   * A reader of its own: its long polls hold their broker connection, and journal tails must not
   * wait behind them.
   */
  private readonly reader: PartitionReader;
  private readonly ownership: PartitionOwnership;
  /** The next offset to read per owned partition whose start is known. */
  private readonly positions = new Map<number, number>();
  private reading: Promise<void> | undefined;

  /**
   * Reads for the lane whose buffer it fills. `latest` is the membership handed over last (asked at every refresh, so a later hand-over takes
   * effect then); `handedIds` every member id handed over (partition-ownership.ts, invariant 5).
   */
  constructor(
    kafka: Kafka,
    private readonly buffer: RunBuffer,
    latest: () => RunQueueMembership,
    handedIds: () => readonly string[],
    /** Reads committed offsets and watermarks where an owned partition starts. */
    private readonly admin?: Admin,
    /**
     * Commits owned partitions' positions: a connection without long polls (the journal's
     * reader), so a commit never waits behind one.
     */
    private readonly committer?: PartitionReader,
  ) {
    const { options, layout, partitionCount, log } = buffer;
    this.options = options;
    this.layout = layout;
    this.log = log;
    this.reader = new PartitionReader(kafka, [layout.runsTopic]);
    const current: RunQueueMembership = {
      get memberId() {
        return latest().memberId;
      },
      members: (refreshMs) => latest().members(refreshMs),
    };
    this.ownership = new PartitionOwnership(
      current,
      partitionCount,
      options.ownershipRefreshMs,
      (owned, members) => this.ownershipChanged(owned, members),
      log,
      handedIds,
    );
  }

  /** Connects the reader and starts following the member list; a failure is logged and undone. */
  start(): Promise<void> {
    const started = (async () => {
      await this.reader.connect();
      await this.ownership.start();
      this.reading = this.readOwned();
    })();
    started.catch((err: unknown) => {
      this.log?.('error', 'kafka run-queue reader failed to start', { error: String(err) });
      this.ownership.stop();
      void this.reader.disconnect().catch(() => undefined);
    });
    return started;
  }

  /** The reading loop sees the buffer's `paused` and polls no more meanwhile. */
  pause(): void {}

  resume(): void {}

  async commit(offsets: ReadonlyArray<{ partition: number; offset: number }>): Promise<void> {
    await (this.committer ?? this.reader).commitOffsets(this.layout.groupId, this.layout.runsTopic, offsets);
  }

  /** Stops following the member list and waits for the reading loop to end. */
  async stop(): Promise<void> {
    this.ownership.stop();
    await this.reading;
  }

  /**
   * A member outside the group leaves nothing to hand over: the others take its partitions once its
   * presence is gone.
   */
  async disconnect(): Promise<void> {
    await this.reader.disconnect().catch(() => undefined);
  }

  /**
   * The owned partitions changed: lost ones are dropped at once (their buffered records, their
   * pending offsets; acks of their deliveries commit nothing), gained ones start a tenure and are
   * read from the group's committed offset.
   */
  private ownershipChanged(owned: number[], members: string[]): void {
    const buffer = this.buffer;
    buffer.generation++;
    const generation = buffer.generation;
    const gained = owned.filter((p) => !buffer.tenure.has(p));
    const lost = [...buffer.tenure.keys()].filter((p) => !owned.includes(p));
    for (const partition of lost) {
      buffer.tenure.delete(partition);
      buffer.partitions.delete(partition);
      this.positions.delete(partition);
    }
    if (lost.length > 0) {
      const kept = buffer.entries.filter((entry) => buffer.tenure.has(entry.partition));
      buffer.entries.length = 0;
      buffer.entries.push(...kept);
    }
    for (const partition of gained) buffer.tenure.set(partition, generation);
    buffer.assigned = [...owned];
    this.log?.('info', 'kafka run-queue partitions owned', {
      generation,
      partitions: buffer.assigned,
      gained,
      lost,
      members: members.length,
    });
    if (gained.length > 0) void this.startPositions(gained, generation);
  }

  /** Where each gained partition starts: the group's committed offset, else its low watermark. */
  private async startPositions(gained: number[], generation: number): Promise<void> {
    const buffer = this.buffer;
    for (let attempt = 1; !buffer.closed; attempt++) {
      const still = gained.filter((p) => buffer.tenure.get(p) === generation);
      if (still.length === 0) return;
      try {
        if (this.admin === undefined) throw new Error('no admin client');
        const [committed, watermarks] = await Promise.all([
          this.admin.fetchOffsets({ groupId: this.layout.groupId, topics: [this.layout.runsTopic] }),
          this.admin.fetchTopicOffsets(this.layout.runsTopic),
        ]);
        const done = new Map<number, number>();
        for (const topic of committed)
          for (const p of topic.partitions) done.set(p.partition, Number(p.offset));
        for (const { partition, low, high } of watermarks) {
          if (buffer.tenure.get(partition) !== generation || !still.includes(partition)) continue;
          const at = done.get(partition);
          // A committed offset outside the log (retention passed it, or the topic is new) reads
          // from the log's start, as the consumer group does with fromBeginning.
          const inLog = at !== undefined && at >= Number(low) && at <= Number(high);
          const start = inLog ? at : Number(low);
          buffer.partitions.set(partition, { pending: new Set(), next: start, committed: start });
          this.positions.set(partition, start);
        }
        return;
      } catch (err) {
        // The partitions stay unread meanwhile; they go on being tried while this member holds them.
        this.log?.('warn', 'kafka run-queue: reading where gained partitions start failed; trying again', {
          partitions: still,
          attempt,
          error: String(err),
        });
        await sleep(Math.min(2_000, 100 * 2 ** Math.min(attempt, 5)));
      }
    }
  }

  /**
   * Reads every owned partition with a known position, one long poll at a time, into the buffer;
   * waits while the buffer is full. A failed poll is logged and tried again after a pause that
   * grows to 2 s; the queue's ack wait and the store keep every record safe meanwhile.
   */
  private async readOwned(): Promise<void> {
    const buffer = this.buffer;
    let failures = 0;
    while (!buffer.closed) {
      if (buffer.paused || this.positions.size === 0) {
        await sleep(Math.min(100, this.options.ownershipRefreshMs));
        continue;
      }
      const asked = new Map(this.positions);
      try {
        const fetched = await this.reader.pollMany(this.layout.runsTopic, asked, OWNED_POLL_WAIT_MS);
        if (failures > 0) this.log?.('info', 'kafka run-queue reads again', { failures });
        failures = 0;
        for (const [partition, { records, next }] of fetched) {
          // Moved away, or moved away and back, while the poll ran: its new tenure reads it.
          if (buffer.closed || this.positions.get(partition) !== asked.get(partition)) continue;
          let upTo = next;
          for (const record of records) {
            if (!buffer.offer(partition, record)) {
              upTo = record.offset; // the rest is read again after resume
              break;
            }
          }
          this.positions.set(partition, upTo);
        }
      } catch (err) {
        if ((err as Error).name === 'KafkaJSOffsetOutOfRange') {
          // Retention removed records below the committed offset: start again where the log starts.
          const partition = (err as { partition?: number }).partition;
          this.log?.(
            'warn',
            "kafka run-queue: an owned partition's offset is out of range; reading from its start",
            {
              partition,
            },
          );
          if (partition !== undefined && buffer.tenure.has(partition)) {
            this.positions.delete(partition);
            buffer.partitions.delete(partition);
            const generation = ++buffer.generation;
            buffer.tenure.set(partition, generation);
            void this.startPositions([partition], generation);
          }
          continue;
        }
        failures++;
        if (failures === 1 || failures % 20 === 0) {
          this.log?.('warn', 'kafka run-queue: reading owned partitions failed; trying again', {
            failures,
            error: String(err),
          });
        }
        await this.reader.refreshMetadata().catch(() => undefined);
        await sleep(Math.min(2_000, 50 * 2 ** Math.min(failures, 6)));
      }
    }
  }
}
