import { describe, expect, it } from "vitest";
import { InProcessOneTimeClaims } from "../cluster/index.js";
import { plivoProtocol } from "./plivo/plivo-protocol.js";
import { twilioProtocol } from "./twilio/twilio-protocol.js";
import { DocumentSigner, MAX_BRIEFING_CHARS, transferDocuments } from "./document-urls.js";

function queryOf(url: string): Record<string, string> {
  return Object.fromEntries(new URL(url).searchParams);
}

describe("transfer document URLs", () => {
  const plivo = plivoProtocol({ authId: "MA1", authToken: "token", defaultFrom: "+1555" });

  it("carry a signature any worker sharing the secret verifies; a changed or missing field is refused", async () => {
    const claims = new InProcessOneTimeClaims();
    const docs = transferDocuments(plivo, "https://talk.example", new DocumentSigner(claims));
    const url = (await docs.documentUrl("+15550009999", "Ana & Bo + 42?"))!;
    expect(url.startsWith("https://talk.example/telephony/plivo/transfer?")).toBe(true);
    const query = queryOf(url);
    expect(query).toMatchObject({ to: "+15550009999", text: "Ana & Bo + 42?" });
    const other = new DocumentSigner(claims);
    expect(await other.verify("/telephony/plivo/transfer", query)).toBe(true);
    expect(await other.verify("/telephony/plivo/briefing", query)).toBe(false);
    expect(await other.verify("/telephony/plivo/transfer", { ...query, to: "+15550006666" })).toBe(false);
    expect(await other.verify("/telephony/plivo/transfer", { ...query, extra: "1" })).toBe(false);
    const { sig: _sig, ...unsigned } = query;
    expect(await other.verify("/telephony/plivo/transfer", unsigned)).toBe(false);
    expect(await other.verify("/telephony/plivo/transfer", { ...query, to: ["+1", "+2"] })).toBe(false);
    // Another deployment's secret.
    const foreign = new DocumentSigner(new InProcessOneTimeClaims());
    expect(await foreign.verify("/telephony/plivo/transfer", query)).toBe(false);
  });

  it("cut the briefing to its limit; a carrier whose fetches are signed (Twilio) gets plain URLs", async () => {
    const signer = new DocumentSigner(new InProcessOneTimeClaims());
    const long = "x".repeat(MAX_BRIEFING_CHARS + 50);
    const briefing = (await transferDocuments(plivo, "https://t", signer).briefingUrl(long))!;
    expect(queryOf(briefing)["text"]).toHaveLength(MAX_BRIEFING_CHARS);
    const twilio = twilioProtocol({ authToken: "t", accountSid: "AC1" });
    const docs = transferDocuments(twilio, "https://t", signer);
    expect(await docs.briefingUrl("Hi there.")).toBe("https://t/telephony/twilio/briefing?text=Hi%20there.");
    expect(await docs.documentUrl("+1555", "Hi")).toBeUndefined();
  });
});
