/**
 * The messages Twilio itself sends on a Media Stream (connected, start,
 * media, dtmf, mark echoes, stop), in their documented shapes. Used by
 * whatever plays the carrier's side: the `talkgate call` demo and the test
 * client. One builder per stream keeps Twilio's running counters
 * (`sequenceNumber` over all messages, `chunk` over media).
 */

export interface CarrierStreamIdentity {
  streamSid: string;
  callSid: string;
  accountSid: string;
}

export type CarrierMessage = Record<string, unknown>;

export class CarrierMessageBuilder {
  readonly #id: CarrierStreamIdentity;
  #seq = 0;
  #chunk = 0;

  constructor(identity: CarrierStreamIdentity) {
    this.#id = identity;
  }

  connected(): CarrierMessage {
    return { event: "connected", protocol: "Call", version: "1.0.0" };
  }

  /** `start` for an inbound u-law 8 kHz stream carrying the TwiML `<Parameter>`s. */
  start(customParameters: Record<string, string>): CarrierMessage {
    const { accountSid, streamSid, callSid } = this.#id;
    return {
      event: "start",
      sequenceNumber: this.#next(),
      start: {
        accountSid,
        streamSid,
        callSid,
        tracks: ["inbound"],
        mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
        customParameters,
      },
      streamSid,
    };
  }

  /** One inbound `media` frame (20 ms = 160 bytes of u-law). */
  media(frame: Uint8Array): CarrierMessage {
    const chunk = ++this.#chunk;
    return {
      event: "media",
      sequenceNumber: this.#next(),
      media: {
        track: "inbound",
        chunk: String(chunk),
        timestamp: String(chunk * 20),
        payload: Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).toString("base64"),
      },
      streamSid: this.#id.streamSid,
    };
  }

  dtmf(digit: string): CarrierMessage {
    return {
      event: "dtmf",
      streamSid: this.#id.streamSid,
      sequenceNumber: this.#next(),
      dtmf: { track: "inbound_track", digit },
    };
  }

  /** The echo of one of our marks, once the audio before it has played. */
  mark(name: string): CarrierMessage {
    return { event: "mark", sequenceNumber: this.#next(), streamSid: this.#id.streamSid, mark: { name } };
  }

  stop(): CarrierMessage {
    const { accountSid, callSid, streamSid } = this.#id;
    return { event: "stop", sequenceNumber: this.#next(), stop: { accountSid, callSid }, streamSid };
  }

  #next(): string {
    return String(++this.#seq);
  }
}
