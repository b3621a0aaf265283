/**
 * How the executor's loop sleeps between turns: whatever changes its state (a step settled, an
 * append landed, a cancel, a hand-off) calls `notify()`, and the loop awaits `next()`. A notify
 * with nobody waiting is kept, so the next `next()` returns at once and no change is missed.
 */
export class LoopWake {
  private dirty = false;
  private waiter: (() => void) | undefined;

  notify(): void {
    this.dirty = true;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }

  /** Resolves at the next notify, or at once when one came since the last `next()`. */
  next(): Promise<void> {
    if (this.dirty) {
      this.dirty = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.waiter = () => {
        this.dirty = false;
        resolve();
      };
    });
  }

  /** `next()`, or `delayMs` later, whichever comes first. */
  async nextOrAfter(delayMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, delayMs)))),
      this.next(),
    ]);
    clearTimeout(timer);
  }
}
