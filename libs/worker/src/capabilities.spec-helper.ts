/** Test doubles over a transport's capabilities: a fault or a probe in one method, the rest real. */
import type { Transport } from '@baton/core/adapter';

type CapabilityKey = 'runQueue' | 'journal' | 'deadLetters';

/**
 * `transport` with the members of `replace` put in place of its capability `key`'s own (the
 * others, and the rest of the transport, are the real ones).
 */
export function withCapability<K extends CapabilityKey>(
  transport: Transport,
  key: K,
  replace: Partial<Transport[K]>,
): Transport {
  const inner = transport[key];
  const capability = new Proxy(inner, {
    get: (target, prop, receiver) =>
      Object.hasOwn(replace, prop)
        ? replace[prop as keyof Transport[K]]
        : Reflect.get(target, prop, receiver),
  });
  return new Proxy(transport, {
    get(target, prop, receiver) {
      if (prop === key) return capability;
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
