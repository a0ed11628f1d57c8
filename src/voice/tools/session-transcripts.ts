import type { AgentMessage } from "../../core/index.js";
import { ConversationHistory } from "../pipelines/agent-context.js";
import type { TalkEvent } from "../../core/index.js";

/**
 * Recent transcript per session, read from the sessions' own events
 * (final user / assistant transcripts and answers), so a consult started by a
 * realtime provider's agent_consult call gets the same context an stt-tts
 * answer gets. Fed by runtime.subscribeAll; forgets a session when it closes.
 */
export class SessionTranscripts {
  readonly #sessions = new Map<string, ConversationHistory>();
  readonly #keep: number;

  /** Keeps at least `keep` entries per session. */
  constructor(keep = 10) {
    this.#keep = keep;
  }

  observe(event: TalkEvent): void {
    if (event.type === "session.closed") {
      this.#sessions.delete(event.sessionId);
      return;
    }
    let said: { role: "user" | "assistant"; text: string } | undefined;
    if (event.type === "transcript.done") said = event.payload;
    else if (event.type === "output.text.done") said = { role: "assistant", text: event.payload.text };
    if (typeof said?.text !== "string" || (said.role !== "user" && said.role !== "assistant")) return;
    let history = this.#sessions.get(event.sessionId);
    if (!history) {
      history = new ConversationHistory(this.#keep);
      this.#sessions.set(event.sessionId, history);
    }
    history.add(said.role, said.text);
  }

  history(sessionId: string): readonly AgentMessage[] {
    return this.#sessions.get(sessionId)?.entries ?? [];
  }
}
