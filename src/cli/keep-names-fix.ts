/**
 * Takes the cost of tsx's `keepNames` off every closure the server creates.
 *
 * tsx transforms each module with esbuild's `keepNames` on (hard-coded, no
 * option), so a named closure is created through a helper:
 * `{ close: __name(() => ..., "close") }`, where
 * `__name(fn, value) = Object.defineProperty(fn, "name", { value, configurable: true })`.
 * That define turns the function's properties into a dictionary: 321 bytes a
 * closure instead of 60, and a slow define each time one is created. A relayed
 * call holds some 70 of them (a socket line's `media`/`mark`/`close`,
 * listeners, callbacks): 18 KB of its heap (docs/notes/performance-history.md, "Memory per
 * held call", by heap snapshot).
 *
 * The wrapper installed here, before any other module runs (the entry imports
 * it first, so every module's helper captures it), lets such a define through
 * only when it would change something observable: the helper's exact shape
 * (`{ value, configurable: true }`) on a function that already has that name
 * (a class) or has none (an arrow passed to the helper) is skipped. So under
 * tsx `obj.close.name` is "" where compiled code would say "close"; stack
 * traces still read `Object.close` (V8 names frames from the call site), and
 * nothing in talkgate reads a closure's `name`. Every other define goes
 * through unchanged.
 */
const define = Object.defineProperty;

function defineProperty<T>(
  target: T,
  key: PropertyKey,
  descriptor: PropertyDescriptor & ThisType<unknown>,
): T {
  if (key === "name" && typeof target === "function" && isKeepNamesShape(descriptor)) {
    const current: unknown = (target as { name?: unknown }).name;
    if (current === "" || current === descriptor.value) return target;
  }
  return define(target, key, descriptor);
}

/** esbuild's `__name` descriptor: a string value, configurable, nothing else. */
function isKeepNamesShape(d: PropertyDescriptor): boolean {
  return (
    typeof d.value === "string" &&
    d.configurable === true &&
    d.writable === undefined &&
    d.enumerable === undefined &&
    d.get === undefined &&
    d.set === undefined
  );
}

if (Object.defineProperty === define) Object.defineProperty = defineProperty as typeof Object.defineProperty;

/** Whether the wrapper is installed (tests). */
export const keepNamesFixInstalled = (): boolean => Object.defineProperty === (defineProperty as unknown);
