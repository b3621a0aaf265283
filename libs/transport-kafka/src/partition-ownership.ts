/**
 * Which worker reads which partition of the runs topic when the store's presence decides
 * (partitionOwnership 'presence'): no consumer group, so no join or death ever stops the others.
 *
 * Invariants:
 * 1. Every member computes the same owner for a partition from the same member list (rendezvous
 *    hashing: the member with the highest hash of `member/partition` owns it), so members agree
 *    without talking to each other.
 * 2. A member joining takes only the partitions it now wins; a member leaving gives up only its
 *    own: every other partition keeps its reader, so its runs keep flowing.
 * 3. This member always counts itself as live: a member whose own presence the store does not
 *    list (mid-registration, a store hiccup) reads its share rather than nothing. Two members that
 *    briefly both read a partition deliver a record twice; the store refuses the second claim.
 * 4. A failed read of the member list keeps the last one, and is logged: the partitions stay where
 *    they were until the store answers again.
 * 5. A transport shared by several workers of one process (handed over by each, `others`) reads
 *    the shares of all of them that the list says are live, besides the latest one's: no live
 *    worker's partitions are left to nobody, and a stopped one's pass to whoever wins them.
 */
import { createHash } from 'node:crypto';
import type { RunQueueMembership } from '@baton/core/adapter';
import type { KafkaLogHook } from './client.js';

/** The partitions of `partitionCount` that `self` owns among `members` (self included). */
export function ownedPartitions(self: string, members: readonly string[], partitionCount: number): number[] {
  const all = [...new Set([...members, self])];
  const owned: number[] = [];
  for (let partition = 0; partition < partitionCount; partition++) {
    let best: string | undefined;
    let bestScore = -1n;
    for (const member of all) {
      const score = createHash('sha256').update(`${member}/${partition}`).digest().readBigUInt64BE(0);
      // Ties (never seen in practice) go to the smaller id, the same on every member.
      if (score > bestScore || (score === bestScore && best !== undefined && member < best)) {
        best = member;
        bestScore = score;
      }
    }
    if (best === self) owned.push(partition);
  }
  return owned;
}

/**
 * Asks the membership for the live members every `refreshMs` and calls `onChange` with this
 * member's partitions whenever they change (and once at start).
 */
export class PartitionOwnership {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private lastKey = '';
  private failing = false;
  private current: number[] = [];

  constructor(
    private readonly membership: RunQueueMembership,
    private readonly partitionCount: number,
    private readonly refreshMs: number,
    private readonly onChange: (owned: number[], members: string[]) => void,
    private readonly log: KafkaLogHook | undefined,
    /** Other member ids this process reads for, when the list says they are live (invariant 5). */
    private readonly others: () => readonly string[] = () => [],
  ) {}

  /** This member's partitions as of the last refresh. */
  get owned(): readonly number[] {
    return this.current;
  }

  /** The first refresh (awaited, so the first fetch knows its partitions), then one per period. */
  async start(): Promise<void> {
    await this.refresh();
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.refresh().finally(() => this.schedule());
    }, this.refreshMs);
    this.timer.unref();
  }

  private async refresh(): Promise<void> {
    let members: string[];
    try {
      members = await this.membership.members(this.refreshMs);
      if (this.failing) this.log?.('info', 'kafka run-queue: the live workers can be read again', {});
      this.failing = false;
    } catch (err) {
      if (!this.failing) {
        this.log?.(
          'warn',
          'kafka run-queue: reading the live workers failed; partitions stay where they are',
          {
            error: String(err),
          },
        );
      }
      this.failing = true;
      if (this.lastKey !== '') return;
      members = []; // the first refresh: read this member's share alone (invariant 3)
    }
    if (this.stopped) return;
    const self = this.membership.memberId;
    const sorted = [...new Set([...members, self])].sort();
    const local = [self, ...this.others().filter((id) => id !== self && sorted.includes(id))];
    const key = `${sorted.join('\n')}\n\n${local.join('\n')}`;
    if (key === this.lastKey) return;
    this.lastKey = key;
    const owned = [...new Set(local.flatMap((id) => ownedPartitions(id, sorted, this.partitionCount)))].sort(
      (a, b) => a - b,
    );
    if (owned.join(',') === this.current.join(',')) return;
    this.current = owned;
    this.onChange(owned, sorted);
  }
}
