// The public surface of the Talk runtime. Adapters, gateway and providers import from here.
export * from "./talk-types.js";
export * from "./errors.js";
export * from "./talk-events.js";
export * from "./provider-types.js";
export * from "./session-types.js";
