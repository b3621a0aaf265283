/**
 * PresenceStore on Redis: a registered worker is alive exactly while its presence connection,
 * a dedicated connection carrying a client name, is connected to the server.
 *
 * Invariants:
 * 1. A worker's record (`workers` hash: workerId -> '<client name> <nonce> <server run_id>')
 *    names the client whose presence in CLIENT LIST proves the worker alive. ioredis sets the
 *    name again on every reconnect (`connectionName`), and the record is written again on every
 *    'ready', so a restart of Redis, or a dead-worker scan that forgot the worker during an
 *    outage, is repaired.
 * 2. CLIENT cannot run inside a script, so liveness is read first (HGETALL + CLIENT LIST in one
 *    round trip) and the reaping script then acts only on records still equal to what was read:
 *    a worker that re-registered in between (new nonce) is alive and left alone.
 * 3. After a restart or failover all connections are new, so for `presenceGraceMs` after the
 *    server started, or after the first dead-worker scan on a new instance (a promoted replica
 *    started long ago), a worker recorded on an earlier server instance is not judged yet.
 * 4. A dead worker's held leases are found through its owner set, never by a scan of all leases;
 *    it is forgotten once that set is empty.
 * 5. The dead-worker scan reads every record and every client (O(fleet)), so workers take it in
 *    turns ({@link PresenceRegistry.takeScanTurn}: one key, SET with PX): one scan per period for
 *    the whole fleet instead of one per worker, which would grow with the fleet's square. A turn
 *    is tied to its holder's presence connection: the key names that connection's client id, and
 *    an asker refused by the same holder as last time asks `CLIENT LIST ID` about it in the same
 *    round trip (O(1)); a holder whose connection is gone loses the turn at once instead of when
 *    it runs out (up to 1.5 scan periods, the larger part of a failover when the victim held it).
 *    A wrong verdict (a client id reused after a restart) costs one scan run twice, which is safe.
 * 6. So does listing the live workers for the fleet's member list: the membership turn's holder
 *    lists them and publishes the list in one hash ({@link PresenceRegistry.publishMembership});
 *    every other worker reads its generation and the turn's key in one script call, and the list
 *    itself only when the generation moved.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createHash, randomUUID } from 'node:crypto';
import type { BatonError } from '@baton/core';
import type { OperationsOf, PresenceStore, PublishedMembership, ScanTurn } from '@baton/core/adapter';
import { createConnection, type StoreConnection } from './connection.js';
import { pipelineResults, str, type StoreContext } from './context.js';
import { redisCommandRefused, refusedCommand, toStoreError } from './errors.js';
import type { KeyLayout } from './keys.js';
import type { ResolvedRedisStoreOptions } from './options.js';
import { defineScripts, type ScriptRunner } from './scripts.js';

/** How often a re-registration after a reconnect is tried before waiting for the next one. */
const REREGISTER_ATTEMPTS = 3;
const REREGISTER_DELAY_MS = 250;

interface Registration {
  readonly workerId: string;
  readonly clientName: string;
  readonly connection: StoreConnection;
  /** Scripts over the presence connection. */
  readonly run: ScriptRunner;
  /** False once unregistered or closed: a reconnect must not write the record back. */
  active: boolean;
  /** The presence connection's client id on the server (CLIENT LIST), read at every record(). */
  clientId: string | undefined;
}

/** The client name of a worker's presence connection: stable, unique per prefix and worker id. */
export function presenceClientName(keyPrefix: string, workerId: string): string {
  // CLIENT SETNAME refuses spaces and control characters; a lossy name gets a hash of the
  // original, so two worker ids never share a name.
  const safe = workerId.replace(/[^A-Za-z0-9._:@-]/g, '_').slice(0, 64);
  const suffix = safe === workerId ? '' : `-${shortHash(workerId)}`;
  return `baton-${shortHash(keyPrefix)}-${safe}${suffix}`;
}

function shortHash(text: string): string {
  return createHash('sha1').update(text).digest('hex').slice(0, 8);
}

export class PresenceRegistry {
  private readonly registrations = new Map<string, Promise<Registration>>();
  /** Per scan, the holder's turn value the last refused ask found: the next ask probes it. */
  private readonly refusedBy = new Map<string, string>();

  constructor(
    private readonly options: ResolvedRedisStoreOptions,
    private readonly keys: KeyLayout,
  ) {}

  async register(workerId: string): Promise<void> {
    let pending = this.registrations.get(workerId);
    if (pending === undefined) {
      pending = this.openRegistration(workerId);
      this.registrations.set(workerId, pending);
      const opening = pending;
      opening.catch(() => {
        if (this.registrations.get(workerId) === opening) this.registrations.delete(workerId);
      });
    }
    await this.record(await pending);
  }

  async unregister(ctx: StoreContext, workerId: string): Promise<void> {
    await ctx.redis.hdel(this.keys.workers, workerId);
    const pending = this.registrations.get(workerId);
    this.registrations.delete(workerId);
    const registration = await pending?.catch(() => undefined);
    if (registration !== undefined) {
      registration.active = false;
      await registration.connection.close();
    }
  }

