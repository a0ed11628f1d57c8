import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { type App, configuredProviders, createApp } from "../../src/app.js";
import { TalkClient } from "../../src/client/talk-client.js";
import { validateConfig } from "../../src/config/load-config.js";
import { TalkError } from "../../src/core/errors.js";
import type { AudioChunk } from "../../src/core/audio-chunk.js";
import type { TtsProvider, TtsRequest } from "../../src/core/provider-types.js";
import { EspeakTtsProvider } from "../../src/providers/espeak-ng/espeak-tts.js";

const PLANTED = "PLANTED-SECRET-7f3a9c";
const READER = "reader-token-0123456789abcdef";
const WRITER = "writer-token-0123456789abcdef";

/** espeak-ng behind a switch: while `failing`, every synthesis fails as an unreachable provider would. */
class SwitchTts implements TtsProvider {
  readonly id = "switch";
  readonly kind = "tts" as const;
  readonly label = "espeak-ng behind a switch";
  readonly #espeak = new EspeakTtsProvider();
  readonly capabilities = this.#espeak.capabilities;
  failing = false;
  health() {
    return this.#espeak.health();
  }
  async *synthesize(request: TtsRequest): AsyncIterable<AudioChunk> {
    if (this.failing) throw new TalkError("provider_unavailable", "the TTS endpoint answered 503");
    yield* this.#espeak.synthesize(request);
  }
}

let app: App | undefined;
let dataDir: string | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function start(): Promise<{ app: App; url: string; tts: SwitchTts; logs: string[] }> {
  dataDir = mkdtempSync(join(tmpdir(), "talkgate-ready-"));
  const loaded = validateConfig(
    {
      server: { host: "127.0.0.1", port: 0 },
      auth: {
        tokens: [
          { name: "reader", token: READER, scopes: ["read"] },
          { name: "writer", token: WRITER, scopes: ["write"] },
        ],
      },
      dataDir,
      runtime: { providerFailureThreshold: 3 },
      agent: {
        endpoint: { baseUrl: `http://127.0.0.1:9/v1?api_key=${PLANTED}`, model: "m", apiKey: PLANTED },
      },
      talk: {
        provider: "switch",
        providers: {
          speech: { baseUrl: `http://127.0.0.1:9/v1?api_key=${PLANTED}`, apiKey: PLANTED, stt: {} },
          other: { connectionString: `Server=x;Password=${PLANTED}` },
        },
        realtime: {
          providers: {
            openai: { apiKey: PLANTED, baseUrl: `https://user:${PLANTED}@127.0.0.1:9/v1` },
            acme: { headers: { Authorization: `Bearer ${PLANTED}` }, secretAccessKey: PLANTED },
          },
        },
      },
    },
    { env: {} },
  );
  const tts = new SwitchTts();
  const logs: string[] = [];
  const logger = pino(
    { level: "info" },
    new Writable({
      write(chunk: Buffer, _e, done) {
        logs.push(chunk.toString());
        done();
      },
    }),
  );
  const created = await createApp(loaded, {
    providers: [...configuredProviders(loaded.config), tts],
    logger,
  });
  const { urls } = await created.listen({ port: 0 });
  app = created;
  return { app: created, url: urls[0] as string, tts, logs };
}

async function readyz(url: string): Promise<{
  status: number;
  body: { ok: boolean; checks: Record<string, { ok: boolean; detail?: string }> };
  text: string;
}> {
  const res = await fetch(`${url}/readyz`);
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as never, text };
}

describe("/readyz and talk.config", () => {
  it("/readyz shows no planted secret; a required provider failing in a row makes it 503 naming the check, a success brings it back", async () => {
    const { url, tts } = await start();
    const first = await readyz(url);
    expect(first.text).not.toContain(PLANTED);
    expect(
      first.body.checks["provider:agent:openai-compatible"]?.detail ?? JSON.stringify(first.body),
    ).toContain("?[redacted]");
    expect(first.status).toBe(200);

    const client = await TalkClient.connect(`${url.replace(/^http/, "ws")}/talk`, { token: WRITER });
    try {
      tts.failing = true;
      for (let i = 0; i < 3; i++) {
        await expect(client.request("talk.speak", { text: "hello" })).rejects.toMatchObject({
          code: "provider_unavailable",
        });
      }
      const failing = await readyz(url);
      expect(failing.status).toBe(503);
      expect(failing.body.checks["provider:tts:switch"]).toMatchObject({ ok: false });
      expect(failing.body.checks["provider:tts:switch"]?.detail).toMatch(
        /failing: 3 requests in a row failed/,
      );
      expect(failing.text).not.toContain("503");

      tts.failing = false;
      const spoken = await client.request("talk.speak", { text: "hello" });
      expect(spoken.bytes).toBeGreaterThan(0);
      const back = await readyz(url);
      expect(back.status).toBe(200);
      expect(back.body.checks["provider:tts:switch"]?.ok).toBe(true);
    } finally {
      await client.close();
    }
  });

  it("talk.config for a read token and the /metrics text hold no planted secret", async () => {
    const { url, logs } = await start();
    const client = await TalkClient.connect(`${url.replace(/^http/, "ws")}/talk`, { token: READER });
    try {
      const config = await client.request("talk.config", {});
      const text = JSON.stringify(config);
      expect(text).not.toContain(PLANTED);
      expect(text).toContain("[redacted]");
    } finally {
      await client.close();
    }
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).not.toContain(PLANTED);
    expect(logs.join("")).not.toContain(PLANTED);
    // Free-form realtime settings nothing reads are not refused (seed 001) but said at start.
    expect(logs.join("")).toContain("configure no provider");
  });
});
