import { abortableDelay } from "../../core/index.js";
import { toTalkError } from "../../core/index.js";
import type { ProviderFault } from "../../core/index.js";
import { StallWatchdog } from "../faults/stall-watchdog.js";
import type { TalkLogger } from "../../core/index.js";
import type { RealtimeProviderEvent } from "../../core/index.js";
import type { TalkSession } from "../../core/index.js";
import type { TerminalReason } from "../../core/index.js";
import { ConversationHistory } from "./agent-context.js";
import type { PipelineFaults } from "./pipeline-options.js";

/** What the recovery stage needs from its pipeline: narrow, no back-reference to it. */
export interface RealtimeRecoveryContext {
  session: TalkSession;
  /** The leg's failure path; absent, a fatal failure closes the session as it always did. */
  faults: PipelineFaults | undefined;
  /** The trusted instructions of the first provider session. */
  instructions: string;
  /** Transcript entries kept for a new session's context. */
  historyEntries: number;
  logger: TalkLogger;
  /** True once the pipeline is closing. */
  closing(): boolean;
  /** Drops the provider session and the answer it was giving (output cancelled, line cleared). */
  drop(): void;
  /** Opens a new provider session with these instructions; rejects when it cannot. */
  open(instructions: string): Promise<void>;
  close(reason: TerminalReason): void;
}

/**
 * The realtime relay's side of the one failure path: it notices a provider
 * that stops sending (a stall watchdog over each response), keeps what was
 * said (the context of a new session), and on a fault drops the provider
 * session, tells the leg (the caller hears the apology) and, when the leg
 * says recover, reconnects with backoff, the conversation so far in the new
 * session's instructions, until `retries` attempts have failed (then the leg
 * hangs up). Without a failure path (a client's gateway session), a fatal
 * failure closes the session with reason "error".
 */
export class RealtimeRecovery {
  readonly #ctx: RealtimeRecoveryContext;
  readonly #history: ConversationHistory;
  readonly #watchdog: StallWatchdog;
  #recovering = false;

  constructor(ctx: RealtimeRecoveryContext) {
    this.#ctx = ctx;
    this.#history = new ConversationHistory(ctx.historyEntries);
    const limits = ctx.faults?.options;
    this.#watchdog = new StallWatchdog({
      firstByteTimeoutMs: limits?.firstByteTimeoutMs ?? 0,
      interChunkTimeoutMs: limits?.interChunkTimeoutMs ?? 0,
      onStall: (kind, ms) =>
        this.fault({
          kind: "stalled",
          provider: "realtime",
          message: `The realtime provider sent nothing for ${ms} ms (${kind === "first_byte" ? "no first audio" : "mid-answer"}).`,
        }),
    });
  }

  /** A new provider session is being opened after a fault. */
  get recovering(): boolean {
    return this.#recovering;
  }

  /** Every provider event: the watchdog follows each response, transcripts are kept. */
  observe(event: RealtimeProviderEvent): void {
    if (event.type === "transcript_done") this.#history.add(event.role, event.text);
    if (!this.#ctx.faults) return;
    switch (event.type) {
      case "response_started":
        this.#watchdog.expect();
        return;
      case "audio_delta":
      case "text_delta":
      case "transcript_delta":
      case "tool_call":
        this.#watchdog.progress();
        return;
      case "response_done":
        this.#watchdog.stop();
        return;
      default:
        return;
    }
  }

  /** Text the user typed or keyed (it reaches the provider as text, not as a transcript). */
  userText(text: string): void {
    this.#history.add("user", text);
  }

  /** A provider failure the event mapper saw: a fault with a failure path; otherwise reported, and closed when fatal. */
  failed(fault: ProviderFault, fatal: boolean): void {
    if (this.#ctx.faults) {
      this.fault(fault);
      return;
    }
    const { session } = this.#ctx;
    session.emit({
      type: "session.error",
      payload: {
        code:
          fault.kind === "connection_lost" && fault.upstreamCode === undefined
            ? "provider_unavailable"
            : "provider_error",
        message: fault.message,
        ...(fault.upstreamCode !== undefined ? { upstreamCode: fault.upstreamCode } : {}),
        fatal,
      },
    });
    if (fatal) this.#ctx.close("error");
  }

  /** The provider failed (refused, lost, an error, a stall): drop it, tell the leg, recover when it says so. */
  fault(fault: ProviderFault): void {
    const { faults, session } = this.#ctx;
    if (this.#ctx.closing() || session.state !== "active") return;
    if (!faults) {
      this.failed(fault, true);
      return;
    }
    this.#watchdog.stop();
    this.#ctx.drop();
    if (this.#recovering) return; // a reconnect in progress keeps trying
    if (faults.handler.fault(fault) === "recover") void this.#recover(fault);
  }

  stop(): void {
    this.#watchdog.stop();
  }

  /** Reconnects with backoff, up to `retries` times; then the leg hangs up. */
  async #recover(first: ProviderFault): Promise<void> {
    const { session, logger } = this.#ctx;
    const faults = this.#ctx.faults!;
    const { retries, retryBackoffMs } = faults.options;
    const gone = (): boolean => this.#ctx.closing() || session.state !== "active";
    this.#recovering = true;
    let last = first;
    try {
      for (let attempt = 0; attempt < retries; attempt++) {
        await abortableDelay(retryBackoffMs * 2 ** attempt, session.signal);
        if (gone()) return;
        try {
          await this.#ctx.open(this.#resumeInstructions());
          faults.handler.recovered();
          return;
        } catch (err) {
          if (gone()) return;
          last = { kind: "connect_failed", provider: "realtime", message: toTalkError(err).message };
          logger.warn(
            { sessionId: session.id, attempt: attempt + 1, err: last.message },
            "realtime provider reconnect failed",
          );
        }
      }
      faults.handler.lost(last);
    } catch {
      // Aborted: the session closed while waiting.
    } finally {
      this.#recovering = false;
    }
  }

  /** The instructions of a new session after a fault: the trusted ones, then the conversation so far. */
  #resumeInstructions(): string {
    const lines = this.#history.entries.map(
      (m) => `${m.role === "user" ? "Caller" : "Assistant"}: ${m.content}`,
    );
    return (
      `${this.#ctx.instructions}\n\nThe connection to you was interrupted and has been restored; the caller was told. ` +
      "Continue the same conversation without greeting again." +
      (lines.length > 0 ? ` The conversation so far, oldest first:\n${lines.join("\n")}` : "")
    );
  }
}