  async liveWorkers(ctx: StoreContext): Promise<string[]> {
    const { records, liveNames } = await this.readPresence(ctx, 'presence.live');
    return Object.entries(records)
      .filter(([, record]) => liveNames.has(clientNameOf(record)))
      .map(([workerId]) => workerId);
  }

  async reapDeadWorkers(ctx: StoreContext, limit: number, reclaimAfterMs: number): Promise<string[]> {
    const { records, liveNames } = await this.readPresence(ctx, 'presence.reapDead');
    const dead = Object.entries(records).filter(([, record]) => !liveNames.has(clientNameOf(record)));
    if (dead.length === 0) return [];
    const reply = (await ctx.run(
      'reap-dead-workers',
      [this.keys.workers, this.keys.presenceInstance],
      [
        this.keys.prefix,
        Math.max(0, Math.floor(limit)),
        reclaimAfterMs,
        this.options.presenceGraceMs,
        ...dead.flat(),
      ],
    )) as unknown[];
    return reply.map(str);
  }

  /**
   * The turn of a fleet-wide scan (invariant 5): one round trip, O(1) on the server, and a second
   * only to take the turn over from a holder found dead.
   */
  async takeScanTurn(ctx: StoreContext, scan: string, workerId: string, turnMs: number): Promise<ScanTurn> {
    const keys = [this.keys.scanTurn(scan), this.keys.fleetExpiry];
    const args = [await this.turnValue(workerId), Math.max(1, Math.ceil(turnMs))];
    const seen = this.refusedBy.get(scan);
    const probed = seen === undefined ? undefined : parseTurnValue(seen);
    const [reply, clients] = await Promise.all([
      ctx.run('take-scan-turn', keys, [...args, '']) as Promise<unknown[]>,
      probed?.clientId === undefined
        ? undefined
        : ctx.redis.call('CLIENT', 'LIST', 'ID', probed.clientId).then(
            (list) => String(list),
            () => undefined,
          ),
    ]);
    let [held, workers, holder] = reply;
    if (
      Number(held) !== 1 &&
      seen !== undefined &&
      probed !== undefined &&
      str(holder) === seen &&
      clients !== undefined &&
      clientIdOf(clients, presenceClientName(this.options.keyPrefix, probed.workerId)) === undefined
    ) {
      // The same holder as last time, and its presence connection is gone: take the turn from it.
      [held, workers, holder] = (await ctx.run('take-scan-turn', keys, [...args, seen])) as unknown[];
    }
    if (Number(held) === 1) this.refusedBy.delete(scan);
    else if (holder !== null && holder !== undefined) this.refusedBy.set(scan, str(holder));
    return { held: Number(held) === 1, workers: Number(workers) };
  }

  /** What a turn's key holds for `workerId`: its presence connection's client id when it has one. */
  private async turnValue(workerId: string): Promise<string> {
    const registration = await this.registrations.get(workerId)?.catch(() => undefined);
    const clientId = registration?.active === true ? registration.clientId : undefined;
    return clientId === undefined ? workerId : `@${clientId} ${workerId}`;
  }

  /** Publishes the member list (invariant 6), sorted and without repeats; returns its generation. */
  async publishMembership(ctx: StoreContext, members: readonly string[]): Promise<number> {
    const list = [...new Set(members)].sort();
    const generation = await ctx.run('publish-membership', [this.keys.membership], [JSON.stringify(list)]);
    return Number(str(generation));
  }

  /** The published member list (invariant 6): one script call, O(1) unless the list changed. */
  async readMembership(
    ctx: StoreContext,
    knownGeneration: number,
    turn: string,
  ): Promise<PublishedMembership> {
    const [generation, list, free] = (await ctx.run(
      'read-membership',
      [this.keys.membership, this.keys.scanTurn(turn)],
      [String(Math.floor(knownGeneration))],
    )) as [unknown, unknown, number];
    const published = Number(str(generation));
    return {
      generation: published,
      ...(list !== null && list !== undefined && { members: JSON.parse(str(list)) as string[] }),
      turnFree: Number(free) === 1,
    };
  }

  /** Closes every presence connection: to other workers, these workers are now dead. */
  async close(): Promise<void> {
    const pending = [...this.registrations.values()];
    this.registrations.clear();
    await Promise.allSettled(
      pending.map(async (opening) => {
        const registration = await opening;
        registration.active = false;
        await registration.connection.close();
      }),
    );
  }

  private async openRegistration(workerId: string): Promise<Registration> {
    const clientName = presenceClientName(this.options.keyPrefix, workerId);
    const connection = createConnection(this.options, { connectionName: clientName });
    try {
      await connection.open();
    } catch (err) {
      await connection.close();
      throw err;
    }
    const registration: Registration = {
      workerId,
      clientName,
      connection,
      run: defineScripts(connection.redis),
      active: true,
      clientId: undefined,
    };
    // 'ready' fires again after every reconnect (the first one has passed already).
    connection.redis.on('ready', () => void this.reregister(registration));
    return registration;
  }

