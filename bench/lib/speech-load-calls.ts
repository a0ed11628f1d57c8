/**
 * The Twilio side of many stt-tts calls at once, for the soak: each call posts
 * the voice webhook, opens the stream from the TwiML, and sends 20 ms u-law
 * frames at 50 frames/s: silence, with a real recording (pocketsphinx-testdata)
 * spoken once every `speechEveryMs`, the calls' turns spread evenly over that
 * period, so the server's speech gate, pocketsphinx, the local agent and
 * espeak-ng take turns all along. What the server sends back is played at 1x
 * (CarrierPlayback, as the `talkgate call` demo plays it: marks echoed once
 * the audio before them has played, `clear` drops the rest and echoes the
 * pending marks), so answers take their real time on the line and speech can
 * land on an answer still playing (a barge-in).
 *
 * Timed here: the end of the caller's speech -> the first frame of audio after
 * it (the answer; endpointing included), and answers missing when the next
 * speech starts.
 *
 * The dial is the same exchange as TelephonyLoad's (twilio-load-calls.ts),
 * kept apart so that file's per-frame path stays as the capacity bench has it.
 */
import { answerInboundCall, startTwilioStream } from "./twilio-stream-start.js";
import { randomBytes } from "node:crypto";
import { WebSocket } from "ws";
import { CarrierPlayback } from "../../src/telephony/twilio/carrier-playback.js";

const FRAME = 160; // 20 ms of u-law at 8 kHz
const SLOTS = 10; // 2 ms each
const SILENCE = Buffer.alloc(FRAME, 0xff).toString("base64");

interface SpeechCall {
  readonly idx: number;
  readonly ws: WebSocket;
  readonly streamSid: string;
  readonly playback: CarrierPlayback;
  seq: number;
  /** Frames of the recording still to send in the current utterance (offset into it), or -1 when silent. */
  speechOffset: number;
  /** When the last utterance ended, until the first answer frame after it arrives. */
  awaitingSince: number | undefined;
  /** Audio received since the caller's last utterance ended. */
  receivedSinceSpeech: boolean;
}

export interface SpeechLoadOptions {
  /** The target's voice webhook, e.g. http://127.0.0.1:8787/telephony/twilio/voice?mode=stt-tts. */
  webhookUrl: string;
  /** The caller's utterance: u-law 8 kHz. */
  speech: Uint8Array;
  /** Each call speaks once per this period, ms. */
  speechEveryMs: number;
}

export class SpeechLoad {
  readonly calls: SpeechCall[] = [];
  framesSent = 0;
  framesReceived = 0;
  marksEchoed = 0;
  clears = 0;
  utterances = 0;
  /** Utterances whose answer had not started when the call spoke again. */
  unanswered = 0;
  /** End of the caller's speech -> first answer frame, ms (drained by the reader). */
  answerLatency: number[] = [];
  readonly #o: SpeechLoadOptions;
  readonly #frames: string[];
  readonly #slots: SpeechCall[][] = Array.from({ length: SLOTS }, () => []);
  #timer: NodeJS.Timeout | undefined;
  #t0 = 0;
  #closedCalls = 0;

  constructor(options: SpeechLoadOptions) {
    this.#o = options;
    const frames: string[] = [];
    for (let at = 0; at + FRAME <= options.speech.byteLength; at += FRAME)
      frames.push(Buffer.from(options.speech.subarray(at, at + FRAME)).toString("base64"));
    this.#frames = frames;
  }

  get closedCalls(): number {
    return this.#closedCalls;
  }

