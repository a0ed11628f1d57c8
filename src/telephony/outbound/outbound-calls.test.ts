import { describe, expect, it } from "vitest";
import { NOOP_LOGGER } from "../../core/logger.js";
import type { CarrierProtocol, CarrierRestClient } from "../carrier/carrier-protocol.js";
import type { CallRegistry } from "../call-registry.js";
import { InProcessOneTimeClaims } from "../../cluster/index.js";
import { ULAW_8K } from "../../core/index.js";
import { lineAudio } from "../line-audio.js";
import { StreamTokens } from "../stream-tokens.js";
import { outboundCalls, type OutboundCallsOptions } from "./outbound-calls.js";

const REST: CarrierRestClient = {
  dial: async () => {
    throw new Error("not dialling here");
  },
  hangUp: async () => undefined,
  transfer: async () => undefined,
};

/** Which job kinds a worker offers to run, through the narrow jobs interface it is given. */
function registeredKinds(rest: CarrierRestClient | undefined): string[] {
  const kinds: string[] = [];
  const carrier = { id: "test", name: "Test", rest, defaultFrom: "+15550100" } as unknown as CarrierProtocol;
  const options: OutboundCallsOptions = {
    carriers: [
      {
        carrier,
        callCarrier: { id: "test", rest, line: lineAudio(ULAW_8K) },
        publicUrl: "https://talk.example.com",
      },
    ],
    defaultCarrier: "test",
    tokens: new StreamTokens({ claims: new InProcessOneTimeClaims() }),
    calls: {} as CallRegistry,
    maxPending: 10,
    authorize: () => "ok",
    createCall: () => {
      throw new Error("not placing calls here");
    },
    localBaseUrl: () => undefined,
    jobs: {
      enqueue: async () => {
        throw new Error("not enqueuing here");
      },
      cancel: async () => false,
      process: (kind: string) => {
        kinds.push(kind);
        return true;
      },
    } as unknown as OutboundCallsOptions["jobs"],
    logger: NOOP_LOGGER,
  };
  outboundCalls(options);
  return kinds;
}

describe("outbound calls as jobs", () => {
  it("a worker with carrier credentials takes outbound-call jobs", () => {
    expect(registeredKinds(REST)).toEqual(["outbound-call"]);
  });

  it("a worker without carrier credentials never takes outbound-call jobs it could only fail", () => {
    expect(registeredKinds(undefined)).toEqual([]);
  });
});