  private async reregister(registration: Registration): Promise<void> {
    for (let attempt = 1; attempt <= REREGISTER_ATTEMPTS && registration.active; attempt++) {
      try {
        await this.record(registration);
        return;
      } catch {
        // A failure here has no caller to report to; the next attempt or the next reconnect's
        // 'ready' tries again, and lease expiry remains the backstop meanwhile.
        await sleep(REREGISTER_DELAY_MS, undefined, { ref: false });
      }
    }
  }

  /**
   * Writes the record over the presence connection itself and checks that the server took the
   * client name (ioredis ignores a refused CLIENT SETNAME); the commands are sent at once.
   */
  private async record(registration: Registration): Promise<void> {
    const { workerId, clientName, connection, run } = registration;
    const context = { url: this.options.displayUrl, operation: 'presence.register' };
    // Settled, not Promise.all: the record may only be removed after its write has finished.
    const [name, recorded, listed] = await Promise.allSettled([
      connection.redis.client('GETNAME'),
      run('record-worker', [this.keys.workers], [workerId, clientName, randomUUID()]),
      // This connection's client id, for the scan turns (invariant 5); CLIENT ID would need one
      // more ACL grant. Once per (re)connection, so its O(clients) cost does not recur.
      connection.redis.call('CLIENT', 'LIST', 'TYPE', 'normal'),
    ]);
    if (name.status === 'fulfilled' && recorded.status === 'fulfilled' && name.value === clientName) {
      registration.clientId =
        listed.status === 'fulfilled' ? clientIdOf(String(listed.value), clientName) : undefined;
      return;
    }
    await connection.redis.hdel(this.keys.workers, workerId).catch(() => undefined);
    if (name.status === 'rejected') throw presenceError(name.reason, context);
    if (recorded.status === 'rejected') throw presenceError(recorded.reason, context);
    throw redisCommandRefused(
      'client|setname',
      `redis store registerWorker at ${context.url}: the server did not take the presence connection's ` +
        `client name (CLIENT SETNAME); grant the store's ACL user +client|setname (or +client)`,
    );
  }

  /** The records and the names of connected clients, in one round trip. */
  private async readPresence(ctx: StoreContext, operation: string) {
    let results: unknown[];
    try {
      results = pipelineResults(
        await ctx.redis
          .pipeline([
            ['hgetall', this.keys.workers],
            ['client', 'LIST', 'TYPE', 'normal'],
          ])
          .exec(),
      );
    } catch (err) {
      throw presenceError(err, { url: this.options.displayUrl, operation });
    }
    const [records, list] = results as [Record<string, string>, string];
    const liveNames = new Set<string>();
    for (const line of list.split('\n')) {
      const name = /(?:^| )name=(\S+)/.exec(line)?.[1];
      if (name !== undefined) liveNames.add(name);
    }
    return { records, liveNames };
  }
}

function clientNameOf(record: string): string {
  return record.split(' ', 1)[0] ?? record;
}

/** The worker and presence client id a turn value names (take-scan-turn.lua); no id when bare. */
function parseTurnValue(value: string): { workerId: string; clientId?: string } {
  const match = /^@(\d+) ([\s\S]*)$/.exec(value);
  return match === null ? { workerId: value } : { workerId: match[2]!, clientId: match[1]! };
}

/** The id of the client named `name` in a CLIENT LIST reply; undefined unless exactly one. */
function clientIdOf(list: string, name: string): string | undefined {
  const ids = list
    .split('\n')
    .filter((line) => line.includes(` name=${name} `))
    .map((line) => /(?:^|\s)id=(\d+)/.exec(line)?.[1]);
  return ids.length === 1 ? ids[0] : undefined;
}

/** Like toStoreError, but says why presence needs the CLIENT command when it is refused. */
function presenceError(err: unknown, context: { url: string; operation: string }): BatonError {
  const message = err instanceof Error ? err.message : String(err);
  if (!message.includes('NOPERM')) return toStoreError(err, context);
  const command = refusedCommand(message) ?? 'client';
  return redisCommandRefused(
    command,
    `redis store ${context.operation} at ${context.url}: the Redis user may not run ${command.replace('|', ' ').toUpperCase()}, ` +
      `which presence needs to tell live workers from dead ones; grant the store's ACL user +${command} (or +client)`,
    { cause: err },
  );
}

/**
 * `store.presence` on the connection, answered by this store's registrations (the sessions bound
 * to each worker's presence); watchMembership, a subscription, is the store's.
 */
export function presenceOperations(registry: PresenceRegistry): OperationsOf<StoreContext, PresenceStore> {
  return {
    register: (_ctx, workerId) => registry.register(workerId),
    unregister: (ctx, workerId) => registry.unregister(ctx, workerId),
    reapDead: (ctx, limit, reclaimAfterMs) => registry.reapDeadWorkers(ctx, limit, reclaimAfterMs),
    live: (ctx) => registry.liveWorkers(ctx),
    takeScanTurn: (ctx, scan, workerId, turnMs) => registry.takeScanTurn(ctx, scan, workerId, turnMs),
    publishMembership: (ctx, members) => registry.publishMembership(ctx, members),
    readMembership: (ctx, knownGeneration, turn) => registry.readMembership(ctx, knownGeneration, turn),
  };
}
