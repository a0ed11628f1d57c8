/**
 * The resolve hook of real-sample-redirect.mjs (it runs on Node's loader thread). `ws` imported by the sample's
 * index.js resolves to our wrapper (real-sample-ws.mjs); `ws` imported by the wrapper resolves as the sample's own
 * would (its node_modules/ws), so the sample runs the ws version it installed. Every other import is untouched.
 */
let sampleIndex = "";
let wrapper = "";

export function initialize(data) {
  sampleIndex = data.sampleIndex;
  wrapper = data.wrapper;
}

export async function resolve(specifier, context, nextResolve) {
  if (specifier === "ws" && context.parentURL === sampleIndex) return { url: wrapper, shortCircuit: true };
  if (specifier === "ws" && context.parentURL === wrapper)
    return nextResolve(specifier, { ...context, parentURL: sampleIndex });
  return nextResolve(specifier, context);
}
