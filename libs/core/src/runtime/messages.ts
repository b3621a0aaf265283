/**
 * Run-queue messages. Producers publish `start`, `signal` and `cancel`; workers publish `resume`
 * (hand-off, reaped lease) and `wake` (timer due, signal arrived, cancel of a suspended run).
 */
import type { PayloadRef } from '../shared/journal.js';
import type { RunPriority } from '../adapter/priority.js';

interface MessageBase {
  runId: string;
  /** W3C trace context of the producer, carried so one trace spans enqueue and every attempt. */
  traceparent?: string;
}

export interface StartMessage extends MessageBase {
  kind: 'start';
  workflow: string;
  version: number;
  /** The run's input; absent when it went by reference (`inputRef`). */
  input?: unknown;
  /** Set instead of `input` when the input was stored by reference (docs/large-payloads.md). */
  inputRef?: PayloadRef;
  idempotencyKey?: string;
  enqueuedAt: number;
  /**
   * The lane the message was enqueued in, absent for the default `'normal'` (so a start without a
   * priority encodes as it always did). Informational once delivered: it chose the claim order,
   * it is not journaled and does not change what the run does (docs/priorities.md).
   */
  priority?: RunPriority;
}

export interface ResumeMessage extends MessageBase {
  kind: 'resume';
  reason: 'handoff' | 'reaped' | 'retry';
  /** When the previous owner stopped (handoff) or its lease was found expired (reaped). */
  since: number;
}

export interface WakeMessage extends MessageBase {
  kind: 'wake';
  /**
   * `resume`: an operator resumed the paused run (`client.runs.resume`); `slot`: a concurrency slot
   * was handed to the run, which waited for it; `update`: an update request arrived for it
   * (`client.update`), which its owner reads once the run is replayed.
   */
  reason: 'timer' | 'signal' | 'cancel' | 'resume' | 'slot' | 'update';
}

export interface SignalMessage extends MessageBase {
  kind: 'signal';
  name: string;
  /** Absent when the payload went by reference (`payloadRef`). */
  payload?: unknown;
  /** Set instead of `payload` when the payload was stored by reference. */
  payloadRef?: PayloadRef;
  /** Unique per signal; a redelivered message is delivered to the inbox once. */
  signalId: string;
}

export interface CancelMessage extends MessageBase {
  kind: 'cancel';
  reason: string;
}

export type RunMessage = StartMessage | ResumeMessage | WakeMessage | SignalMessage | CancelMessage;
export type RunMessageKind = RunMessage['kind'];
