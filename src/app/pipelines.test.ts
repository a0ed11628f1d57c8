import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { validateConfig } from "../config/load-config.js";
import { NOOP_LOGGER } from "../core/logger.js";
import { createTalkRuntime } from "../core/session-runtime.js";
import type { TalkRuntime } from "../core/session-types.js";
import { brainOptions, buildPipelines } from "./pipelines.js";
import { buildProviders } from "./providers.js";
import { buildTools } from "./tools.js";

let runtime: TalkRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

function build(raw: Record<string, unknown>) {
  const { config } = validateConfig({ dataDir: mkdtempSync(join(tmpdir(), "talkgate-app-")), ...raw });
  runtime = createTalkRuntime();
  const providers = buildProviders(config, NOOP_LOGGER, []);
  const brain = brainOptions(config);
  const tools = buildTools({ config, providers, runtime, brain, extra: [], logger: NOOP_LOGGER });
  return { config, tools, pipelines: buildPipelines(config, providers, tools, brain, NOOP_LOGGER) };
}

describe("the composition root's pipeline step", () => {
  it("assembles the trusted options once, from the configuration, for every surface", () => {
    const { pipelines, tools } = build({
      agent: { persona: "You are terse." },
      talk: { realtime: { model: "m-1", voice: "v-1" } },
    });
    expect(pipelines.base.options).toMatchObject({
      persona: "You are terse.",
      realtimeModel: "m-1",
      realtimeVoice: "v-1",
      brain: pipelines.brain,
    });
    expect(Object.isFrozen(pipelines.base)).toBe(true);
    expect(pipelines.base.tools).toBe(tools.pipeline);
  });

  it("gives pipelines a view of the tools under the policy, leaving the shared dispatcher untouched", () => {
    const { tools } = build({ agent: { tools: { deny: ["get_time"] } } });
    const names = (tools.pipeline.definitions ?? []).map((d) => d.name);
    expect(names).toContain("agent_consult");
    expect(names).not.toContain("get_time");
    expect(tools.pipeline.progress).toBeDefined();
    expect("definitions" in tools.dispatcher).toBe(false);
    expect("progress" in tools.dispatcher).toBe(false);
  });

  it("offers the call tools only to a session with a call behind it (its call control registered)", () => {
    const { tools } = build({});
    const session = runtime!.createSession({
      mode: "stt-tts",
      transport: "managed-room",
      brain: "direct-tools",
      owner: "gateway",
    });
    const names = () => (tools.pipeline.definitionsFor?.(session) ?? []).map((d) => d.name);
    expect(names()).toContain("get_time");
    expect(names()).not.toContain("end_call");
    expect(names()).not.toContain("collect_digits");
    const unregister = tools.callControls.set(session.id, {
      hangUp: async () => {},
      sendDtmf: async () => {},
      transfer: async () => {},
      collectDigits: async () => ({ digits: "", reason: "timeout" }),
    });
    expect(names()).toEqual(
      expect.arrayContaining(["end_call", "send_dtmf", "transfer_call", "collect_digits"]),
    );
    unregister();
    expect(names()).not.toContain("transfer_call");
  });
});
