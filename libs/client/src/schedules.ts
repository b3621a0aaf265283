/**
 * Schedules (`client.schedules`, docs/schedules.md): workflow runs the fleet starts at due times,
 * from a cron expression in a time zone or a fixed interval. The client writes the schedule to the
 * store (with its first due time, computed on the store's clock); workers fire it. Every change is
 * a compare-and-set on the schedule's revision, repeated on a conflict with a firing, so an update
 * never undoes a firing and a firing never undoes an update.
 *
 * @example
 * await client.schedules.create(nightlyReport, { region: 'eu' }, {
 *   scheduleId: 'nightly-eu', cron: '0 2 * * *', timeZone: 'Europe/Paris', overlap: 'skip',
 * });
 */
import { ConfigError, NotFoundError, toMs, type Duration, type WorkflowDefinition } from '@baton/core';
import {
  type CatchupPolicy,
  type NewSchedule,
  type OverlapPolicy,
  type SchedulePage,
  type ScheduleQuery,
  type ScheduleRecord,
  type ScheduleSpec,
  type Store,
} from '@baton/core/adapter';
import {
  checkScheduleSpec,
  DEFAULT_CATCHUP,
  freshState,
  isSealedValue,
  nextDueAfter,
  openValue,
  scheduleSealId,
  sealValue,
  type PayloadProtection,
} from '@baton/core/runtime';
import { randomUUID } from 'node:crypto';
import { unlessKeyMissing } from './sealed-records.js';
import { checkStartFields, validatedInput, type UntypedWorkflowRef } from './validate-input.js';

/** When a schedule falls due: exactly one of `cron` (with `timeZone`) and `every`. */
export interface ScheduleTiming {
  /** A cron expression: 5 fields, or 6 with seconds first (cron-parser's syntax). */
  cron?: string;
  /** The IANA time zone `cron` is read in. @defaultValue 'UTC' */
  timeZone?: string;
  /** A fixed interval (ms or `'15m'`, at least 1 s); due on its whole multiples since the epoch. */
  every?: Duration;
}

/** How a schedule behaves; see docs/schedules.md. */
export interface SchedulePolicies {
  /** Missed due times after downtime. @defaultValue `{ missed: 'skip', limit: 1, graceMs: 60_000 }` */
  catchup?: Partial<CatchupPolicy>;
  /** A due time while the previous run is not finished. @defaultValue 'skip' */
  overlap?: OverlapPolicy;
  /** Start each due time's run up to this much later (fixed per due time). @defaultValue 0 */
  jitter?: Duration;
  /** Free text for operators. */
  note?: string;
}

/** Options of {@link SchedulesApi.create}. */
export interface CreateScheduleOptions extends ScheduleTiming, SchedulePolicies {
  /** The schedule's id (letters, digits, '_', '-', '.', ':'). @defaultValue a new random id */
  scheduleId?: string;
  /** Created paused: it starts nothing until resumed. @defaultValue false */
  paused?: boolean;
}

/** What {@link SchedulesApi.update} changes; fields left out stay as they are. */
export interface ScheduleUpdate extends ScheduleTiming, SchedulePolicies {
  /** A new input for the runs to come. */
  input?: unknown;
  /** Another version of the same workflow for the runs to come. */
  version?: number;
}

/** A workflow as a schedule names it: a definition (its input schema is checked) or `{ name, version }`. */
export interface ScheduledWorkflow {
  name: string;
  version: number;
  input?: unknown;
}

/** How often a write is tried again after losing its compare-and-set to a firing. */
const CAS_ATTEMPTS = 10;

export class SchedulesApi {
  constructor(
    private readonly requireStore: (method: string) => Store,
    private readonly connect: () => Promise<void>,
    /** Seals a schedule's input for the store, and opens it where the key is held (docs/integrity.md). */
    private readonly protection: () => PayloadProtection,
  ) {}