  start(): void {
    this.#t0 = performance.now();
    let done = 0;
    const tick = (): void => {
      const due = Math.floor((performance.now() - this.#t0) / 2);
      if (due - done > SLOTS) done = due - SLOTS;
      for (; done < due; done++) this.#sendSlot(this.#slots[done % SLOTS]!, done);
      this.#timer = setTimeout(tick, 1);
    };
    tick();
  }

  async addCalls(n: number, concurrency = 10): Promise<void> {
    const first = this.calls.length;
    let next = first;
    const worker = async (): Promise<void> => {
      while (next < first + n) await this.#dial(next++);
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  }

  close(): void {
    clearTimeout(this.#timer);
    for (const c of this.calls) c.ws.terminate();
  }

  /** Slot tick `tick` (2 ms each): every call of the slot sends its next frame and plays 20 ms of what it got. */
  #sendSlot(slot: SpeechCall[], tick: number): void {
    const now = performance.now();
    const periodFrames = Math.round(this.#o.speechEveryMs / 20);
    const frame = Math.floor(tick / SLOTS);
    for (const c of slot) {
      if (c.ws.readyState !== WebSocket.OPEN) continue;
      c.playback.play(FRAME);
      // Each call's utterances start at its own phase of the period, so turns are spread over time.
      const phase = Math.floor((c.idx * periodFrames) / Math.max(1, this.calls.length));
      if (c.speechOffset < 0 && (frame + phase) % periodFrames === 0) {
        if (c.awaitingSince !== undefined) this.unanswered++;
        c.awaitingSince = undefined;
        c.speechOffset = 0;
        this.utterances++;
      }
      let payload = SILENCE;
      if (c.speechOffset >= 0) {
        payload = this.#frames[c.speechOffset++]!;
        if (c.speechOffset >= this.#frames.length) {
          c.speechOffset = -1;
          c.awaitingSince = now;
          c.receivedSinceSpeech = false;
        }
      }
      c.seq++;
      this.framesSent++;
      c.ws.send(
        `{"event":"media","sequenceNumber":"${c.seq}","media":{"track":"inbound","chunk":"${c.seq}","timestamp":"${c.seq * 20}","payload":"${payload}"},"streamSid":"${c.streamSid}"}`,
      );
    }
  }

  async #dial(idx: number): Promise<void> {
    const { callSid, accountSid, url, parameters } = await answerInboundCall(this.#o.webhookUrl);
    const ws = new WebSocket(url, { perMessageDeflate: false });
    const streamSid = `MZ${randomBytes(16).toString("hex")}`;
    const call: SpeechCall = {
      idx,
      ws,
      streamSid,
      seq: 0,
      speechOffset: -1,
      awaitingSince: undefined,
      receivedSinceSpeech: false,
      playback: new CarrierPlayback({
        echo: (name) => {
          this.marksEchoed++;
          if (ws.readyState === WebSocket.OPEN)
            ws.send(
              `{"event":"mark","sequenceNumber":"${++call.seq}","streamSid":"${streamSid}","mark":{"name":"${name}"}}`,
            );
        },
      }),
    };
    await startTwilioStream(
      ws,
      { accountSid, streamSid, callSid, customParameters: parameters },
      { message: (text) => this.#onMessage(call, text), close: () => this.#closedCalls++ },
    );
    this.calls.push(call);
    this.#slots[idx % SLOTS]!.push(call);
  }

  #onMessage(call: SpeechCall, text: string): void {
    const msg = JSON.parse(text) as {
      event?: string;
      media?: { payload?: string };
      mark?: { name?: string };
    };
    if (msg.event === "media" && typeof msg.media?.payload === "string") {
      this.framesReceived++;
      call.playback.audio(Buffer.from(msg.media.payload, "base64"));
      if (call.awaitingSince !== undefined && !call.receivedSinceSpeech) {
        call.receivedSinceSpeech = true;
        this.answerLatency.push(performance.now() - call.awaitingSince);
        call.awaitingSince = undefined;
      }
    } else if (msg.event === "mark" && typeof msg.mark?.name === "string") {
      call.playback.mark(msg.mark.name);
    } else if (msg.event === "clear") {
      this.clears++;
      call.playback.clear();
    }
  }
}
