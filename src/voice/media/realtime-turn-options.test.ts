import { describe, expect, it } from "vitest";
import { sessionControllerFactory } from "../pipelines/controller-factory.js";
import { NOOP_LOGGER } from "../../core/logger.js";
import { resolveRealtimeEcho, resolveTurnEnd } from "./realtime-turn-options.js";

const providers = {
  stt: () => undefined,
  tts: () => undefined,
  agent: () => undefined,
  realtime: () => undefined,
};

describe("realtime turn options", () => {
  it("defaults: the provider ends turns, realtime legs pass u-law through", () => {
    expect(resolveTurnEnd()).toBe("provider");
    expect(resolveRealtimeEcho()).toBe(false);
    const factory = sessionControllerFactory({ providers, options: {}, logger: NOOP_LOGGER });
    expect(factory.turns.turnEnd).toBe("provider");
    expect(factory.echo.realtime).toBe(false);
  });

  it.each([
    [() => resolveTurnEnd("caller"), "talk.input.turnEnd"],
    [() => resolveRealtimeEcho("yes"), "talk.input.echoCancellation.realtime"],
    [
      () =>
        sessionControllerFactory({
          providers,
          options: {},
          logger: NOOP_LOGGER,
          turns: { turnEnd: "both" as never },
        }),
      "talk.input.turnEnd",
    ],
    [
      () =>
        sessionControllerFactory({
          providers,
          options: {},
          logger: NOOP_LOGGER,
          echo: { realtime: 1 as never },
        }),
      "talk.input.echoCancellation.realtime",
    ],
  ])("refuses a bad value with config_invalid naming the key (%#)", (make, key) => {
    expect(make).toThrow(
      expect.objectContaining({ code: "config_invalid", message: expect.stringContaining(key) }),
    );
  });
});
