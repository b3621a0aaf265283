/**
 * The conformance suite again, as an ACL user with only the commands and keys the README lists,
 * on a private redis-server: proves that list complete (the shared server's ACLs are never touched).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { Redis } from 'ioredis';
import { describeStoreConformance } from '@baton/testing';
import { startPrivateRedis, type PrivateServer } from '@baton/testing/servers';
import { redisStore } from './index.js';

/** The README's list, verbatim. */
const README_ACL = [
  '+eval',
  '+evalsha',
  '+time',
  '+publish',
  '+subscribe',
  '+unsubscribe',
  '+exists',
  '+get',
  '+set',
  '+del',
  '+hget',
  '+hmget',
  '+hgetall',
  '+hset',
  '+hsetnx',
  '+hdel',
  '+hincrby',
  '+sadd',
  '+srem',
  '+scard',
  '+srandmember',
  '+zadd',
  '+zrem',
  '+zrangebyscore',
  '+rpush',
  '+lrange',
  '+lindex',
  '+llen',
  '+zscore',
  '+zcard',
  '+zrevrangebyscore',
  '+zrangebylex',
  '+scan',
  '+pexpire',
  '+client|setname',
  '+client|getname',
  '+client|list',
  '+info',
  '+select',
  '+quit',
  '+wait',
];

let server: PrivateServer;
beforeAll(async () => {
  server = await startPrivateRedis();
  const admin = new Redis(server.port, '127.0.0.1');
  await admin.acl('SETUSER', 'baton', 'on', '>baton-pw', '~baton-*', '&baton-*', ...README_ACL);
  admin.disconnect();
});
afterAll(() => server?.dispose());

const store = (keyPrefix: string) =>
  redisStore({ url: `redis://baton:baton-pw@127.0.0.1:${server.port}/1`, keyPrefix });

describeStoreConformance('redis as a least-privilege ACL user', () => store(`baton-${randomUUID()}:`), {
  pair: () => {
    const keyPrefix = `baton-${randomUUID()}:`;
    return [store(keyPrefix), store(keyPrefix)];
  },
});
