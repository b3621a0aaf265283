/**
 * The in-process transport's run queue: a FIFO with competing consumers, ack-wait redelivery, nak
 * delays and msgId de-duplication.
 *
 * Invariants:
 * 1. The queue is one lane per priority level (memory-run-lane.ts holds the lane's own
 *    invariants); fetch chooses among them by the claim cycle (priority-lanes.ts).
 * 2. msgId de-duplication spans the lanes: a start enqueued twice at different priorities is kept once.
 */
import type {
  BacklogDetail,
  BacklogPart,
  Delivery,
  EnqueueOptions,
  FetchOptions,
  RunQueue,
} from '../adapter/contracts/transport.js';
import {
  DEFAULT_RUN_PRIORITY,
  RUN_PRIORITIES,
  checkRunPriority,
  type RunPriority,
} from '../adapter/priority.js';
import { PriorityLanes } from '../adapter/priority-lanes.js';
import { MemoryRunLane } from './memory-run-lane.js';

export class MemoryRunQueue implements RunQueue {
  private closed = false;
  /** One lane per priority level; `normal` is the queue as it was before priorities. */
  private readonly lanes: Record<RunPriority, MemoryRunLane>;
  private readonly prioritised: PriorityLanes;
  /** msgId -> expiry; insertion order is expiry order because the window is constant. */
  private readonly seenMsgIds = new Map<string, number>();

  constructor(
    private readonly options: { ackWaitMs: number; dedupWindowMs: number },
    assertOpen: (operation: string) => void,
  ) {
    const lane = (): MemoryRunLane => new MemoryRunLane(options.ackWaitMs, assertOpen);
    this.lanes = { high: lane(), normal: lane(), low: lane() };
    this.prioritised = new PriorityLanes({
      high: (o) => this.lanes.high.fetch(o),
      normal: (o) => this.lanes.normal.fetch(o),
      low: (o) => this.lanes.low.fetch(o),
    });
  }

  /** Empties waiting fetches and stops every redelivery timer. */
  close(): void {
    this.closed = true;
    this.prioritised.close();
    for (const lane of Object.values(this.lanes)) lane.close();
  }

  async enqueue(data: Uint8Array, options: EnqueueOptions = {}): Promise<void> {
    const priority = checkRunPriority(options.priority, 'memory transport: enqueue') ?? DEFAULT_RUN_PRIORITY;
    if (options.msgId !== undefined && this.isDuplicate(options.msgId)) return;
    this.lanes[priority].enqueue(data, options.headers);
  }

  /** Takes from the priority lanes by the claim cycle (priority-lanes.ts). */
  async fetch(options: FetchOptions): Promise<Delivery[]> {
    return this.prioritised.fetch(options);
  }

  private isDuplicate(msgId: string): boolean {
    const now = Date.now();
    for (const [id, expiresAt] of this.seenMsgIds) {
      if (expiresAt > now) break;
      this.seenMsgIds.delete(id);
    }
    if (this.seenMsgIds.has(msgId)) return true;
    this.seenMsgIds.set(msgId, now + this.options.dedupWindowMs);
    return false;
  }

  /** Messages ready for a fetch, and those nakked with a delay that will be, in every lane. */
  async backlog(): Promise<number | undefined> {
    return (await this.backlogDetail())?.total;
  }

  /**
   * One part per lane that holds anything: `runs` (the default lane, always listed), `runs.high`,
   * `runs.low`; each with what backlog() counts and the messages delivered and not yet acked.
   * Undefined once closed.
   */
  async backlogDetail(): Promise<BacklogDetail | undefined> {
    if (this.closed) return undefined;
    const parts: BacklogPart[] = [];
    for (const priority of RUN_PRIORITIES) {
      const { pending, ackPending } = this.lanes[priority].counts();
      if (priority !== DEFAULT_RUN_PRIORITY && pending + ackPending === 0) continue;
      parts.push({
        name: priority === DEFAULT_RUN_PRIORITY ? 'runs' : `runs.${priority}`,
        pending,
        ackPending,
      });
    }
    return { total: parts.reduce((sum, part) => sum + part.pending, 0), parts };
  }
}
