/**
 * Environment overrides, applied over the config file before validation.
 * Table-driven so that later surfaces add a row, not a branch. Values are
 * parsed here so that a bad value names the variable, not the config key.
 */

type Parser = (raw: string) => unknown;

export interface EnvOverride {
  /** Environment variable name. */
  env: string;
  /** Dotted config path it sets. */
  path: string;
  parse: Parser;
  /** Whether the value is a secret (never echoed). */
  secret?: boolean;
}

const asString: Parser = (raw) => raw;
const asList: Parser = (raw) =>
  raw
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
const asPort: Parser = (raw) => {
  if (!/^\d+$/.test(raw)) throw new Error(`must be a port number, got "${raw}"`);
  const n = Number(raw);
  if (n > 65_535) throw new Error(`must be a port number (0-65535), got ${n}`);
  return n;
};

const asWorkers: Parser = (raw) => {
  if (raw === "auto") return raw;
  if (!/^\d+$/.test(raw)) throw new Error(`must be a whole number or "auto", got "${raw}"`);
  return Number(raw);
};

export const ENV_OVERRIDES: readonly EnvOverride[] = [
  { env: "PORT", path: "server.port", parse: asPort },
  { env: "HOST", path: "server.host", parse: asString },
  { env: "TALKGATE_WORKERS", path: "server.workers", parse: asWorkers },
  { env: "PUBLIC_URL", path: "server.publicUrl", parse: asString },
  { env: "REDIS_URL", path: "redis.url", parse: asString, secret: true },
  { env: "TALKGATE_DATA_DIR", path: "dataDir", parse: asString },
  { env: "TALKGATE_ROLES", path: "cluster.roles", parse: asList },
  { env: "TALKGATE_WORKER_ID", path: "cluster.workerId", parse: asString },
  { env: "LOG_LEVEL", path: "log.level", parse: asString },
  { env: "LOG_FORMAT", path: "log.format", parse: asString },
  { env: "OPENAI_API_KEY", path: "talk.realtime.providers.openai.apiKey", parse: asString, secret: true },
  { env: "OPENAI_BASE_URL", path: "talk.realtime.providers.openai.baseUrl", parse: asString },
  { env: "XAI_API_KEY", path: "talk.realtime.providers.xai.apiKey", parse: asString, secret: true },
  { env: "GEMINI_API_KEY", path: "talk.realtime.providers.gemini.apiKey", parse: asString, secret: true },
  { env: "AGENT_BASE_URL", path: "agent.endpoint.baseUrl", parse: asString },
  { env: "AGENT_MODEL", path: "agent.endpoint.model", parse: asString },
  { env: "AGENT_API_KEY", path: "agent.endpoint.apiKey", parse: asString, secret: true },
  // An OpenAI-compatible speech provider, talk.providers["openai-compatible"] (docs/providers.md).
  { env: "STT_BASE_URL", path: "talk.providers.openai-compatible.stt.baseUrl", parse: asString },
  { env: "STT_MODEL", path: "talk.providers.openai-compatible.stt.model", parse: asString },
  { env: "STT_API_KEY", path: "talk.providers.openai-compatible.stt.apiKey", parse: asString, secret: true },
  { env: "TTS_BASE_URL", path: "talk.providers.openai-compatible.tts.baseUrl", parse: asString },
  { env: "TTS_MODEL", path: "talk.providers.openai-compatible.tts.model", parse: asString },
  { env: "TTS_VOICE", path: "talk.providers.openai-compatible.tts.voice", parse: asString },
  { env: "TTS_API_KEY", path: "talk.providers.openai-compatible.tts.apiKey", parse: asString, secret: true },
  { env: "TWILIO_ACCOUNT_SID", path: "telephony.twilio.accountSid", parse: asString },
  { env: "TWILIO_AUTH_TOKEN", path: "telephony.twilio.authToken", parse: asString, secret: true },
  {
    env: "TWILIO_SHARED_KEY_SECRETS",
    path: "telephony.twilio.sharedKeySecrets",
    parse: asList,
    secret: true,
  },
  { env: "TELNYX_PUBLIC_KEY", path: "telephony.telnyx.publicKey", parse: asString },
  { env: "TELNYX_API_KEY", path: "telephony.telnyx.apiKey", parse: asString, secret: true },
  { env: "TELNYX_CONNECTION_ID", path: "telephony.telnyx.connectionId", parse: asString },
  { env: "TELNYX_ACCOUNT_SID", path: "telephony.telnyx.accountSid", parse: asString },
  { env: "PLIVO_AUTH_ID", path: "telephony.plivo.authId", parse: asString },
  { env: "PLIVO_AUTH_TOKEN", path: "telephony.plivo.authToken", parse: asString, secret: true },
  { env: "VONAGE_APPLICATION_ID", path: "telephony.vonage.applicationId", parse: asString },
  { env: "VONAGE_PRIVATE_KEY", path: "telephony.vonage.privateKey", parse: asString, secret: true },
  {
    env: "VONAGE_SIGNATURE_SECRET",
    path: "telephony.vonage.signatureSecret",
    parse: asString,
    secret: true,
  },
  { env: "MEETINGS_WEBHOOK_SECRET", path: "meetings.webhook.secret", parse: asString, secret: true },
];

/**
 * `TALKGATE_ADMIN_TOKEN` adds one bearer token with every scope, for
 * deployments that keep secrets out of the config file.
 */
const ADMIN_TOKEN_ENV = "TALKGATE_ADMIN_TOKEN";

export function applyEnvironment(
  config: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): { value: Record<string, unknown>; applied: string[]; errors: string[] } {
  const applied: string[] = [];
  const errors: string[] = [];
  for (const row of ENV_OVERRIDES) {
    const raw = env[row.env];
    if (raw === undefined || raw === "") continue;
    try {
      setPath(config, row.path, row.parse(raw));
      applied.push(row.env);
    } catch (err) {
      errors.push(`${row.env} (${row.path}): ${(err as Error).message}`);
    }
  }
  const adminToken = env[ADMIN_TOKEN_ENV];
  if (adminToken) {
    const auth = (config.auth ?? {}) as Record<string, unknown>;
    if (typeof auth !== "object" || auth === null) {
      errors.push(`${ADMIN_TOKEN_ENV}: config key auth must be an object`);
    } else {
      const tokens = Array.isArray(auth.tokens) ? auth.tokens : [];
      auth.tokens = [...tokens, { name: "env-admin", token: adminToken, scopes: ["read", "write", "admin"] }];
      config.auth = auth;
      applied.push(ADMIN_TOKEN_ENV);
    }
  }
  return { value: config, applied, errors };
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split(".");
  let node: Record<string, unknown> = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (next === undefined) {
      node[key] = {};
    } else if (typeof next !== "object" || next === null || Array.isArray(next)) {
      throw new Error(`config key ${key} must be an object to set ${path}`);
    }
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]!] = value;
}
