/**
 * The documents a carrier fetches during a transfer (GET or POST):
 * - `<paths.briefing>?text=...`: what the person who picks up hears before
 *   the caller is connected: a document that speaks the text (Twilio's
 *   `<Number url>` whisper TwiML, Plivo's `confirmSound` XML, Vonage's
 *   `onAnswer` NCCO) or, for a carrier that plays an audio file (Telnyx
 *   `audio_url`), the text spoken by the local TTS as a WAV file;
 * - `<paths.transfer>?to=...&text=...`: the document a transferred call runs
 *   (Plivo's `aleg_url`): a dial of `to` whose callee hears the briefing.
 * Authenticated like the carrier's webhooks (`documentAuth: "webhook"`: the
 * carrier signs the URL, query included) or by the URL's own signature
 * (`"url"`, src/telephony/document-urls.ts). The text is at most 500
 * characters and only ever spoken.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { writeWav } from "../codecs/index.js";
import { LimitedLog, toTalkError, type AudioFormat, type TalkLogger } from "../core/index.js";
import type { PrerenderedSpeech } from "../voice/index.js";
import type { CarrierProtocol } from "./carrier/carrier-protocol.js";
import { webhookBodyParsers, webhookRequest } from "./carrier/webhook-request.js";
import { MAX_BRIEFING_CHARS, transferDocuments, type DocumentSigner } from "./document-urls.js";
import { isLoopbackAddress } from "./public-url.js";

export { MAX_BRIEFING_CHARS } from "./document-urls.js";

/** Speaks a line with the local TTS (the briefing of a carrier that plays audio files). */
export type RenderSpeech = (text: string) => Promise<PrerenderedSpeech>;

export interface BriefingRouteOptions {
  carrier: CarrierProtocol;
  publicUrl: string | undefined;
  signer: DocumentSigner;
  /** The local TTS, for `briefingAudio` carriers; without it their briefing answers 503. */
  renderSpeech?: RenderSpeech | undefined;
  logger: TalkLogger;
  /** The rate-limited warnings of refusals, shared by the surface's routes. Default: one of this route's own. */
  refusals?: LimitedLog;
}

/** What a briefing WAV holds: telephone speech, 16-bit PCM 8 kHz mono. */
const BRIEFING_FORMAT: AudioFormat = Object.freeze({ encoding: "pcm16", sampleRate: 8000, channels: 1 });

/** A transfer destination as configuration writes it: E.164, or a SIP URI. */
const DESTINATION = /^(?:\+?[0-9]{4,16}|sips?:[^\s<>"&]{3,200})$/;

export function briefingRoute(o: BriefingRouteOptions): FastifyPluginAsync {
  const { carrier, logger } = o;
  const refusals = o.refusals ?? new LimitedLog(logger);
  return async (app) => {
    const briefingPath = carrier.paths.briefing;
    const transferPath = carrier.paths.transfer;
    const hasBriefing = carrier.briefing !== undefined || carrier.briefingAudio === true;
    if (!(briefingPath && hasBriefing) && !(transferPath && carrier.transferDocument)) return;
    webhookBodyParsers(app, 65_536);

    const base = (request: FastifyRequest): string =>
      o.publicUrl ?? `http://${request.headers.host ?? "127.0.0.1"}`;
    const query = (request: FastifyRequest): Record<string, unknown> =>
      (request.query as Record<string, unknown> | undefined) ?? {};
    const authentic = async (request: FastifyRequest, path: string): Promise<boolean> => {
      if (carrier.documentAuth === "url") return o.signer.verify(path, query(request));
      const webhook = webhookRequest(request, base(request));
      return carrier.signed
        ? carrier.authenticate(webhook) === "ok"
        : isLoopbackAddress(request.socket.remoteAddress);
    };
    const guarded =
      (path: string, serve: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>) =>
      async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
        let ok = false;
        try {
          ok = await authentic(request, path);
        } catch (err) {
          logger.warn(
            { carrier: carrier.id, err: toTalkError(err).message },
            "transfer document: key unavailable",
          );
          return reply.code(503).type("text/plain").send("Unavailable");
        }
        if (!ok) {
          refusals.warn(
            `${carrier.id}:document:signature`,
            { carrier: carrier.id, path },
            "transfer document: signature rejected",
          );
          return reply.code(403).type("text/plain").send("Forbidden");
        }
        return serve(request, reply);
      };
    const textOf = (request: FastifyRequest): string | undefined => {
      const text = query(request)["text"];
      return typeof text === "string" && text.trim() !== "" && text.length <= MAX_BRIEFING_CHARS
        ? text
        : undefined;
    };

    if (briefingPath && hasBriefing) {
      const serve = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
        const text = textOf(request);
        if (text === undefined)
          return reply.code(400).type("text/plain").send(`text: 1-${MAX_BRIEFING_CHARS} characters`);
        if (carrier.briefing) {
          const doc = carrier.briefing(text);
          return reply.code(200).type(doc.contentType).send(doc.body);
        }
        if (!o.renderSpeech) return reply.code(503).type("text/plain").send("No local TTS for the briefing");
        try {
          const line = (await o.renderSpeech(text)).audioFor(BRIEFING_FORMAT);
          const pcm = new Int16Array(line.data.buffer, line.data.byteOffset, line.data.byteLength / 2);
          return reply
            .code(200)
            .type("audio/wav")
            .send(Buffer.from(writeWav(pcm, { sampleRate: 8000 })));
        } catch (err) {
          logger.warn({ carrier: carrier.id, err: toTalkError(err).message }, "briefing: speech failed");
          return reply.code(503).type("text/plain").send("The briefing could not be spoken");
        }
      };
      app.post(briefingPath, guarded(briefingPath, serve));
      app.get(briefingPath, guarded(briefingPath, serve));
    }

    const transferDocument = carrier.transferDocument?.bind(carrier);
    if (transferPath && transferDocument) {
      const serve = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
        const to = query(request)["to"];
        if (typeof to !== "string" || !DESTINATION.test(to))
          return reply.code(400).type("text/plain").send("to: a phone number or SIP URI");
        const text = textOf(request);
        const briefingUrl =
          text === undefined
            ? undefined
            : await transferDocuments(carrier, base(request), o.signer).briefingUrl(text);
        const doc = transferDocument(to, briefingUrl);
        return reply.code(200).type(doc.contentType).send(doc.body);
      };
      app.post(transferPath, guarded(transferPath, serve));
      app.get(transferPath, guarded(transferPath, serve));
    }
  };
}
