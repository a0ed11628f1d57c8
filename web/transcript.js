/**
 * The live transcript of both sides, built only from talk.events: the
 * user's `transcript.delta` partials (appended, or replacing with `replace`)
 * and `transcript.done` finals; the assistant's `output.text.delta` /
 * `output.text.done`, marked interrupted when its output is cancelled.
 * One entry per user turn and per assistant item, in the order they began.
 */
export class Transcript {
  /**
   * @param {HTMLElement} list
   * @param {{who?(role: string, env: object): string, reveal?(el: HTMLElement): void}} [options]
   *   `who`: the label of a line (default "You" / "Assistant"); `reveal`: brings a changed line into view.
   */
  constructor(list, options = {}) {
    this.list = list;
    this.who = options.who ?? ((role) => (role === "user" ? "You" : "Assistant"));
    this.reveal = options.reveal ?? ((el) => el.scrollIntoView({ block: "end", behavior: "smooth" }));
    /** @type {Map<string, {role: string, turnId: string, itemId?: string, text: string, streamed: string, final: boolean, interrupted: boolean, el: HTMLElement}>} */
    this.entries = new Map();
  }

  clear() {
    this.entries.clear();
    this.list.replaceChildren();
  }

  /** Applies one talk.event; returns true when it changed the transcript. */
  apply(env) {
    const p = env.payload ?? {};
    switch (env.type) {
      case "transcript.delta": {
        if (p.role === "assistant") return this.#assistantDelta(env, p.text);
        const entry = this.#entry(`user:${env.turnId}`, "user", env);
        entry.text = p.replace ? String(p.text ?? "") : entry.text + String(p.text ?? "");
        entry.streamed = entry.text;
        this.#render(entry);
        return true;
      }
      case "transcript.done": {
        const text = String(p.text ?? "").trim();
        const role = p.role === "assistant" ? "assistant" : "user";
        const key = role === "user" ? `user:${env.turnId}` : this.#assistantKey(env);
        if (!text) {
          this.#remove(key);
          return true;
        }
        const entry = this.#entry(key, role, env);
        entry.text = text;
        entry.final = true;
        this.#render(entry);
        return true;
      }
      case "output.text.delta":
        return this.#assistantDelta(env, p.text);
      case "output.text.done": {
        const entry = this.#entry(this.#assistantKey(env), "assistant", env);
        entry.text = String(p.text ?? "");
        entry.final = true;
        this.#render(entry);
        return true;
      }
      case "output.audio.cancelled":
      case "turn.cancelled": {
        let changed = false;
        for (const entry of this.entries.values()) {
          if (entry.role !== "assistant" || entry.turnId !== env.turnId) continue;
          if (env.itemId && entry.itemId && entry.itemId !== env.itemId) continue;
          entry.interrupted = true;
          this.#render(entry);
          changed = true;
        }
        if (env.type === "turn.cancelled") {
          const user = this.entries.get(`user:${env.turnId}`);
          if (user && !user.final) this.#remove(`user:${env.turnId}`);
        }
        return changed;
      }
      default:
        return false;
    }
  }

  /** The page stopped an answer's playback itself (the user spoke over it): it was not all heard. */
  markInterrupted(itemId) {
    const entry = this.entries.get(`assistant:${itemId}`);
    if (!entry) return;
    entry.interrupted = true;
    this.#render(entry);
  }

  /** Plain data for tests and debugging. */
  snapshot() {
    return [...this.entries.values()].map(({ role, turnId, itemId, text, streamed, final, interrupted }) => ({
      role,
      turnId,
      itemId,
      text,
      streamed,
      final,
      interrupted,
    }));
  }

  #assistantKey(env) {
    return `assistant:${env.itemId ?? env.turnId}`;
  }

  #assistantDelta(env, text) {
    const entry = this.#entry(this.#assistantKey(env), "assistant", env);
    entry.streamed += String(text ?? "");
    if (!entry.final) entry.text = entry.streamed;
    this.#render(entry);
    return true;
  }

  #entry(key, role, env) {
    let entry = this.entries.get(key);
    if (entry) return entry;
    const el = document.createElement("li");
    el.className = `line ${role}`;
    const who = document.createElement("span");
    who.className = "who";
    who.textContent = this.who(role, env);
    const text = document.createElement("span");
    text.className = "text";
    el.append(who, text);
    entry = {
      role,
      turnId: env.turnId,
      itemId: role === "assistant" ? env.itemId : undefined,
      text: "",
      streamed: "",
      final: false,
      interrupted: false,
      el,
    };
    this.entries.set(key, entry);
    this.list.append(el);
    return entry;
  }

  #remove(key) {
    const entry = this.entries.get(key);
    if (!entry) return;
    entry.el.remove();
    this.entries.delete(key);
  }

  #render(entry) {
    entry.el.classList.toggle("partial", !entry.final && !entry.interrupted);
    entry.el.classList.toggle("interrupted", entry.interrupted);
    entry.el.querySelector(".text").textContent = entry.text || "…";
    this.reveal(entry.el);
  }
}
