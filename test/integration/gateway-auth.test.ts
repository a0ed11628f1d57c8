import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { TalkClient } from "../../src/client/talk-client.js";
import { TalkError } from "../../src/core/errors.js";
import { createTalkRuntime } from "../../src/core/session-runtime.js";
import { createGatewayServer } from "../../src/gateway/index.js";
import type { GatewayDeps } from "../../src/gateway/index.js";
import { OPENAI_KEY, TOKENS, rejectionOf, startGateway } from "../support/gateway-harness.js";
import type { GatewayHarness } from "../support/gateway-harness.js";

let h: GatewayHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("gateway auth: bearer tokens and scope groups", () => {
  it("a connection without a token is refused with 401 unauthorized", async () => {
    h = await startGateway();
    const err = await rejectionOf(TalkClient.connect(h.wsUrl));
    expect(err.code).toBe("unauthorized");
    expect(h.logLines.some((l) => String(l.msg).includes("auth disabled"))).toBe(false);
  });

  it("a wrong token is refused with 401 unauthorized", async () => {
    h = await startGateway();
    const err = await rejectionOf(TalkClient.connect(h.wsUrl, { token: "not-a-configured-token-000" }));
    expect(err.code).toBe("unauthorized");
  });

  it("browsers authenticate with the talkgate + bearer.<token> subprotocols", async () => {
    h = await startGateway();
    const ws = new WebSocket(h.wsUrl, ["talkgate", `bearer.${TOKENS.reader}`]);
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    expect(ws.protocol).toBe("talkgate");
    ws.send(JSON.stringify({ type: "req", id: "1", method: "talk.mode" }));
    const frame = await new Promise<Record<string, unknown>>((resolve) =>
      ws.once("message", (d) => resolve(JSON.parse(d.toString()))),
    );
    expect(frame).toMatchObject({ type: "res", id: "1", ok: true });
    ws.close();
  });

  it("a read token may discover but not speak, create sessions or change the mode", async () => {
    h = await startGateway();
    const reader = await h.connect({ as: "reader" });
    await expect(reader.request("talk.catalog")).resolves.toBeTruthy();
    await expect(reader.request("talk.mode")).resolves.toMatchObject({ enabled: false });
    for (const [method, params] of [
      ["talk.speak", { text: "hello" }],
      ["talk.session.create", { mode: "stt-tts", transport: "managed-room" }],
      ["talk.client.create", { transport: "webrtc" }],
      ["talk.mode", { enabled: true }],
    ] as const) {
      const err = await rejectionOf(reader.requestUntyped(method, params));
      expect(err.code, method).toBe("forbidden");
    }
  });

  it("talk.config hides secrets from write callers and shows them to admin", async () => {
    h = await startGateway();
    const writer = await h.connect({ as: "writer" });
    const admin = await h.connect({ as: "admin" });
    const redacted = JSON.stringify(await writer.request("talk.config"));
    expect(redacted).not.toContain(OPENAI_KEY);
    expect(redacted).toContain("[redacted]");
    expect(JSON.stringify(await admin.request("talk.config"))).toContain(OPENAI_KEY);
  });

  it("with no tokens configured the server logs that auth is disabled and binds loopback only", async () => {
    h = await startGateway({ auth: false });
    expect(h.logLines.some((l) => String(l.msg).includes("auth disabled: loopback only"))).toBe(true);
    const anonymous = await h.connect();
    await expect(anonymous.request("talk.mode")).resolves.toMatchObject({ enabled: false });
    // Anonymous callers are never admin: secrets stay hidden.
    expect(JSON.stringify(await anonymous.request("talk.config"))).not.toContain(OPENAI_KEY);
    // An admin method says that no tokens are configured and how to add one, not that a token lacks a scope.
    const refused = await rejectionOf(anonymous.requestUntyped("admin.workers.list"));
    expect(refused.code).toBe("forbidden");
    expect(refused.details).toMatchObject({ scope: "admin", tokensConfigured: false });
    expect(refused.message).toMatch(/no tokens configured.*TALKGATE_ADMIN_TOKEN/);
  });

  it("with no tokens configured, a non-loopback host is a config error naming server.host", async () => {
    const deps = { runtime: createTalkRuntime() } as unknown as GatewayDeps;
    let caught: unknown;
    try {
      createGatewayServer(deps, { host: "0.0.0.0" });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(TalkError);
    expect((caught as TalkError).code).toBe("config_invalid");
    expect((caught as TalkError).message).toContain("server.host");
    const withTokens = createGatewayServer(deps, {
      host: "0.0.0.0",
      auth: { tokens: [{ name: "a", token: TOKENS.admin, scopes: ["admin"] }] },
    });
    await withTokens.close();
  });

  it("connections beyond maxConnections are refused while existing ones keep working", async () => {
    h = await startGateway({ options: { maxConnections: 1 } });
    const first = await h.connect();
    const err = await rejectionOf(TalkClient.connect(h.wsUrl, { token: TOKENS.admin }));
    expect(err.code).toBe("rate_limited");
    await expect(first.request("talk.mode")).resolves.toMatchObject({ enabled: false });
  });
});
