/**
 * A one-line progress bar on stderr (the table and JSON path go to stdout): redrawn in place on a
 * terminal, one line per finished step otherwise (CI logs).
 */
import type { Progress } from './types.js';

export function progressBar(stream: NodeJS.WriteStream = process.stderr): Progress {
  const tty = stream.isTTY === true;
  let label = '';
  let total = 0;
  let startedAt = 0;
  let lastDraw = 0;
  const draw = (done: number): void => {
    const width = 30;
    const fraction = total > 0 ? Math.min(1, done / total) : 0;
    const filled = Math.round(fraction * width);
    const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
    stream.write(
      `\r${label.padEnd(34)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${seconds}s\x1b[K`,
    );
  };
  return {
    start(name, count) {
      label = name;
      total = count;
      startedAt = Date.now();
      lastDraw = 0;
      if (tty) draw(0);
    },
    tick(done) {
      if (!tty || Date.now() - lastDraw < 100) return;
      lastDraw = Date.now();
      draw(done);
    },
    done(summary) {
      const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
      const line = `${label.padEnd(34)} done in ${seconds}s${summary ? `: ${summary}` : ''}`;
      stream.write(tty ? `\r${line}\x1b[K\n` : `${line}\n`);
    },
    log(line) {
      stream.write(tty ? `\r${line}\x1b[K\n` : `${line}\n`);
    },
  };
}

/** A progress that prints nothing (tests). */
export const silentProgress: Progress = {
  start: () => undefined,
  tick: () => undefined,
  done: () => undefined,
  log: () => undefined,
};
