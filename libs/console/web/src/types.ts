/**
 * The shapes the API answers with, as the page reads them. The server sends exactly the client's
 * types (RunPage, RunCounts, RunTimeline, ...) as JSON, so the page imports them from
 * @baton/client as types only: nothing of the client enters the browser bundle (a type import is
 * erased), and a field renamed or retyped in the client fails the page's typecheck. The shapes
 * only the console's server makes (dead-letter rows, the metrics history, the timeline answer)
 * are written here.
 */
import type { RunStatus } from '@baton/client';

export type {
  ActivityItem,
  DepartedFleetWorker,
  FleetBacklog,
  FleetWorker,
  LeaseInfo,
  ListedRun,
  RunCounts,
  RunDescription,
  RunPage,
  RunStatus,
  RunTimeline,
  RunWait,
  TimelineItem,
  TimelineOwner as Owner,
} from '@baton/client';
import type { ListedRun, RunCounts, RunTimeline, RunWait, TimelineItem } from '@baton/client';

/** A run as the runs page gets it: a suspended or paused one with what it waits for. */
export type ListedRunView = ListedRun & { waits?: RunWait[] };

/** The runs page's counts: of the runs the filters match, and how they were counted. */
export type FilteredCounts = RunCounts & {
  /** `all`: no filter; `workflow`, `attribute`: the store's kept counts; `filter`: walked. */
  scope: 'all' | 'workflow' | 'attribute' | 'filter';
  /** The one attribute expression counted (scope `attribute`). */
  attribute?: string;
  /** Walked, and stopped at the walk's limit: the counts are of the first matching runs. */
  capped?: boolean;
};

/** The timeline item of an update (the client exports the union, not each item). */
export type UpdateItem = Extract<TimelineItem, { kind: 'update' }>;

/**
 * Every run status, in the order the runs page shows them. A value the page needs at run time, so
 * not imported (that would bundle the client); the check below fails the typecheck when the
 * client gains or loses a status.
 */
export const RUN_STATUSES = [
  'pending',
  'running',
  'suspended',
  'paused',
  'completed',
  'failed',
  'cancelled',
] as const satisfies readonly RunStatus[];
type Missing = Exclude<RunStatus, (typeof RUN_STATUSES)[number]>;
export const EVERY_STATUS_LISTED: [Missing] extends [never] ? true : Missing = true;

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
      /** The history against the soft limit (server's api-run.ts, HistorySize). */
      historySize?: {
        entries: number;
        bytes: number;
        softEntries: number;
        softBytes: number;
        percent: number;
      };
    }
  | { protected: string };

/**
 * GET /api/runs/<id>/promises: the run's pending durable promises without their tokens (secrets;
 * POST …/promises/<seq>/token reveals one, an action).
 */
export interface PendingPromiseRow {
  seq: number;
  tokenHint: string;
  createdAt: number;
  timeoutAt: number | null;
  hasSchema: boolean;
}

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

/**
 * What `baton dev` tells the page about its last reload (`GET /api/dev`): which workflows run, and
 * the runs in flight the change would break, each with where code and journal part.
 */
export interface DevReport {
  /** The workflows the workers run now, as `name@version`. */
  workflows: string[];
  /** When the workers last started on new code (ms since the epoch); none before the first reload. */
  reloadedAt?: number;
  /** The runs the last reload's check found the new code would break. */
  broken: { runId: string; workflow: string; detail: string }[];
  /** Why the last change was not loaded (the workers kept their code); none when it was. */
  notLoaded?: string;
}

export type { ScheduleRecord, VersionDrain, VersionsListing } from '@baton/client';
import type { ScheduleRecord } from '@baton/client';

/** GET /api/schedules: a schedule with its next due times (none while paused). */
export type ListedSchedule = ScheduleRecord & { upcoming: number[] };

/** GET /api/startable: a workflow version the start page can start (server/api-start.ts). */
export interface StartableVersion {
  name: string;
  version: number;
  /** Registered by a live worker that is not draining. */
  live: boolean;
  /** Loaded by this console (`--workflows`): its starts are checked against its input schema. */
  loaded: boolean;
  /** Its input's JSON Schema, when loaded and its schema library writes one. */
  inputSchema?: Record<string, unknown>;
}

/** GET /api/search?q=: where the header's search box goes, or what it tried (server/api-search.ts). */
export type SearchAnswer =
  | { found: 'run'; runId: string }
  | { found: 'key'; runs: { runId: string; workflow: string; version: number; status: string }[] }
  | { found: 'attribute'; expression: string }
  | { found: 'nothing'; tried: string[] };
