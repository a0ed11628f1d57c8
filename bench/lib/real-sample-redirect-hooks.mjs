/**
 * The resolve hook of real-sample-redirect.mjs (it runs on Node's loader thread). `ws` imported by the sample's
 * index.js resolves to our wrapper (real-sample-ws.mjs); `ws` imported by the wrapper resolves as the sample's own
 * would (its node_modules/ws), so the sample runs the ws version it installed. Every other import is untouched.
 */
import { readlinkSync } from "node:fs";

let sampleIndex = "";
let wrapper = "";

export function initialize(data) {
  sampleIndex = data.sampleIndex;
  wrapper = data.wrapper;
  // This thread's id (/proc/thread-self is <pid>/task/<tid>), so the bench can leave the loader thread, which the
  // sample does not have in production, out of its CPU.
  let tid = 0;
  try {
    tid = Number(readlinkSync("/proc/thread-self").split("/").pop()) || 0;
  } catch {
    // Not Linux: the bench reads no /proc there either.
  }
  data.port.postMessage({ tid });
  data.port.close();
}

export async function resolve(specifier, context, nextResolve) {
  if (specifier === "ws" && context.parentURL === sampleIndex) return { url: wrapper, shortCircuit: true };
  if (specifier === "ws" && context.parentURL === wrapper)
    return nextResolve(specifier, { ...context, parentURL: sampleIndex });
  return nextResolve(specifier, context);
}