  /**
   * Creates a schedule; its first due time is the first after now (store clock). A schedule id
   * already in use: ConfigError (nothing changes). Bad cron, time zone or policy: ConfigError.
   * Given a definition, `input` must have the workflow's input type, as in `client.start`.
   */
  create<I, O, StartInput = I>(
    workflow: WorkflowDefinition<I, O, StartInput>,
    input: NoInfer<StartInput>,
    options: CreateScheduleOptions,
  ): Promise<ScheduleRecord>;
  /** Creates a schedule of a workflow named by `{ name, version }`, its input typed by the type argument. */
  create<I = unknown>(
    workflow: UntypedWorkflowRef,
    input: I,
    options: CreateScheduleOptions,
  ): Promise<ScheduleRecord>;
  async create(
    workflow: ScheduledWorkflow,
    input: unknown,
    options: CreateScheduleOptions,
  ): Promise<ScheduleRecord> {
    const store = await this.open('create');
    if (!workflow || typeof workflow.name !== 'string' || !Number.isInteger(workflow.version)) {
      throw new ConfigError('client.schedules.create needs a workflow definition or { name, version }');
    }
    // The check of client.start: every run the schedule fires would be refused by the workers.
    checkStartFields(workflow, {}, 'client.schedules.create');
    const scheduleId = options.scheduleId ?? `s-${randomUUID()}`;
    const spec = timing(options, 'client.schedules.create');
    if (spec === undefined)
      throw new ConfigError('client.schedules.create: give cron (with timeZone) or every');
    const definition = {
      scheduleId,
      workflow: workflow.name,
      version: workflow.version,
      input: this.sealed(encodable(await validatedInput(workflow, input), scheduleId), scheduleId),
      spec,
      catchup: { ...DEFAULT_CATCHUP, ...options.catchup },
      overlap: options.overlap ?? 'skip',
      jitterMs: options.jitter === undefined ? 0 : toMs(options.jitter, 'jitter'),
      paused: options.paused ?? false,
      ...(options.note !== undefined && { note: options.note }),
    };
    const now = await store.leases.now();
    const created = await store.schedules.create({ ...definition, ...freshState(definition, now) });
    if (!created.created) {
      throw new ConfigError(
        `client.schedules.create: schedule ${scheduleId} exists already (workflow ${created.schedule.workflow}); ` +
          'update it, or delete it first',
      );
    }
    return this.opened(created.schedule);
  }

  /** The schedule; NotFoundError when the store does not know it. */
  async get(scheduleId: string): Promise<ScheduleRecord> {
    const store = await this.open('get');
    const schedule = await store.schedules.get(scheduleId);
    if (schedule === undefined) throw notFound('get', scheduleId);
    return this.opened(schedule);
  }

  /** Schedules by id, in pages (`cursor`), filtered by workflow and paused. */
  async list(query: ScheduleQuery = {}): Promise<SchedulePage> {
    const page = await (await this.open('list')).schedules.list(query);
    return { ...page, schedules: page.schedules.map((schedule) => this.opened(schedule)) };
  }

  /** `input` sealed for schedule `scheduleId` when the client encrypts. */
  private sealed(input: unknown, scheduleId: string): unknown {
    return sealValue(input, scheduleSealId(scheduleId), 'schedule input', this.protection());
  }

  /** The schedule with its input opened, or left sealed when this client lacks the key it names. */
  private opened(schedule: ScheduleRecord): ScheduleRecord {
    if (!isSealedValue(schedule.input)) return schedule;
    const id = scheduleSealId(schedule.scheduleId);
    const open = () => openValue(schedule.input, id, 'schedule input', this.protection());
    return { ...schedule, input: unlessKeyMissing(open, schedule.input) };
  }

  /**
   * Changes a schedule. A new timing (or jitter) carries on from now: its next due time is the
   * first after now. Runs already started are untouched.
   */
  async update(scheduleId: string, update: ScheduleUpdate): Promise<ScheduleRecord> {
    const spec = timing(update, 'client.schedules.update');
    const jitterMs = update.jitter === undefined ? undefined : toMs(update.jitter, 'jitter');
    return this.change('update', scheduleId, async (current, now) => {
      const version = update.version ?? current.version;
      const input =
        update.input === undefined
          ? current.input
          : this.sealed(
              encodable(await validatedInput({ name: current.workflow, version }, update.input), scheduleId),
              scheduleId,
            );
      const next: NewSchedule = {
        ...current,
        version,
        input,
        spec: spec ?? current.spec,
        catchup: { ...current.catchup, ...update.catchup },
        overlap: update.overlap ?? current.overlap,
        jitterMs: jitterMs ?? current.jitterMs,
        ...(update.note !== undefined && { note: update.note }),
      };
      const retimed = spec !== undefined || (jitterMs !== undefined && jitterMs !== current.jitterMs);
      return retimed ? { ...next, ...freshState(next, now, current) } : next;
    });
  }

