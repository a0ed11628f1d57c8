/**
 * What Twilio's sample gets for `import WebSocket from 'ws'` under the bench (see real-sample-redirect.mjs): its
 * own ws (the hook resolves `ws` here from the sample's directory), re-exported as is, except that the WebSocket
 * class is a subclass whose constructor sends the sample's hard-coded `wss://api.openai.com/...` to the stand-in
 * provider at `ws://127.0.0.1:$TALKGATE_BENCH_PROVIDER_PORT/...` (same path and query, same headers and options).
 * Any other address is refused: the sample opens no other socket, and if a later version did, the bench would have
 * to be looked at rather than let it reach the internet.
 */
import process from "node:process";
import { URL } from "node:url";
import WebSocket from "ws";

export * from "ws";

const FROM = "wss://api.openai.com/";
const TO = `ws://127.0.0.1:${Number(process.env.TALKGATE_BENCH_PROVIDER_PORT)}/`;

class ProviderRedirectedWebSocket extends WebSocket {
  constructor(address, ...rest) {
    const url = address instanceof URL ? address.href : String(address);
    if (!url.startsWith(FROM))
      throw new Error(`real-sample-ws.mjs: the sample opened ${url}; only ${FROM}... is redirected`);
    super(TO + url.slice(FROM.length), ...rest);
  }
}

// Announced once on stdout, before the sample's "Server is listening" line, so the bench knows the redirect is in
// place (a sample that stopped importing ws this way would otherwise try the real provider).
process.stdout.write(`[talkgate bench] ws redirected: ${FROM} -> ${TO}\n`);

export { ProviderRedirectedWebSocket as WebSocket };
export default ProviderRedirectedWebSocket;
