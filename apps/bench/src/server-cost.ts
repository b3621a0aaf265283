/**
 * The arithmetic of "CPU per durable step": two readings of each server (server-probes.ts) around
 * a measured window, and the worker processes' CPU over the same window, divided by the durable
 * steps the window completed (runs × steps per run). Kept free of I/O so it can be specified.
 */
export type ServerKind = 'redis' | 'nats' | 'postgres' | 'kafka';

/** One reading of a server (server-probes.ts takes them). */
export interface ServerReading {
  /** Date.now() when it was taken. */
  at: number;
  /** CPU seconds of the server's processes so far; NaN when they cannot be read. */
  cpuSeconds: number;
  /** Processes summed into cpuSeconds. */
  processes: number;
  /** The server's own counters, by name (server-probes.ts names them). */
  counters: Record<string, number>;
}

/** What a server is to the measured system. `bus+store`: one server is both (Redis bus and store; BullMQ's Redis). */
export type ServerRole = 'bus' | 'store' | 'bus+store';

/** One server over one measured window. */
export interface ServerWindow {
  role: ServerRole;
  server: ServerKind;
  /** Started by the bench for this run (its load is the bench's alone), or shared with others. */
  private: boolean;
  /** The server's root process, when found. */
  pid: number | null;
  /** Processes whose CPU was summed at the window's end (PostgreSQL: the postmaster and its children). */
  processes: number;
  /** Wall seconds between the two readings. */
  seconds: number;
  /** User + system CPU seconds of the server's processes over the window; null when unreadable. */
  cpuSeconds: number | null;
  /** cpuSeconds per durable step, in microseconds. */
  cpuMicrosPerStep: number | null;
  /**
   * A shared server only: its CPU seconds per wall second just before the window, with the bench's
   * workers idle (everyone else's load, and the idle workers'); null for a private server.
   */
  backgroundCpuPerSecond: number | null;
  /** A shared server only: cpuMicrosPerStep less that background rate over the window's length. */
  netCpuMicrosPerStep: number | null;
  /** Why the CPU could not be read (the server is not on this machine, no process found). */
  unreadable: string | null;
  /** The server's own counters' increments over the window (server-probes.ts names them). */
  counters: Record<string, number>;
  /**
   * The same per durable step. Redis: `commands`, `infoCpuMicros` (INFO cpu, the cross-check of
   * cpuMicrosPerStep); PostgreSQL: `transactions` (given a transaction id: the ones that wrote),
   * `commits` and `rollbacks` (pg_stat_database, reads too, lagging up to a second or so),
   * `walBytes`; private NATS: `msgsIn`, `msgsOut`.
   */
  perStep: Record<string, number>;
}

/** The whole system's CPU per durable step over one window. */
export interface SystemCpu {
  /** Durable steps the window completed: the divisor of every "per step". */
  steps: number;
  workerMicrosPerStep: number;
  /** Null when unreadable, or when the bus is the store's server (then it is in storeMicrosPerStep). */
  busMicrosPerStep: number | null;
  storeMicrosPerStep: number | null;
  /** One server is both bus and store: its whole CPU is in storeMicrosPerStep. */
  busIsStore: boolean;
  /** Worker + bus + store; null when a server's CPU could not be read. */
  totalMicrosPerStep: number | null;
  servers: ServerWindow[];
}

export interface ServerMeta {
  role: ServerRole;
  kind: ServerKind;
  private: boolean;
  pid: number | undefined;
  unreadable: string | undefined;
}

/** Microseconds per step of `seconds` over `steps`; NaN/∞ guarded to null. */
export function microsPerStep(seconds: number, steps: number): number | null {
  if (!Number.isFinite(seconds) || !(steps > 0)) return null;
  return (seconds * 1e6) / steps;
}

/**
 * A server's window from its readings at the window's start and end. `background`, for a shared
 * server, is a pair of readings just before the window with the workers idle.
 */
export function serverWindow(
  meta: ServerMeta,
  before: ServerReading,
  after: ServerReading,
  steps: number,
  background?: { before: ServerReading; after: ServerReading },
): ServerWindow {
  const seconds = (after.at - before.at) / 1000;
  const cpu = after.cpuSeconds - before.cpuSeconds;
  const cpuSeconds = meta.unreadable === undefined && Number.isFinite(cpu) ? cpu : null;
  const counters: Record<string, number> = {};
  const perStep: Record<string, number> = {};
  for (const [name, end] of Object.entries(after.counters)) {
    const start = before.counters[name];
    if (start === undefined || !Number.isFinite(start) || !Number.isFinite(end)) continue;
    // The probe's INFO of the `before` reading is counted among the server's commands.
    const delta = name === 'commands' && meta.kind === 'redis' ? end - start - 1 : end - start;
    counters[name] = delta;
    if (name === 'infoCpuSeconds') perStep.infoCpuMicros = (delta * 1e6) / steps;
    else perStep[name] = delta / steps;
  }
  let backgroundCpuPerSecond: number | null = null;
  let netCpuMicrosPerStep: number | null = null;
  if (!meta.private && background !== undefined && cpuSeconds !== null) {
    const idleSeconds = (background.after.at - background.before.at) / 1000;
    const idleCpu = background.after.cpuSeconds - background.before.cpuSeconds;
    if (idleSeconds > 0 && Number.isFinite(idleCpu)) {
      backgroundCpuPerSecond = idleCpu / idleSeconds;
      netCpuMicrosPerStep = microsPerStep(cpuSeconds - backgroundCpuPerSecond * seconds, steps);
    }
  }
  return {
    role: meta.role,
    server: meta.kind,
    private: meta.private,
    pid: meta.pid ?? null,
    processes: after.processes,
    seconds,
    cpuSeconds,
    cpuMicrosPerStep: cpuSeconds === null ? null : microsPerStep(cpuSeconds, steps),
    backgroundCpuPerSecond,
    netCpuMicrosPerStep,
    unreadable:
      meta.unreadable ?? (cpuSeconds === null ? 'the process could not be read at both ends' : null),
    counters,
    perStep,
  };
}

/** Worker, bus and store per step, and their total, from the worker CPU and the servers' windows. */
export function systemCpu(steps: number, workerCpuSeconds: number, servers: ServerWindow[]): SystemCpu {
  const workerMicrosPerStep = microsPerStep(workerCpuSeconds, steps) ?? NaN;
  const both = servers.find((s) => s.role === 'bus+store');
  const bus = both ? undefined : servers.find((s) => s.role === 'bus');
  const store = both ?? servers.find((s) => s.role === 'store');
  const busMicrosPerStep = bus?.cpuMicrosPerStep ?? null;
  const storeMicrosPerStep = store?.cpuMicrosPerStep ?? null;
  const parts = both ? [storeMicrosPerStep] : [busMicrosPerStep, storeMicrosPerStep];
  const totalMicrosPerStep =
    parts.every((p) => p !== null) && Number.isFinite(workerMicrosPerStep)
      ? workerMicrosPerStep + parts.reduce<number>((sum, p) => sum + p!, 0)
      : null;
  return {
    steps,
    workerMicrosPerStep,
    busMicrosPerStep,
    storeMicrosPerStep,
    busIsStore: both !== undefined,
    totalMicrosPerStep,
    servers,
  };
}