  /** Pauses a schedule: it starts nothing until resumed. True when it was running. */
  async pause(scheduleId: string): Promise<boolean> {
    let changed = false;
    await this.change('pause', scheduleId, async (current) => {
      changed = !current.paused;
      return { ...current, paused: true };
    });
    return changed;
  }

  /**
   * Resumes a paused schedule at its next due time after now: the due times that passed while it
   * was paused start no run. True when it was paused.
   */
  async resume(scheduleId: string): Promise<boolean> {
    let changed = false;
    await this.change('resume', scheduleId, async (current, now) => {
      changed = current.paused;
      if (!current.paused) return current;
      return { ...current, paused: false, ...freshState(current, now, current) };
    });
    return changed;
  }

  /** Deletes a schedule (its runs stay). False when the store did not know it. */
  async delete(scheduleId: string): Promise<boolean> {
    const store = await this.open('delete');
    return (await store.schedules.delete(scheduleId)).ok;
  }

  /** The next `count` due times of a schedule after now (store clock), jitter left out. */
  async upcoming(scheduleId: string, count = 5): Promise<number[]> {
    const schedule = await this.get(scheduleId);
    const times: number[] = [];
    let at = schedule.paused
      ? await (await this.open('upcoming')).leases.now()
      : (schedule.nextDueAt ?? null);
    if (schedule.paused && at !== null) at = nextDueAfter(schedule.spec, at);
    while (at !== null && times.length < count) {
      times.push(at);
      at = nextDueAfter(schedule.spec, at);
    }
    return times;
  }

  private async open(method: string): Promise<Store> {
    const store = this.requireStore(`schedules.${method}`);
    await this.connect();
    return store;
  }

  /** A read-modify-write of the schedule under its revision, again after losing to a firing. */
  private async change(
    method: string,
    scheduleId: string,
    modify: (current: NewSchedule, now: number) => Promise<NewSchedule>,
  ): Promise<ScheduleRecord> {
    const store = await this.open(method);
    for (let attempt = 1; ; attempt++) {
      const current = await store.schedules.get(scheduleId);
      if (current === undefined) throw notFound(method, scheduleId);
      const { revision, createdAt: _c, updatedAt: _u, ...fields } = current;
      const next = await modify(fields, await store.leases.now());
      const { scheduleId: _id, ...rest } = next;
      const write = await store.schedules.update(scheduleId, revision, rest);
      if (write.ok) return this.opened(write.schedule);
      if (write.reason === 'not-found') throw notFound(method, scheduleId);
      if (attempt >= CAS_ATTEMPTS) {
        throw new ConfigError(
          `client.schedules.${method}(${scheduleId}): the schedule kept changing under ${CAS_ATTEMPTS} attempts; try again`,
        );
      }
    }
  }
}

function notFound(method: string, scheduleId: string): NotFoundError {
  return new NotFoundError(
    `client.schedules.${method}(${scheduleId}): no schedule ${scheduleId} in the store`,
  );
}

/** The spec from `cron`/`timeZone`/`every`, checked; undefined when none is given. */
function timing(options: ScheduleTiming, where: string): ScheduleSpec | undefined {
  const { cron, timeZone, every } = options;
  if (cron !== undefined && every !== undefined)
    throw new ConfigError(`${where}: give cron or every, not both`);
  if (cron !== undefined) return checkScheduleSpec({ cron, timeZone: timeZone ?? 'UTC' });
  if (timeZone !== undefined) throw new ConfigError(`${where}: timeZone goes with cron`);
  if (every !== undefined) return checkScheduleSpec({ everyMs: toMs(every, 'every') });
  return undefined;
}

/** The input as JSON keeps it; ConfigError for a value JSON cannot hold. */
function encodable(input: unknown, scheduleId: string): unknown {
  let json: string | undefined;
  try {
    json = JSON.stringify(input);
  } catch (err) {
    throw new ConfigError(`schedule ${scheduleId}: its input is not JSON-serialisable`, { cause: err });
  }
  return json === undefined ? null : (JSON.parse(json) as unknown);
}
