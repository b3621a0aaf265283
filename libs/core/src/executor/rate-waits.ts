/**
 * Steps a rate limit refused, each waiting until the time the store said before asking again.
 * Such a wait is neither journaled nor a step: it takes no sequence number and leaves nothing a
 * replay could disagree with, since the step itself is journaled only once it has run. It is not
 * work in flight either, so the run may suspend (or lend its worker slot) while only waits remain.
 */
export interface RateWait {
  /** When to ask again, on the host's clock. */
  askAt: number;
  /** Asks the store again (the step's gate). */
  ask(): void;
  /** Rejects the step's promise (a cancel). */
  reject(error: unknown): void;
}

export class RateWaits {
  private readonly waits = new Map<number, RateWait>();

  get size(): number {
    return this.waits.size;
  }

  add(seq: number, wait: RateWait): void {
    this.waits.set(seq, wait);
  }

  /** Removes and returns the waits due at `now`, in step order. */
  takeDue(now: number): RateWait[] {
    const due: RateWait[] = [];
    for (const [seq, wait] of [...this.waits].sort((a, b) => a[0] - b[0])) {
      if (wait.askAt > now) continue;
      this.waits.delete(seq);
      due.push(wait);
    }
    return due;
  }

  /** The earliest time one of them asks again, or null with none. */
  earliest(): number | null {
    let earliest: number | null = null;
    for (const wait of this.waits.values())
      if (earliest === null || wait.askAt < earliest) earliest = wait.askAt;
    return earliest;
  }

  rejectAll(error: unknown): void {
    for (const wait of this.waits.values()) wait.reject(error);
    this.waits.clear();
  }
}
