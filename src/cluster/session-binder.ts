import { toTalkError } from "../core/index.js";
import type { TalkLogger } from "../core/index.js";
import { NOOP_LOGGER } from "../core/index.js";
import type { TalkRuntime } from "../core/index.js";
import type { TalkEvent, TerminalReason } from "../core/index.js";
import type { Coordinator } from "./coordinator.js";

/** What the binder needs from the process: the runtime, the coordinator, and how to close a session here. */
export interface SessionBinderInputs {
  runtime: Pick<TalkRuntime, "subscribeAll" | "getSession">;
  coordinator: Coordinator;
  /**
   * Closes a session this worker runs (through its surface's controller when
   * it has one, so providers and output are torn down too). Default: the
   * core session's close().
   */
  closeLocal?: (sessionId: string, reason: TerminalReason, message: string) => Promise<void>;
  logger?: TalkLogger;
}

/**
 * Binds the Talk runtime to the cluster, for every surface at once (Gateway,
 * telephony, meetings all create sessions through the runtime):
 *
 * - a session is claimed in the directory when it is created here
 *   (`session.created`), and released after its `session.closed` was published;
 * - every event of a session owned here is published for remote subscribers
 *   (metadata only: audio never travels in events, so nothing per input audio
 *   frame reaches Redis, and publishing never blocks);
 * - a lease this worker lost (`lease-lost`: it was cut off longer than the TTL)
 *   or a session declared lost (`session-lost`) closes the local session with
 *   reason `owner_lost`, which revokes its join tokens.
 *
 * Core never imports this: it only sees runtime.subscribeAll listeners.
 */
export class SessionBinder {
  readonly #in: Required<Omit<SessionBinderInputs, "logger">> & { logger: TalkLogger };
  readonly #claims = new Map<string, Promise<void>>();
  readonly #off: (() => void)[] = [];
  #closed = false;

  constructor(inputs: SessionBinderInputs) {
    this.#in = {
      runtime: inputs.runtime,
      coordinator: inputs.coordinator,
      closeLocal:
        inputs.closeLocal ??
        (async (sessionId, reason, message) => {
          await inputs.runtime.getSession(sessionId)?.close(reason, message);
        }),
      logger: inputs.logger ?? NOOP_LOGGER,
    };
    const { runtime, coordinator } = this.#in;
    this.#off.push(runtime.subscribeAll((event, line) => this.#onEvent(event, line)));
    this.#off.push(coordinator.on("lease-lost", (e) => this.#lost(e.sessionId, `lease ${e.reason}`)));
    this.#off.push(
      coordinator.on("session-lost", (e) => this.#lost(e.sessionId, `owner ${e.workerId} lost`)),
    );
  }

  /**
   * Resolves once the session's claim is settled (written, or held locally
   * while Redis is down); rejects with the claim's error (e.g. shutting_down
   * while draining). Sessions not created here resolve at once.
   */
  claimed(sessionId: string): Promise<void> {
    return this.#claims.get(sessionId) ?? Promise.resolve();
  }

  /** Stops binding (the coordinator's own close() releases the leases). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const off of this.#off.splice(0)) off();
    this.#claims.clear();
  }

  #onEvent(event: TalkEvent, line: string | undefined): void {
    const { coordinator, logger } = this.#in;
    if (event.type === "session.created") {
      const claim = coordinator.claim(event.sessionId).then(
        () => undefined,
        (err: unknown) => {
          logger.warn({ err, sessionId: event.sessionId }, "session claim failed");
          throw toTalkError(err);
        },
      );
      // Nobody may await it (a session created outside the Gateway): no unhandled rejection.
      claim.catch(() => undefined);
      this.#claims.set(event.sessionId, claim);
    }
    coordinator.publishEvent(event, line);
    if (event.type === "session.closed") {
      const sessionId = event.sessionId;
      const claim = this.#claims.get(sessionId) ?? Promise.resolve();
      this.#claims.delete(sessionId);
      // After the claim settled and after this turn's event batch went out, so
      // the terminal event is in the stream before the lease disappears.
      void claim
        .catch(() => undefined)
        .then(() => new Promise((resolve) => setImmediate(resolve)))
        .then(() => coordinator.release(sessionId))
        .catch((err: unknown) => logger.warn({ err, sessionId }, "session release failed"));
    }
  }

  #lost(sessionId: string, why: string): void {
    const session = this.#in.runtime.getSession(sessionId);
    if (!session || session.state !== "active") return;
    this.#in.logger.warn({ sessionId, why }, "session lost its lease; closing it here");
    void this.#in
      .closeLocal(sessionId, "owner_lost", `The session's lease was lost (${why}).`)
      .catch((err: unknown) => this.#in.logger.error({ err, sessionId }, "closing a lost session failed"));
  }
}
