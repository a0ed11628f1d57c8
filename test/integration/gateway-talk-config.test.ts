import { afterEach, describe, expect, it } from "vitest";
import { OPENAI_KEY, rejectionOf, startGateway } from "../support/gateway-harness.js";
import type { GatewayHarness } from "../support/gateway-harness.js";

let h: GatewayHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A secret under a key name no redaction rule knows, in an entry that configures nothing. */
const HIDDEN = "hidden-value-under-an-odd-name-7431";

describe("talk.realtime.mode / .transport / .brain are the create defaults", () => {
  it("talk.session.create without mode uses talk.realtime.mode (transport and brain follow)", async () => {
    h = await startGateway({ realtime: { mode: "transcription" } });
    const client = await h.connect({ as: "writer" });
    const created = await client.request("talk.session.create", {});
    expect(created).toMatchObject({ mode: "transcription", transport: "gateway-relay", brain: "none" });
  });

  it("talk.realtime.brain applies where the mode takes it, and a request field always wins", async () => {
    h = await startGateway({ realtime: { mode: "stt-tts", brain: "direct-tools" } });
    // A default brain is as privileged as an asked-for one: a write token is refused, naming where it came from.
    const writer = await h.connect({ as: "writer" });
    const refused = await rejectionOf(writer.request("talk.session.create", { transport: "managed-room" }));
    expect(refused.code).toBe("forbidden");
    expect(refused.details).toMatchObject({ scope: "direct-tools", from: "talk.realtime.brain" });
    const client = await h.connect({ as: "surface" });
    const room = await client.request("talk.session.create", { transport: "managed-room" });
    expect(room).toMatchObject({ mode: "stt-tts", transport: "managed-room", brain: "direct-tools" });
    const consult = await client.request("talk.session.create", { brain: "agent-consult" });
    expect(consult).toMatchObject({ mode: "stt-tts", brain: "agent-consult" });
    // An explicit client-owned transport keeps its error code.
    const err = await rejectionOf(client.request("talk.session.create", { transport: "webrtc" }));
    expect(err.code).toBe("use_talk_client_create");
  });

  it("talk.client.create without transport uses talk.realtime.transport; without one configured it is invalid_params", async () => {
    h = await startGateway({ realtime: { transport: "webrtc" } });
    const client = await h.connect({ as: "writer" });
    const minted = await client.request("talk.client.create", {});
    expect(minted).toMatchObject({ mode: "realtime", transport: "webrtc", brain: "agent-consult" });
    await h.close();
    h = await startGateway();
    const other = await h.connect({ as: "writer" });
    const err = await rejectionOf(other.request("talk.client.create", {}));
    expect(err.code).toBe("invalid_params");
    expect(err.details?.issues).toEqual([expect.objectContaining({ path: "transport" })]);
  });
});

describe("talk.config answers the effective configuration", () => {
  it("shows resolved realtime data only, drops entries that configure nothing, redacts by the schema's mark", async () => {
    h = await startGateway({
      realtime: {
        mode: "realtime",
        transport: "webrtc",
        providers: { "vendor-x": { hush: HIDDEN, nested: { odd: HIDDEN } } },
      },
    });
    const reader = await h.connect({ as: "reader" });
    const admin = await h.connect({ as: "admin" });
    const answer = (await reader.request("talk.config")) as {
      talk: { realtime: Record<string, unknown> } & Record<string, unknown>;
      providers: Record<string, unknown>;
    };
    expect(answer.talk.realtime).toEqual({
      provider: "openai",
      model: null,
      voice: null,
      mode: "realtime",
      transport: "webrtc",
      brain: "agent-consult",
      providers: {
        openai: {
          configured: true,
          apiKey: "[redacted]",
          baseUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:/),
        },
      },
    });
    expect(Object.keys(answer.talk).sort()).toEqual([
      "faults",
      "input",
      "local",
      "output",
      "providers",
      "realtime",
    ]);
    expect(answer.providers).toMatchObject({ realtime: "openai", agent: "local-agent" });
    expect(JSON.stringify(answer)).not.toContain(HIDDEN);
    // Admin sees the key, but an entry that configures nothing is not part of the effective config.
    const full = JSON.stringify(await admin.request("talk.config"));
    expect(full).toContain(OPENAI_KEY);
    expect(full).not.toContain(HIDDEN);
    expect(full).not.toContain("vendor-x");
  });
});
