/**
 * In-process stand-ins for a process dying: wrap the transport and store a worker uses, and
 * `sever()` makes every later call on them hang forever, as if the process had been SIGKILLed
 * between two instructions. Nothing the worker does after that reaches the shared adapters:
 * its leases stop being renewed and expire, its unacked messages are redelivered.
 *
 * Import from `@baton/testing/severable`. Only for the embedded demo and unit tests; crash tests on real servers kill real processes.
 */
import type { Delivery, Store, Transport } from '@baton/core/adapter';
import { wrapCalls } from '@baton/core/runtime';

export interface Severable<T> {
  /** The wrapped adapter to hand to the worker. */
  readonly adapter: T;
  /** Cuts the adapter off: calls in flight never settle, later calls hang. */
  sever(): void;
  readonly severed: boolean;
}

const hang = (): Promise<never> => new Promise<never>(() => undefined);

/** A call with a cut of its own: `call` makes it, `severed` says whether the process "died" yet. */
type OwnCut = (call: () => unknown, severed: () => boolean) => unknown;

/**
 * `target` with every call cut off at sever(), those of its capabilities too (the bus's run queue,
 * journal, dead letters and group log; the store's leases, control, checkpoints, runs, … and
 * journal index: core's `wrapCalls` walks them), so a "dead" worker reaches nothing through any of
 * them. `own` holds the calls cut another way, by name (`runQueue.fetch`).
 */
function severable<T extends object>(target: T, own: ReadonlyMap<string, OwnCut> = new Map()): Severable<T> {
  let severed = false;
  const isSevered = (): boolean => severed;
  const adapter = wrapCalls(target, (name, call) => {
    const cut = own.get(name);
    if (cut !== undefined) return cut(call, isSevered);
    if (severed) return hang();
    const result = call();
    if (result instanceof Promise) {
      // A reply that arrives after the "crash" is never seen by the dead process.
      return result.then(
        (v: unknown) => (severed ? hang() : v),
        (e: unknown) => (severed ? hang() : Promise.reject(e)),
      );
    }
    return result;
  });
  return {
    adapter,
    sever: () => {
      severed = true;
    },
    get severed() {
      return severed;
    },
  };
}

/**
 * The run queue's fetch, cut off: nothing is fetched after sever(), and the acks and naks of what
 * was fetched before never reach the bus either.
 */
const cutFetch: OwnCut = async (call, severed) => {
  if (severed()) return hang();
  const deliveries = await (call() as Promise<Delivery[]>);
  if (severed()) return hang();
  return deliveries.map((d) => ({
    ...d,
    ack: () => (severed() ? hang() : d.ack()),
    nak: (delayMs?: number) => (severed() ? hang() : d.nak(delayMs)),
  }));
};

/** Wraps a transport so that a simulated crash cuts the worker off from it. */
export function severableTransport(transport: Transport): Severable<Transport> {
  return severable(transport, new Map([['runQueue.fetch', cutFetch]]));
}

/** Wraps a store so that a simulated crash cuts the worker off from it. */
export function severableStore(store: Store): Severable<Store> {
  return severable(store);
}
