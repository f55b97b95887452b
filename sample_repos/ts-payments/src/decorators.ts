import "reflect-metadata";

type Constructor<T = object> = new (...args: any[]) => T;

const registry = new Map<Constructor, unknown>();
export const INJECTABLE_KEY = Symbol("injectable");

/**
 * Marks a class as resolvable by the tiny service container below; the
 * container creates one shared instance per class.
 */
export function Injectable(): ClassDecorator {
  return (target) => {
    Reflect.defineMetadata(INJECTABLE_KEY, true, target);
  };
}

export function resolve<T>(ctor: Constructor<T>): T {
  if (!Reflect.getMetadata(INJECTABLE_KEY, ctor)) {
    throw new Error(`${ctor.name} is not marked @Injectable()`);
  }
  if (!registry.has(ctor)) {
    const paramTypes: Constructor[] = Reflect.getMetadata("design:paramtypes", ctor) ?? [];
    registry.set(ctor, new ctor(...paramTypes.map((p) => resolve(p))));
  }
  return registry.get(ctor) as T;
}

export function resetContainer(): void {
  registry.clear();
}

function isTransient(error: unknown): boolean {
  const e = error as { type?: string; statusCode?: number; code?: string };
  if (e?.type === "StripeRateLimitError" || e?.type === "StripeConnectionError") return true;
  if (typeof e?.statusCode === "number" && e.statusCode >= 500) return true;
  return e?.code === "ECONNRESET" || e?.code === "ETIMEDOUT";
}

/**
 * Method decorator that re-invokes an async method when it fails with a
 * transient error (rate limit, connection reset, 5xx), with a growing delay
 * between attempts.
 */
export function Retry(attempts = 3, baseDelayMs = 200): MethodDecorator {
  return (_target, propertyKey, descriptor: PropertyDescriptor) => {
    const original = descriptor.value as (...args: unknown[]) => Promise<unknown>;
    descriptor.value = async function (this: unknown, ...args: unknown[]) {
      let lastError: unknown;
      for (let attempt = 1; attempt <= attempts; attempt++) {
        try {
          return await original.apply(this, args);
        } catch (error) {
          lastError = error;
          if (!isTransient(error) || attempt === attempts) break;
          await new Promise((r) => setTimeout(r, baseDelayMs * 2 ** (attempt - 1)));
        }
      }
      throw lastError;
    };
    Object.defineProperty(descriptor.value, "name", { value: String(propertyKey) });
    return descriptor;
  };
}

export function Log(label?: string): MethodDecorator {
  return (target, propertyKey, descriptor: PropertyDescriptor) => {
    const original = descriptor.value;
    const name = label ?? `${target.constructor.name}.${String(propertyKey)}`;
    descriptor.value = async function (this: unknown, ...args: unknown[]) {
      const started = Date.now();
      try {
        return await original.apply(this, args);
      } finally {
        console.debug(`[${name}] ${Date.now() - started}ms`);
      }
    };
    return descriptor;
  };
}
