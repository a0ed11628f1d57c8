// The Talk client as the talk page and the console load it: this module, bundled for the browser by
// src/app/client-bundle.ts and served as /lib/talk-client.js (node-socket.ts swapped for browser-socket.ts).
export { TalkClient } from "./talk-client.js";
export { SessionLink } from "./session-link.js";
export { TalkError } from "../core/index.js";
