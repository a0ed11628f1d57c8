import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultAnswerPath, defaultServerUrl } from "./call.js";

describe("talkgate call's defaults", () => {
  it("calls the server `npm start` runs with the same PORT and HOST", () => {
    expect(defaultServerUrl({})).toBe("http://127.0.0.1:8787");
    expect(defaultServerUrl({ PORT: "9000" })).toBe("http://127.0.0.1:9000");
    expect(defaultServerUrl({ PORT: "0" })).toBe("http://127.0.0.1:8787");
    expect(defaultServerUrl({ PORT: "9000", HOST: "0.0.0.0" })).toBe("http://127.0.0.1:9000");
    expect(defaultServerUrl({ HOST: "::1" })).toBe("http://[::1]:8787");
    expect(defaultServerUrl({ HOST: "10.0.0.5", PORT: "81" })).toBe("http://10.0.0.5:81");
  });

  it("writes the answer into the system's temporary directory, not the working tree", () => {
    expect(defaultAnswerPath()).toBe(join(tmpdir(), "talkgate-answer.wav"));
  });
});
