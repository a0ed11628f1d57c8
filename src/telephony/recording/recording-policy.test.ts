import { describe, expect, it } from "vitest";
import { validateConfig } from "../../config/load-config.js";
import { callRecordingPolicy, recordsCall } from "./recording-policy.js";

const telephony = (recording: unknown) => validateConfig({ telephony: { recording } }).config.telephony;

describe("recording policy", () => {
  it("is off by default: no call is recorded", () => {
    expect(callRecordingPolicy(validateConfig({}).config.telephony, "/data")).toBeUndefined();
    expect(recordsCall(undefined, { to: "+15550001111" })).toBe(false);
  });

  it("records every call when enabled without numbers, under <dataDir>/recordings", () => {
    const policy = callRecordingPolicy(telephony({ enabled: true, notice: "Recorded." }), "/data")!;
    expect(policy).toMatchObject({ dir: "/data/recordings", notice: "Recorded.", numbers: undefined });
    expect(recordsCall(policy, { from: "+1", to: "+2", direction: "inbound" })).toBe(true);
  });

  it("with numbers, records the calls of those numbers: the called one inbound, the caller id outbound", () => {
    const policy = callRecordingPolicy(telephony({ enabled: true, numbers: ["+15550001111"] }), "/d")!;
    expect(recordsCall(policy, { from: "+15557654321", to: "+15550001111", direction: "inbound" })).toBe(
      true,
    );
    expect(recordsCall(policy, { from: "+15557654321", to: "+15550002222", direction: "inbound" })).toBe(
      false,
    );
    expect(recordsCall(policy, { from: "+15550001111", to: "+15557654321", direction: "outbound-api" })).toBe(
      true,
    );
    expect(recordsCall(policy, { from: "+15550002222", to: "+15550001111", direction: "outbound-api" })).toBe(
      false,
    );
  });

  it("bad settings are refused naming the key", () => {
    expect(() => telephony({ enabled: false, numbers: ["+1"] })).toThrow(/telephony\.recording\.numbers/);
    expect(() => telephony({ enabled: true, numbers: [] })).toThrow(
      /telephony\.recording\.numbers: is empty/,
    );
    expect(() => telephony({ enabled: true, numbers: ["+1", "+1"] })).toThrow(/numbers\.1: lists \+1 twice/);
    expect(() => telephony({ enabled: "yes" })).toThrow(/telephony\.recording\.enabled/);
    expect(() => telephony({ enabled: true, notice: "x".repeat(501) })).toThrow(
      /telephony\.recording\.notice/,
    );
    expect(() => callRecordingPolicy(telephony({ enabled: true }), undefined)).toThrow(/dataDir/);
  });
});
