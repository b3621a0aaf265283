/**
 * Strict validation of rendered Kubernetes objects: the schema check of a `kubernetes-models`
 * class, plus a refusal of every field the schema does not know.
 *
 * The model classes validate with JSON-schema validators compiled from the Kubernetes OpenAPI
 * document, which leaves `additionalProperties` open, so a misspelt field (say
 * `terminationGracePeriodSecond`) passes and the API server later drops or rejects it. Those
 * validators are compiled code, so the schemas cannot be switched to `additionalProperties: false`.
 * Instead the object is handed to the validator behind a proxy that notes every property the
 * validator looks up: a schema with `properties` reads each property it defines, and a map
 * (`additionalProperties: <schema>`, e.g. labels) enumerates its keys. After a passing
 * validation, a key of an object the validator reached but neither read nor enumerated is a
 * field the schema does not define. This works with whichever version of the model packages is
 * installed, since it relies only on the public `validate()` of a model class.
 */

/** A `kubernetes-models` class: its prototype's validate() checks `this` against the schema. */
export interface ModelClass {
  prototype: { validate(): void };
}

/** What the validator did with one plain object it reached. */
interface Visit {
  read: Set<string>;
  enumerated: boolean;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Wraps `root` so each object and array reached through it records its visits in `visits`. */
function tracked(root: object, visits: Map<object, Visit>): object {
  const proxies = new Map<object, object>();
  const wrap = (target: object): object => {
    let proxy = proxies.get(target);
    if (proxy !== undefined) return proxy;
    const visit: Visit = { read: new Set(), enumerated: false };
    if (isPlainObject(target)) visits.set(target, visit);
    proxy = new Proxy(target, {
      get(obj, key, receiver) {
        if (typeof key === 'string') visit.read.add(key);
        const value: unknown = Reflect.get(obj, key, receiver);
        return value !== null && typeof value === 'object' ? wrap(value) : value;
      },
      has(obj, key) {
        if (typeof key === 'string') visit.read.add(key);
        return Reflect.has(obj, key);
      },
      ownKeys(obj) {
        visit.enumerated = true;
        return Reflect.ownKeys(obj);
      },
      getOwnPropertyDescriptor(obj, key) {
        if (typeof key === 'string') visit.read.add(key);
        return Reflect.getOwnPropertyDescriptor(obj, key);
      },
    });
    proxies.set(target, proxy);
    return proxy;
  };
  return wrap(root);
}

/** Paths (`spec.template.spec.terminationGracePeriodSecond`) of the fields no schema read. */
function unknownFields(root: unknown, visits: Map<object, Visit>): string[] {
  const found: string[] = [];
  const walk = (node: unknown, path: string): void => {
    if (Array.isArray(node)) {
      node.forEach((item, index) => walk(item, `${path}[${index}]`));
      return;
    }
    if (!isPlainObject(node)) return;
    const visit = visits.get(node);
    if (visit === undefined) return; // never reached: its parent's field is reported instead
    for (const [key, value] of Object.entries(node)) {
      const child = path === '' ? key : `${path}.${key}`;
      if (!visit.enumerated && !visit.read.has(key)) found.push(child);
      else walk(value, child);
    }
  };
  walk(root, '');
  return found;
}

/**
 * Validates `obj` against `model`'s schema and throws when it fails or has a field the schema
 * does not define, naming each such field by its path.
 */
export function validateStrictly(model: ModelClass, obj: object, label: string): void {
  const visits = new Map<object, Visit>();
  model.prototype.validate.call(tracked(obj, visits));
  const unknown = unknownFields(obj, visits);
  if (unknown.length > 0) {
    throw new Error(
      `${label} has fields its Kubernetes schema does not define: ${unknown.join(', ')}; ` +
        'fix their spelling or nesting (the API server would drop or refuse them)',
    );
  }
}
