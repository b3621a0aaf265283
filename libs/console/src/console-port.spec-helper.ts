/**
 * Ports for the consoles the specs start: the range given to this package's tests (8300-8399),
 * tried from a random point until one is free, so parallel spec files do not collide.
 */
import { createServer } from 'node:net';

export const CONSOLE_TEST_PORTS = { first: 8300, last: 8399 } as const;

function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** A port of the range nothing listens on right now. */
export async function freeConsolePort(): Promise<number> {
  const size = CONSOLE_TEST_PORTS.last - CONSOLE_TEST_PORTS.first + 1;
  const start = Math.floor(Math.random() * size);
  for (let i = 0; i < size; i++) {
    const port = CONSOLE_TEST_PORTS.first + ((start + i) % size);
    if (await free(port)) return port;
  }
  throw new Error(`no free port in ${CONSOLE_TEST_PORTS.first}-${CONSOLE_TEST_PORTS.last}`);
}
