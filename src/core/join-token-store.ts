import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

export interface JoinTokenStoreOptions {
  /** Outstanding tokens kept; issuing beyond this forgets the oldest (default 8). */
  maxTokens?: number;
}

function sha256(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

/**
 * Join tokens of a managed room. Only SHA-256 hashes are held, compared in
 * constant time, and never exposed: the plaintext exists once, in the return
 * value of issue().
 */
export class JoinTokenStore {
  readonly #maxTokens: number;
  #hashes: Buffer[] = [];

  constructor(options: JoinTokenStoreOptions = {}) {
    this.#maxTokens = options.maxTokens ?? 8;
  }

  get size(): number {
    return this.#hashes.length;
  }

  issue(): string {
    const token = randomBytes(32).toString("base64url");
    this.#hashes.push(sha256(token));
    if (this.#hashes.length > this.#maxTokens) this.#hashes.shift();
    return token;
  }

  verify(token: unknown): boolean {
    if (typeof token !== "string" || token.length === 0) return false;
    const candidate = sha256(token);
    let match = false;
    // Every stored hash is compared so timing does not reveal which one matched.
    for (const hash of this.#hashes) {
      if (timingSafeEqual(candidate, hash)) match = true;
    }
    return match;
  }

  revoke(): void {
    this.#hashes = [];
  }
}
