/**
 * Prefixes for tests on the shared NATS server: one family per spec file, so afterAll deletes
 * every stream the file created, and nothing any other suite created.
 */
import { randomBytes } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';

export interface TestPrefixes {
  /** A fresh prefix in this file's family. */
  next(): string;
  /** Deletes every stream of the family. */
  cleanUp(): Promise<void>;
}

export function testPrefixes(servers: string): TestPrefixes {
  const family = `t${randomBytes(5).toString('hex')}`;
  let count = 0;
  return {
    next: () => `${family}-${++count}`,
    cleanUp: async () => {
      const nc = await connect({ servers });
      try {
        const jsm = await jetstreamManager(nc);
        const doomed: string[] = [];
        for await (const name of jsm.streams.names()) {
          if (name.startsWith(`${family.toUpperCase()}-`)) doomed.push(name);
        }
        await Promise.all(doomed.map((name) => jsm.streams.delete(name)));
      } finally {
        await nc.close();
      }
    },
  };
}
