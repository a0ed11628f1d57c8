import { pcm16FromBytes } from "../../codecs/index.js";
import type { RealtimeProviderEvent } from "../../core/index.js";
import type { TalkSession } from "../../core/index.js";
import type { OutputAudioPayload } from "../../core/index.js";
import type { AudioFormat } from "../../core/index.js";
import type { AudioChunk } from "../../core/index.js";
import { audioByteLength, audioFromBytes, durationMs, pcmChunk } from "../../core/index.js";
import { PcmConverter } from "./pcm-converter.js";
import { sameAudioFormat } from "../../core/index.js";
import type { SinkSlot } from "./pipeline-support.js";

/** What the output bookkeeping needs: narrow, no back-reference to the pipeline. */
export interface RealtimeOutputContext {
  session: TalkSession;
  sink: SinkSlot;
  /** The session's output format: what the sink receives. */
  format: AudioFormat;
  /** Coalescing of output.audio.delta events (PipelineOptions.outputDeltaIntervalMs). */
  deltaIntervalMs: number;
  /** An item stopped playing: played out (after its output.audio.done) or cancelled (forget). */
  ended?(): void;
}

interface OutputItem {
  turnId: string;
  /** The provider response the item belongs to: parentId of its events. */
  responseId: string;
  converter: PcmConverter | undefined;
  bytes: number;
  /** Bytes delivered but not reported in an output.audio.delta yet. */
  unreported: number;
  /** performance.now() of the last output.audio.delta; -Infinity before the first. */
  reportedAt: number;
}

/** Remembered cancelled output items, so their late audio never reaches the sink. */
const CANCELLED_ITEM_MEMORY = 64;

/**
 * The assistant's audio items of one realtime session: each provider item
 * becomes the session's active output (output.audio.started), its audio is
 * converted to the session's format and written to the sink, its bytes are
 * reported in coalesced output.audio.delta events, and it ends with
 * output.audio.done once the sink confirms it was heard. Cancelled items are
 * remembered, so audio the provider still sends for them is dropped.
 */
export class RealtimeOutput {
  readonly #ctx: RealtimeOutputContext;
  readonly #items = new Map<string, OutputItem>();
  readonly #cancelled = new Set<string>();
  /** Provider responses cancelled, so items they still start (audio in flight at the cancel) never play. */
  readonly #cancelledResponses = new Set<string>();

  constructor(ctx: RealtimeOutputContext) {
    this.#ctx = ctx;
  }

  /** True for an item that was cancelled (its late text and audio are dropped). */
  isCancelled(itemId: string): boolean {
    return this.#cancelled.has(itemId);
  }

