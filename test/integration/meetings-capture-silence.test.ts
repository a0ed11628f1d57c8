import type { Browser } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  decodeCaptureFrame,
  silenceSamples,
  type CaptureFrame,
} from "../../src/meetings/bot/capture-framing.js";
import { captureScript } from "../../src/meetings/bot/capture-script.js";
import { TrackDecoder } from "../../src/meetings/bot/track-decoder.js";
import { startCapturePageHost, type CapturePageHost } from "../support/capture-page-host.js";

/**
 * The capture script skips the Opus encoder while a remote track is silent and
 * sends the silent time as `silence` frames; the server's decoder turns them
 * into zeros, so the track's timeline is the one the page heard. In a real
 * Chromium page: a tone sent over a loopback RTCPeerConnection pair (1 s on,
 * 1.5 s off, 1 s on), received by the wrapped connection, captured onto a
 * real capture socket and decoded here with the server's TrackDecoder.
 */
describe("the capture script over a silent track", () => {
  let host: CapturePageHost;
  let browser: Browser;
  let origin: string;
  const frames: CaptureFrame[] = [];

  beforeAll(async () => {
    host = await startCapturePageHost((data, binary) => {
      if (binary) frames.push(decodeCaptureFrame(new Uint8Array(data)));
    });
    ({ browser, origin } = host);
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  it("sends the pause as silence frames, not Opus, and the decoded timeline keeps the pause's length", async () => {
    const page = await browser.newPage();
    await page.evaluateOnNewDocument(captureScript({ url: `${origin.replace("http", "ws")}/capture` }));
    await page.goto(origin);
    await page.evaluate(`(async () => {
      const context = new AudioContext({ sampleRate: 48000 });
      const tone = context.createOscillator();
      tone.frequency.value = 440;
      const gain = context.createGain();
      const destination = context.createMediaStreamDestination();
      tone.connect(gain).connect(destination);
      const t = context.currentTime + 0.5;
      gain.gain.setValueAtTime(0, 0);
      gain.gain.setValueAtTime(0.3, t);
      gain.gain.setValueAtTime(0, t + 1);
      gain.gain.setValueAtTime(0.3, t + 2.5);
      gain.gain.setValueAtTime(0, t + 3.5);
      tone.start();
      const sender = new RTCPeerConnection();
      const receiver = new RTCPeerConnection();
      sender.onicecandidate = (e) => e.candidate && receiver.addIceCandidate(e.candidate);
      receiver.onicecandidate = (e) => e.candidate && sender.addIceCandidate(e.candidate);
      sender.addTrack(destination.stream.getAudioTracks()[0], destination.stream);
      await sender.setLocalDescription(await sender.createOffer());
      await receiver.setRemoteDescription(sender.localDescription);
      await receiver.setLocalDescription(await receiver.createAnswer());
      await sender.setRemoteDescription(receiver.localDescription);
      await new Promise((r) => setTimeout(r, 5500));
      receiver.close();
      sender.close();
      await new Promise((r) => setTimeout(r, 500));
    })()`);
    await page.close();

    const media = frames.filter((f) => f.kind !== "ended");
    const trackIds = new Set(media.map((f) => f.trackId));
    expect(trackIds.size).toBe(1);
    const decoder = new TrackDecoder([...trackIds][0]!);
    const timeline = media.map((f) => decoder.decode(f));
    decoder.close();
    const audio = new Int16Array(timeline.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const chunk of timeline) {
      audio.set(chunk, at);
      at += chunk.length;
    }

    // Silence frames carried the pause (1.5 s less the 400 ms the script keeps encoding after a sound)
    // and the quiet before and after the tones; Opus (60 ms packets) carried the rest, to the sample:
    // the encoder was drained on whole packets, nothing padded, no silence lost.
    const silentMs = media
      .filter((f) => f.kind === "silence")
      .reduce((ms, f) => ms + (silenceSamples(f) * 1000) / f.sampleRate, 0);
    const opusPackets = media.filter((f) => f.kind === "opus").length;
    expect(silentMs).toBeGreaterThan(1000);
    expect(opusPackets * 60 + silentMs).toBeCloseTo(audio.length / 16, 0);

    // The decoded timeline: two tones of ~1 s, ~1.5 s apart, as the page heard them (10 ms windows; WebRTC's
    // jitter buffer moves each edge by up to ~0.1 s on a loaded machine, with or without silence frames).
    const loud: boolean[] = [];
    for (let i = 0; i + 160 <= audio.length; i += 160) {
      let sum = 0;
      for (let j = i; j < i + 160; j++) sum += audio[j]! * audio[j]!;
      loud.push(Math.sqrt(sum / 160) > 1000);
    }
    const runs: { start: number; end: number }[] = [];
    loud.forEach((on, i) => {
      const last = runs.at(-1);
      if (!on) return;
      if (last && i - last.end <= 5) last.end = i + 1;
      else runs.push({ start: i, end: i + 1 });
    });
    expect(runs.map((r) => r.end - r.start)).toEqual([expect.closeTo(100, -1.6), expect.closeTo(100, -1.6)]);
    expect(runs[1]!.start - runs[0]!.end).toBeGreaterThan(125);
    expect(runs[1]!.start - runs[0]!.end).toBeLessThan(180);
  }, 60_000);
});
