/**
 * A full (mark-compact) collection on demand, for benches that measure heap
 * left behind or the collector's time, without asking for --expose-gc on the
 * command line (so `npm run bench` runs them as they are).
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
export const fullGc = runInNewContext("gc") as () => void;