  /** Records a cancelled provider response: none of its audio plays later, even of items not begun yet. */
  cancelResponse(responseId: string): void {
    remember(this.#cancelledResponses, responseId);
  }

  /** True for a response that was cancelled (its late items, text and tool calls are dropped). */
  isCancelledResponse(responseId: string): boolean {
    return this.#cancelledResponses.has(responseId);
  }

  audioDelta(event: Extract<RealtimeProviderEvent, { type: "audio_delta" }>): void {
    const { session, format } = this.#ctx;
    if (this.#cancelled.has(event.itemId)) return; // late audio of an interrupted answer
    if (this.#cancelledResponses.has(event.responseId)) {
      // In flight when its response was cancelled, before any of it played: it never does.
      remember(this.#cancelled, event.itemId);
      return;
    }
    const turn = session.activeTurn;
    if (!turn) return;
    let item = this.#items.get(event.itemId);
    if (!item || session.activeOutput?.itemId !== event.itemId) {
      session.beginOutput({ itemId: event.itemId, turnId: turn.id });
      item = {
        turnId: turn.id,
        responseId: event.responseId,
        converter: undefined,
        bytes: 0,
        unreported: 0,
        reportedAt: -Infinity,
      };
      this.#items.set(event.itemId, item);
      session.emit({
        type: "output.audio.started",
        turnId: turn.id,
        itemId: event.itemId,
        parentId: event.responseId,
        payload: { format: { ...format } },
      });
    }
    if (sameAudioFormat(event.format, format)) {
      // The session's own format: samples as they are, or an encoded passthrough (u-law in, u-law out).
      this.#deliver(event.itemId, item, audioFromBytes(event.data, format));
      return;
    }
    if (!item.converter || !sameAudioFormat(item.converter.from, event.format)) {
      item.converter?.close();
      item.converter = new PcmConverter(event.format, format);
    }
    this.#deliver(event.itemId, item, pcmChunk(item.converter.convert(pcm16FromBytes(event.data)), format));
  }

  /** The provider finished the item: output.audio.done once the sink has played it (it stays interruptible until then). */
  audioDone(itemId: string): void {
    const { session, sink, format } = this.#ctx;
    const item = this.#items.get(itemId);
    if (!item) return;
    this.#items.delete(itemId);
    if (item.converter) {
      this.#deliver(itemId, item, pcmChunk(item.converter.flush(), format));
      item.converter.close();
    }
    this.#report(itemId, item);
    const output = session.activeOutput;
    const signal = output?.itemId === itemId ? output.signal : session.signal;
    const finish = (): void => {
      if (signal.aborted || this.#cancelled.has(itemId) || session.state !== "active") return;
      const payload: OutputAudioPayload = {
        format: { ...format },
        bytes: item.bytes,
        durationMs: durationMs(format, item.bytes),
      };
      session.emit({
        type: "output.audio.done",
        turnId: item.turnId,
        itemId,
        parentId: item.responseId,
        final: true,
        payload,
      });
      session.endOutput(itemId);
      this.#ctx.ended?.();
    };
    if (sink.confirmsPlayback) void sink.drained(itemId, signal).then(finish);
    else finish();
  }

  /** Reports what an item delivered before it is cancelled, while its deltas are still current. */
  reportPending(itemId: string): void {
    const item = this.#items.get(itemId);
    if (item) this.#report(itemId, item);
  }

  /** Forgets a cancelled item: its converter is freed and its late audio dropped. */
  forget(itemId: string): void {
    remember(this.#cancelled, itemId);
    this.#items.get(itemId)?.converter?.close();
    this.#items.delete(itemId);
    this.#ctx.ended?.();
  }

  /** Reports every pending delta (before the session closes). */
  reportAll(): void {
    for (const [itemId, item] of this.#items) this.#report(itemId, item);
  }

  /** Frees every converter. */
  close(): void {
    for (const item of this.#items.values()) item.converter?.close();
    this.#items.clear();
  }

  #deliver(itemId: string, item: OutputItem, audio: AudioChunk): void {
    const bytes = audioByteLength(audio);
    if (bytes === 0 || this.#cancelled.has(itemId)) return;
    item.bytes += bytes;
    item.unreported += bytes;
    this.#ctx.sink.current()?.write(audio, { turnId: item.turnId, itemId });
    const now = performance.now();
    if (now - item.reportedAt >= this.#ctx.deltaIntervalMs) this.#report(itemId, item, now);
  }

  /** One output.audio.delta for the bytes delivered since the last one (none when nothing is pending). */
  #report(itemId: string, item: OutputItem, now = performance.now()): void {
    if (item.unreported === 0) return;
    const { format } = this.#ctx;
    const bytes = item.unreported;
    item.unreported = 0;
    item.reportedAt = now;
    const payload: OutputAudioPayload = {
      format: { ...format },
      bytes,
      durationMs: durationMs(format, bytes),
    };
    this.#ctx.session.emit({
      type: "output.audio.delta",
      turnId: item.turnId,
      itemId,
      parentId: item.responseId,
      payload,
    });
  }
}

/** Adds `key` to a set that keeps the newest CANCELLED_ITEM_MEMORY entries. */
function remember(set: Set<string>, key: string): void {
  set.add(key);
  if (set.size > CANCELLED_ITEM_MEMORY) {
    const oldest = set.values().next().value;
    if (oldest !== undefined) set.delete(oldest);
  }
}
