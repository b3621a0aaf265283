/**
 * The shapes the API answers with, as the page reads them. Written here rather than imported
 * from @baton/client so the browser bundle pulls in no server code; the server sends exactly
 * the client's types (RunPage, RunCounts, RunTimeline, …) as JSON.
 */
export type RunStatus = 'pending' | 'running' | 'suspended' | 'paused' | 'completed' | 'failed' | 'cancelled';

export const RUN_STATUSES: readonly RunStatus[] = [
  'pending',
  'running',
  'suspended',
  'paused',
  'completed',
  'failed',
  'cancelled',
];

export interface ListedRun {
  runId: string;
  workflow: string;
  version: number;
  input: unknown;
  idempotencyKey: string | null;
  status: RunStatus;
  createdAt: number;
  updatedAt: number;
  result?: unknown;
  error?: { name: string; message: string };
  attempts: number;
  owner: string | null;
  epoch: number;
  forkedFrom?: { runId: string; checkpoint?: number; journalPosition?: number };
}

export interface RunPage {
  runs: ListedRun[];
  cursor?: string;
}

export interface RunCounts {
  total: number;
  byStatus: Record<RunStatus, number>;
  byWorkflow: Record<string, Partial<Record<RunStatus, number>>>;
}

export interface LeaseInfo {
  epoch: number;
  owner: string | null;
  state: string;
  expiresAt: number | null;
  cancelRequested: boolean;
  pauseRequested?: boolean;
  pauseReason?: string;
}

export type RunDescription = Omit<ListedRun, 'owner' | 'epoch'> & { lease: LeaseInfo | undefined };

export interface Owner {
  epoch: number;
  workerId: string | null;
}

interface Base {
  position: number;
  at: number;
}

export interface ActivityItem extends Base, Owner {
  kind: 'activity';
  seq: number;
  name: string;
  idempotencyKey: string;
  attempts: number | undefined;
  startedAt: number;
  startKnown: 'journaled' | 'estimated';
  endedAt: number | undefined;
  durationMs: number | undefined;
  outcome: 'completed' | 'failed' | 'in-flight';
  error?: { name: string; message: string };
  reconciled?: boolean;
  refreshed?: boolean;
}
export interface SignalItem extends Base, Owner {
  kind: 'signal';
  seq: number;
  name: string;
  outcome: 'received' | 'timed-out' | 'waiting';
  endedAt: number | undefined;
}
export interface TimerItem extends Base, Owner {
  kind: 'timer';
  seq: number;
  wakeAt: number;
  outcome: 'fired' | 'pending';
  firedAt: number | undefined;
}
export interface CheckpointItem extends Base {
  kind: 'checkpoint';
  seq: number;
  epoch: number;
  status: string;
  sizeBytes: number;
}
export interface LeaseItem extends Base {
  kind: 'lease';
  epoch: number;
  workerId: string | null;
  unmarked?: true;
  previous: Owner | undefined;
  reason: 'first' | 'after-wait' | 'after-retry' | 'takeover';
}
export interface EndItem extends Base, Owner {
  kind: 'end';
  outcome: 'completed' | 'failed' | 'cancelled';
  error?: { name: string; message: string };
}
export interface FencedWriteItem extends Base, Owner {
  kind: 'fenced-write';
  entryType: string;
  seq?: number;
}
export type TimelineItem =
  ActivityItem | SignalItem | TimerItem | CheckpointItem | LeaseItem | EndItem | FencedWriteItem;

export interface RunTimeline {
  runId: string;
  items: TimelineItem[];
  epochs: Owner[];
  failovers: number;
}

export interface StepOutcome {
  seq: number;
  result?: unknown;
  error?: { name: string; message: string };
}

export type TimelineAnswer =
  | {
      timeline: RunTimeline;
      outcomes: Record<number, StepOutcome>;
      checkpoints: { seq: number; epoch: number; journalPosition: number; status: string }[];
    }
  | { protected: string };

export interface DeadLetterRow {
  id: string;
  reason: string;
  code: string;
  at: number;
  headers: Record<string, string>;
  bytes: number;
}

export interface ShownDeadLetter extends DeadLetterRow {
  message: { readable: true; message: Record<string, unknown> } | { readable: false; problem: string };
}

export interface FleetWorker {
  workerId: string;
  host: string;
  pid: number;
  batonVersion: string;
  workflows: { name: string; versions: number[] }[];
  startedAt: number;
  lastRenewalAt: number | null;
  runsHeld: number;
  concurrency: number;
  draining: boolean;
  lastSeenAt: number;
  connected?: boolean;
}

export interface FleetBacklog {
  transport: string;
  total: number;
  parts: { name: string; pending: number; ackPending?: number; partition?: number }[];
}

/** GET /api/metrics: the workers' counts per minute over the last hour (metrics-history.ts). */
export interface MinuteSample {
  start: number;
  runsCompleted: number;
  runsFailed: number;
  activities: number;
  activitiesFailed: number;
}

export interface MetricsHistorySnapshot {
  configured: boolean;
  intervalMs: number;
  sources: { url: string; lastScrapeAt?: number; error?: string }[];
  minutes: MinuteSample[];
}
