/**
 * Run-queue messages. Producers publish `start`, `signal` and `cancel`; workers publish `resume`
 * (hand-off, reaped lease) and `wake` (timer due, signal arrived, cancel of a suspended run).
 */

interface MessageBase {
  runId: string;
  /** W3C trace context of the producer, carried so one trace spans enqueue and every attempt. */
  traceparent?: string;
}

export interface StartMessage extends MessageBase {
  kind: 'start';
  workflow: string;
  version: number;
  input: unknown;
  idempotencyKey?: string;
  enqueuedAt: number;
}

export interface ResumeMessage extends MessageBase {
  kind: 'resume';
  reason: 'handoff' | 'reaped' | 'retry';
  /** When the previous owner stopped (handoff) or its lease was found expired (reaped). */
  since: number;
}

export interface WakeMessage extends MessageBase {
  kind: 'wake';
  reason: 'timer' | 'signal' | 'cancel';
}

export interface SignalMessage extends MessageBase {
  kind: 'signal';
  name: string;
  payload: unknown;
  /** Unique per signal; a redelivered message is delivered to the inbox once. */
  signalId: string;
}

export interface CancelMessage extends MessageBase {
  kind: 'cancel';
  reason: string;
}

export type RunMessage = StartMessage | ResumeMessage | WakeMessage | SignalMessage | CancelMessage;
export type RunMessageKind = RunMessage['kind'];
