/**
 * The names of the process warnings Node emits while `work` runs and on the tick after it
 * (MaxListenersExceededWarning is emitted on the next tick).
 */
export async function warningsWhile(work: () => Promise<void>): Promise<string[]> {
  const names: string[] = [];
  const onWarning = (w: Error): void => void names.push(w.name);
  process.on("warning", onWarning);
  try {
    await work();
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off("warning", onWarning);
  }
  return names;
}
