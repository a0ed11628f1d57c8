/**
 * What reading one Twilio `media` frame costs (issue 19): talkgate's in-place
 * read of the compact frame (src/telephony/twilio/media-frame-scan.ts, through
 * parseTwilioMessage as the stream codec calls it), talkgate's general path
 * (the frame as a string, JSON.parse, the checks, the base64 decode) and the
 * peer relay's (JSON.parse and Buffer.from of the payload, no checks), side
 * by side in one process on the same frames: time per frame, and the bytes
 * of V8's old space each frame leaves behind (JSON.parse internalizes short
 * string values such as the frame's unique sequence numbers there, garbage
 * that only a major collection frees; measured with no major GC in the loop).
 *
 *   node --import tsx bench/twilio-frame-parse.bench.ts [--frames 200000] [--rounds 5]
 */
import { getHeapSpaceStatistics } from "node:v8";
import { benchParseArgs } from "./lib/bench-cli.js";
import { parseTwilioMessage } from "../src/telephony/twilio/media-stream-messages.js";
import { fullGc } from "./lib/full-gc.js";

const { values } = benchParseArgs(import.meta.url, {
  options: { frames: { type: "string", default: "200000" }, rounds: { type: "string", default: "5" } },
});
const FRAMES = Number(values.frames);
const ROUNDS = Number(values.rounds);

const SID = "MZ18ad3ab5a668481ce02b83e7395059f0";
const PAYLOAD = Buffer.alloc(160, 0x7f).toString("base64");
/**
 * Frames as ws hands them over (Buffers), numbered as a call's are: every sequence number and timestamp
 * unique (a repeated one would find its string already internalized). Collected between the ways, so each
 * way meets them anew.
 */
const frames = Array.from({ length: FRAMES }, (_, i) =>
  Buffer.from(
    `{"event":"media","sequenceNumber":"${i + 2}","media":{"track":"inbound","chunk":"${i + 1}","timestamp":"${i * 20}","payload":"${PAYLOAD}"},"streamSid":"${SID}"}`,
  ),
);

let sink = 0;
const ways: Record<string, (frame: Buffer, n: number) => void> = {
  "talkgate, in place": (frame) => {
    const r = parseTwilioMessage(frame, { expectedStreamSid: SID });
    if (r.ok && r.message.event === "media") sink += r.message.audio.byteLength;
  },
  "talkgate, general path": (frame) => {
    // The same frame as a string: what the in-place read replaced (and what a string frame still takes).
    const r = parseTwilioMessage(frame.toString("utf8"), { expectedStreamSid: SID });
    if (r.ok && r.message.event === "media") sink += r.message.audio.byteLength;
  },
  "peer (JSON.parse, no checks)": (frame) => {
    const m = JSON.parse(frame.toString("utf8")) as { event: string; media: { payload: string } };
    if (m.event === "media") sink += Buffer.from(m.media.payload, "base64").byteLength;
  },
};

const oldSpace = (): number =>
  getHeapSpaceStatistics().find((s) => s.space_name === "old_space")!.space_used_size;
const results = new Map<string, { ns: number[]; oldBytes: number[] }>();
for (let round = 0; round < ROUNDS; round++) {
  // Each round runs every way, the order rotated, so the machine's drift falls on all of them alike.
  const names = Object.keys(ways);
  const order = names.map((_, i) => names[(i + round) % names.length]!);
  for (const name of order) {
    const way = ways[name]!;
    for (let i = 0; i < 20_000; i++) way(frames[(i * 7) % frames.length]!, i); // warm
    fullGc();
    fullGc();
    const before = oldSpace();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < FRAMES; i++) way(frames[i]!, i);
    const ns = Number(process.hrtime.bigint() - t0) / FRAMES;
    const oldBytes = (oldSpace() - before) / FRAMES;
    const r = results.get(name) ?? { ns: [], oldBytes: [] };
    r.ns.push(ns);
    r.oldBytes.push(oldBytes);
    results.set(name, r);
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const peer = median(results.get("peer (JSON.parse, no checks)")!.ns);
console.log(`Twilio media frames (160-byte payload), ${FRAMES} per way per round, ${ROUNDS} rounds, medians`);
console.log("| way | ns per frame | / peer | old-space bytes left per frame |");
console.log("|---|---|---|---|");
for (const [name, r] of results)
  console.log(
    `| ${name} | ${median(r.ns).toFixed(0)} | ${(median(r.ns) / peer).toFixed(2)}x | ${median(r.oldBytes).toFixed(1)} |`,
  );
if (sink === 0) console.log("(nothing parsed)");
