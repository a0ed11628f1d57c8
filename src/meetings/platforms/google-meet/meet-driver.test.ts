import { describe, expect, it } from "vitest";
import { validateConfig } from "../../../config/load-config.js";
import { TalkError } from "../../../core/errors.js";
import { GoogleMeetDriver } from "./meet-driver.js";

describe("Google Meet driver: which addresses it takes", () => {
  const real = new GoogleMeetDriver();

  it("takes https://meet.google.com/<code> and nickname lookups only", () => {
    for (const ok of [
      "https://meet.google.com/abc-defg-hij",
      "https://meet.google.com/abc-defg-hij/?authuser=1",
      "https://meet.google.com/lookup/team-standup",
    ])
      expect(real.matches(new URL(ok)), ok).toBe(true);
    for (const no of [
      "http://meet.google.com/abc-defg-hij",
      "https://meet.google.com:8443/abc-defg-hij",
      "https://meet.google.com/new",
      "https://meet.google.com/abc-defg-hij/extra",
      "https://meet.example.org/abc-defg-hij",
      "http://127.0.0.1:8080/abc-defg-hij",
    ])
      expect(real.matches(new URL(no)), no).toBe(false);
  });

  it("also takes any page of an explicitly configured test origin, and nothing else more", () => {
    const dev = new GoogleMeetDriver({ testOrigins: ["http://127.0.0.1:8080"] });
    expect(dev.matches(new URL("http://127.0.0.1:8080/abc-defg-hij"))).toBe(true);
    expect(dev.matches(new URL("http://127.0.0.1:8081/abc-defg-hij"))).toBe(false);
    expect(dev.matches(new URL("https://127.0.0.1:8080/abc-defg-hij"))).toBe(false);
    expect(dev.matches(new URL("https://meet.google.com/abc-defg-hij"))).toBe(true);
    expect(dev.matches(new URL("https://meet.google.com/new"))).toBe(false);
  });

  it.each(["http://127.0.0.1:8080/", "http://127.0.0.1:8080/meet", "ftp://127.0.0.1", "127.0.0.1:8080", ""])(
    "refuses %j as a test origin with config_invalid, in the driver and in the configuration",
    (origin) => {
      expect(() => new GoogleMeetDriver({ testOrigins: [origin] })).toThrow(TalkError);
      try {
        new GoogleMeetDriver({ testOrigins: [origin] });
      } catch (err) {
        expect((err as TalkError).code).toBe("config_invalid");
      }
      expect(() => validateConfig({ meetings: { googleMeet: { testOrigins: [origin] } } })).toThrow(
        /meetings\.googleMeet\.testOrigins/,
      );
    },
  );

  it("has no test origins unless configured", () => {
    expect(validateConfig({}).config.meetings.googleMeet.testOrigins).toEqual([]);
  });
});
