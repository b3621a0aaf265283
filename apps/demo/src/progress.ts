/**
 * The live progress display, dependency-free.
 *
 * On a terminal it redraws a small status area in place (ANSI cursor movement); log lines are
 * printed above it. When stdout is not a terminal (CI, a pipe, a file) it prints one plain
 * progress line every 500 ms instead, because cursor codes would only garble the log.
 */

/** One worker's line in the display. */
export interface WorkerProgress {
  id: string;
  crashed: boolean;
  /** Runs it executes now (live), or owned when it crashed. */
  owned: number;
  claimed: number;
  completed: number;
}

/** What the display shows at one instant. */
export interface ProgressSnapshot {
  elapsedMs: number;
  total: number;
  completed: number;
  inFlight: number;
  suspended: number;
  resumed: number;
  workers: WorkerProgress[];
}

/** `auto` picks `tty` when stdout is a terminal, else `plain`; `silent` prints nothing. */
export type OutputMode = 'auto' | 'tty' | 'plain' | 'silent';

/** Where the demo prints: log lines and the live status. */
export interface Reporter {
  /** Prints a line that stays (above the status area on a terminal). */
  log(line: string): void;
  /** Starts refreshing the status from `snapshot`. */
  start(snapshot: () => ProgressSnapshot): void;
  /** Draws the final status and stops refreshing. Safe to call twice. */
  stop(): void;
}

const TTY_REFRESH_MS = 100;
const PLAIN_REFRESH_MS = 500;
const BAR_WIDTH = 24;

/** Creates the reporter for `mode`, writing with `write` (stdout by default). */
export function createReporter(mode: OutputMode, write: (text: string) => void = stdoutWrite): Reporter {
  const resolved = mode === 'auto' ? (process.stdout.isTTY ? 'tty' : 'plain') : mode;
  if (resolved === 'silent') return { log: () => undefined, start: () => undefined, stop: () => undefined };
  return resolved === 'tty' ? new TtyReporter(write) : new PlainReporter(write);
}

function stdoutWrite(text: string): void {
  process.stdout.write(text);
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

function workerLabel(w: WorkerProgress): string {
  return w.crashed ? `${w.id} CRASHED (owned ${w.owned})` : `${w.id} ${w.owned} running`;
}

/** Refreshes on an unref'd interval so the display never keeps the process alive. */
abstract class IntervalReporter implements Reporter {
  private timer: NodeJS.Timeout | undefined;
  private snapshot: (() => ProgressSnapshot) | undefined;

  constructor(
    protected readonly write: (text: string) => void,
    private readonly refreshMs: number,
  ) {}

  abstract log(line: string): void;
  protected abstract draw(snapshot: ProgressSnapshot): void;

  start(snapshot: () => ProgressSnapshot): void {
    this.snapshot = snapshot;
    this.draw(snapshot());
    this.timer = setInterval(() => this.draw(snapshot()), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (!this.snapshot) return;
    clearInterval(this.timer);
    this.draw(this.snapshot());
    this.finish();
    this.snapshot = undefined;
  }

  protected finish(): void {}
}

/** One plain line per refresh; nothing is ever overwritten. */
class PlainReporter extends IntervalReporter {
  constructor(write: (text: string) => void) {
    super(write, PLAIN_REFRESH_MS);
  }

  log(line: string): void {
    this.write(`${line}\n`);
  }

  protected draw(s: ProgressSnapshot): void {
    const workers = s.workers.map(workerLabel).join(', ');
    this.write(
      `[${seconds(s.elapsedMs).padStart(6)}] completed ${s.completed}/${s.total}, in flight ${s.inFlight}, ` +
        `suspended ${s.suspended}, resumed ${s.resumed} | ${workers}\n`,
    );
  }
}

/** A status area redrawn in place; log lines scroll above it. */
class TtyReporter extends IntervalReporter {
  private drawnLines = 0;
  private last: ProgressSnapshot | undefined;

  constructor(write: (text: string) => void) {
    super(write, TTY_REFRESH_MS);
  }

  log(line: string): void {
    this.clear();
    this.write(`${line}\n`);
    if (this.last) this.draw(this.last);
  }

  protected draw(s: ProgressSnapshot): void {
    this.last = s;
    const done = s.total === 0 ? 0 : Math.round((s.completed / s.total) * BAR_WIDTH);
    const bar = `${'#'.repeat(done)}${'.'.repeat(BAR_WIDTH - done)}`;
    const lines = [
      `  [${bar}] ${s.completed}/${s.total} completed   ${seconds(s.elapsedMs)}`,
      `  in flight ${s.inFlight}   suspended (awaiting review) ${s.suspended}   resumed after crash ${s.resumed}`,
      ...s.workers.map((w) =>
        w.crashed
          ? `  ${w.id}  CRASHED  owned ${w.owned} runs when it died; claimed ${w.claimed}, completed ${w.completed}`
          : `  ${w.id}  running  ${String(w.owned).padStart(3)} in flight; claimed ${w.claimed}, completed ${w.completed}`,
      ),
    ];
    this.clear();
    // A line wider than the terminal would wrap and break the cursor arithmetic, so cut it (a
    // pseudo-terminal without a size reports 0 columns).
    const width = Math.max(20, (process.stdout.columns || 120) - 1);
    // \x1b[2K clears the line, so a shorter line leaves no tail of the longer one before it.
    this.write(lines.map((l) => `\x1b[2K${l.slice(0, width)}\n`).join(''));
    this.drawnLines = lines.length;
  }

  /** Moves the cursor back to the top of the status area and erases it. */
  private clear(): void {
    if (this.drawnLines > 0) this.write(`\x1b[${this.drawnLines}F\x1b[0J`);
    this.drawnLines = 0;
  }

  protected override finish(): void {
    // Leave the last status on screen; the summary follows below it.
    this.drawnLines = 0;
  }
}
