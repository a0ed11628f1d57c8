/**
 * Merges caller options over frozen defaults; a field explicitly set to
 * undefined keeps its default (config loaders often produce such fields).
 */
export function mergeOptions<T extends object>(defaults: Readonly<Required<T>>, options: T): Required<T> {
  const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  return { ...defaults, ...defined } as Required<T>;
}
