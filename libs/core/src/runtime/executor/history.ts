/**
 * The replay view of a run's journal: what each step recorded, and the order in which steps
 * completed. Completions are delivered to the workflow in journal order, one at a time, so a
 * replay takes the same path as the original execution whatever order parallel branches finished.
 * Accepted updates take their place in that order too: their handlers start where they started.
 */
import { deserializeError } from '../../shared/errors.js';
import {
  ActivityFailedError,
  PromiseRejectedError,
  PromiseTimeoutError,
  SignalTimeoutError,
} from '../../author/errors.js';
import { promiseSignalId } from '../../author/promise.js';
import { NonDeterminismError } from '../errors.js';
import type { Settle } from './pending-waits.js';
import type { JournalEntry, StepEntry, UpdateAcceptedEntry } from '../../shared/journal.js';
import { isStepEntry } from '../../shared/journal.js';

/** Entry types that settle a step's promise. */
const COMPLETION_TYPES = new Set<JournalEntry['type']>([
  'ActivityCompleted',
  'ActivityFailed',
  'TimerFired',
  'SignalReceived',
  'SignalTimedOut',
  'PromiseCompleted',
  'PromiseTimedOut',
  'AttributesSet',
]);

export type CompletionEntry = Extract<
  StepEntry,
  {
    type:
      | 'ActivityCompleted'
      | 'ActivityFailed'
      | 'TimerFired'
      | 'SignalReceived'
      | 'SignalTimedOut'
      | 'PromiseCompleted'
      | 'PromiseTimedOut'
      | 'AttributesSet';
  }
>;

/**
 * What replay delivers, one at a time in journal order: a step's completion, or an accepted update
 * whose handler starts at that point (executor/updates.ts, invariant 2).
 */
export type Delivery = CompletionEntry | UpdateAcceptedEntry;

/** What a ctx call at some sequence is, for comparing code with history: `activity:pull_credit`. */
export function stepIdentity(entry: StepEntry): string {
  switch (entry.type) {
    case 'ActivityStarted':
    case 'ActivityCompleted':
    case 'ActivityFailed':
      return `activity:${entry.name}`;
    case 'ValueRecorded':
      return `value:${entry.name}`;
    case 'TimerScheduled':
    case 'TimerFired':
      return 'sleep';
    case 'SignalWaitStarted':
    case 'SignalReceived':
    case 'SignalTimedOut':
      return `signal:${entry.name}`;
    case 'PromiseCreated':
    case 'PromiseCompleted':
    case 'PromiseTimedOut':
      return 'promise';
    case 'AttributesSet':
      return 'attributes';
  }
}

export interface StepHistory {
  identity: string;
  entries: StepEntry[];
  completion?: CompletionEntry;
}

export class ReplayHistory {
  private readonly steps = new Map<number, StepHistory>();
  private readonly completions: Delivery[] = [];
  /** Where each step's completion sits in `completions`, so a refreshed one can take its place. */
  private readonly completionSlot = new Map<number, number>();
  private cursor = 0;
  private highestSeq = -1;
  /** Change ids of the run's PatchMarker entries. */
  private readonly patches = new Set<string>();
  /** Signal ids consumed by earlier waits. */
  readonly consumedSignalIds = new Set<string>();

  constructor(
    private readonly runId: string,
    entries: readonly JournalEntry[],
  ) {
    for (const entry of entries) {
      if (entry.type === 'PatchMarker') this.patches.add(entry.changeId);
      if (entry.type === 'UpdateAccepted') this.completions.push(entry);
      if (!isStepEntry(entry)) continue;
      this.highestSeq = Math.max(this.highestSeq, entry.seq);
      const identity = stepIdentity(entry);
      let step = this.steps.get(entry.seq);
      if (!step) {
        step = { identity, entries: [] };
        this.steps.set(entry.seq, step);
      } else if (step.identity !== identity) {
        throw new NonDeterminismError(runId, entry.seq, step.identity, identity);
      }
      step.entries.push(entry);
      if (COMPLETION_TYPES.has(entry.type)) {
        const completion = entry as CompletionEntry;
        const slot = this.completionSlot.get(entry.seq);
        if (slot !== undefined && 'refreshed' in completion && completion.refreshed === true) {
          // A freshness re-run: the workflow saw its result where it saw the old one (the step
          // was re-run at that point of the replay), so it is delivered there, and it wins.
          this.completions[slot] = completion;
        } else {
          this.completionSlot.set(entry.seq, this.completions.length);
          this.completions.push(completion);
        }
        step.completion = completion;
      }
      if (entry.type === 'SignalReceived') this.consumedSignalIds.add(entry.signalId);
      // A promise's completion stays in the inbox after it was taken (promise.ts, invariant 4).
      if (entry.type === 'PromiseCompleted') this.consumedSignalIds.add(promiseSignalId(entry.seq));
    }
  }

  /** The recorded step at `seq`, after checking that the code asks for the same thing. */
  step(seq: number, identity: string): StepHistory | undefined {
    const step = this.steps.get(seq);
    if (step && step.identity !== identity)
      throw new NonDeterminismError(this.runId, seq, step.identity, identity);
    return step;
  }

  find<T extends StepEntry['type']>(
    step: StepHistory | undefined,
    type: T,
  ): Extract<StepEntry, { type: T }> | undefined {
    return step?.entries.find((e) => e.type === type) as Extract<StepEntry, { type: T }> | undefined;
  }

  /** Whether the run journaled a PatchMarker for `changeId` (it took the patch's new branch). */
  hasPatch(changeId: string): boolean {
    return this.patches.has(changeId);
  }

  /**
   * Whether the journal holds a step numbered `seq` or later: the code at step `seq` is still
   * inside what the recorded execution did, so it must follow the recorded path.
   */
  recordsStepFrom(seq: number): boolean {
    return this.highestSeq >= seq;
  }

  /** The next completion (or accepted update) to deliver, in journal order. */
  nextCompletion(): Delivery | undefined {
    return this.completions[this.cursor++];
  }

  get hasUndelivered(): boolean {
    return this.cursor < this.completions.length;
  }

  get stepCount(): number {
    return this.steps.size;
  }
}

/** Settles a step's promise the way the journaled completion says it ended. */
export function settleFromHistory(runId: string, entry: CompletionEntry, settle: Settle): void {
  switch (entry.type) {
    case 'ActivityCompleted':
      return settle.resolve(entry.result);
    case 'ActivityFailed':
      return settle.reject(
        new ActivityFailedError(entry.name, entry.seq, entry.attempts, deserializeError(entry.error)),
      );
    case 'TimerFired':
      return settle.resolve(undefined);
    case 'SignalReceived':
      return settle.resolve(entry.payload);
    case 'SignalTimedOut':
      return settle.reject(new SignalTimeoutError(runId, entry.name));
    case 'PromiseCompleted':
      if (entry.outcome === 'resolved') return settle.resolve(entry.value);
      return settle.reject(new PromiseRejectedError(runId, entry.seq, entry.error ?? missingError));
    case 'PromiseTimedOut':
      return settle.reject(new PromiseTimeoutError(runId, entry.seq));
    case 'AttributesSet':
      // The store holds them already (they were written before the entry): nothing to do again.
      return settle.resolve(undefined);
  }
}

/** What a rejected completion journaled without an error stands for (a damaged entry, never written so). */
const missingError = { name: 'Error', message: 'the rejection carried no error' };
