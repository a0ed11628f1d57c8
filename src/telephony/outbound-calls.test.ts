import { describe, expect, it } from "vitest";
import { NOOP_LOGGER } from "../core/logger.js";
import type { CallRegistry } from "./call-registry.js";
import { outboundCalls, type OutboundCallsOptions } from "./outbound-calls.js";
import { TwilioRestClient } from "./twilio/twilio-rest-client.js";

/** Which job kinds a worker offers to run, through the narrow jobs interface it is given. */
function registeredKinds(rest: TwilioRestClient | undefined): string[] {
  const kinds: string[] = [];
  const options: OutboundCallsOptions = {
    calls: {} as CallRegistry,
    rest,
    publicUrl: "https://talk.example.com",
    authToken: "token",
    defaultFrom: "+15550100",
    streamPath: "/telephony/twilio/stream",
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
    const rest = new TwilioRestClient({
      accountSid: "AC0123",
      authToken: "token",
      baseUrl: "http://127.0.0.1:9",
    });
    expect(registeredKinds(rest)).toEqual(["outbound-call"]);
  });

  it("a worker without carrier credentials never takes outbound-call jobs it could only fail", () => {
    expect(registeredKinds(undefined)).toEqual([]);
  });
});
