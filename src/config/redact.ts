/**
 * The one secret redaction of the process: `talk.config` for non-admin
 * callers, `/readyz` details, every log line of the app's logger, and doctor
 * output all go through `redactSecrets`.
 *
 * With a schema (the configuration's own, config-schema.ts), a field is
 * secret because the schema declares it (`secretString()`), and a free-form
 * part of the schema (provider settings the seeds leave open) is secret as a
 * whole unless it is one of the known shapes the schema names for it. Without
 * a schema (log objects, health details) a key is secret by its name. Either
 * way every string loses the credentials and the query of any URL in it.
 */
import { z } from "zod";

export const REDACTED = "[redacted]";

/** How the configuration schema marks what it holds: a secret value, or a free-form object. */
export type SecretMeta =
  | { readonly secret: true }
  | {
      readonly freeForm: true;
      /** The schema of a free-form value of a known shape (shown field by field); undefined: secret as a whole. */
      readonly knownShape?: (value: unknown, key: string | undefined) => z.ZodType | undefined;
    };

/** Where the configuration schema marks its secrets and free-form parts (schema node -> mark). */
const marks = new WeakMap<object, SecretMeta>();

/** Marks a configuration field as a secret (a key, a token): never echoed, never logged. */
export function secret<T extends z.ZodType>(schema: T): T {
  marks.set(schema, { secret: true });
  return schema;
}

/**
 * Marks a free-form object (settings the seeds leave open): secret as a whole
 * when echoed, unless `knownShape` gives the schema of a value it recognizes.
 */
export function freeForm<T extends z.ZodType>(
  schema: T,
  knownShape?: (value: unknown, key: string | undefined) => z.ZodType | undefined,
): T {
  marks.set(schema, knownShape ? { freeForm: true, knownShape } : { freeForm: true });
  return schema;
}

/** Normalized names that hold credentials (`api_key`, `secretAccessKey`, `Authorization`, `credentials.pass`...). */
const SECRET_NAME =
  /(key|keys|token|secret|secrets|password|passwords|passwd|pass|pwd|passphrase|credential|credentials|authorization|bearer|cookie|cookies|connectionstring|dsn|signature|sig)$/;

/** Whether a key names a secret (case, dashes and underscores ignored). */
export function isSecretKey(key: string): boolean {
  return SECRET_NAME.test(key.toLowerCase().replace(/[-_.\s]/g, ""));
}

const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;
const BEARER_IN_TEXT = /\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}/gi;
const KEY_LIKE = /\b(sk|ek|rk)-[A-Za-z0-9_*.-]{4,}/g;
const PEM_PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g;

/** One URL without its credentials and query: `https://[redacted]@host/path?[redacted]`. Anything else unchanged. */
export function redactUrl(value: string): string {
  const hasUserinfo = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(value);
  const queryAt = value.search(/[?#]/);
  if (!hasUserinfo && queryAt < 0) return value;
  let out = value;
  if (hasUserinfo) out = out.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, `$1${REDACTED}@`);
  const q = out.search(/[?#]/);
  if (q >= 0) out = `${out.slice(0, q)}?${REDACTED}`;
  return out;
}

/** Free text with every URL redacted, bearer credentials and provider-style keys hidden. */
export function redactText(text: string): string {
  return text
    .replace(URL_IN_TEXT, (url) => redactUrl(url))
    .replace(BEARER_IN_TEXT, (_m, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(KEY_LIKE, REDACTED)
    .replace(PEM_PRIVATE_KEY, REDACTED);
}

/**
 * Deep copy of `value` with secrets replaced by "[redacted]": declared by
 * `schema` when one is given, by key name otherwise (and always by name as a
 * second fence); URLs in every string lose credentials and query.
 */
export function redactSecrets<T>(value: T, schema?: z.ZodType): T {
  return walk(value, schema, undefined) as T;
}

function walk(value: unknown, schema: z.ZodType | undefined, key: string | undefined): unknown {
  if (value === undefined || value === null) return value;
  const node = schema === undefined ? undefined : unwrap(schema);
  const meta = node === undefined ? undefined : marks.get(node);
  if (meta && "secret" in meta) return REDACTED;
  if (meta && "freeForm" in meta) {
    const known = meta.knownShape?.(value, key);
    return known === undefined ? REDACTED : walk(value, known, key);
  }
  // Counts (`inputTokens: 12`) are not credentials; strings and objects under a secret name are.
  if (key !== undefined && isSecretKey(key) && typeof value !== "number" && typeof value !== "boolean")
    return REDACTED;
  if (node !== undefined && isOpaque(node)) return REDACTED;
  if (typeof value === "string") return redactText(value);
  if (Array.isArray(value)) return value.map((v) => walk(v, childOf(node, undefined), undefined));
  if (value instanceof Error) return redactError(value);
  if (typeof value === "object" && isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = walk(v, childOf(node, k), k);
    return out;
  }
  return value;
}

/** An Error as a log object: type, message and stack redacted, its code kept. */
function redactError(err: Error): Record<string, unknown> {
  const code = (err as { code?: unknown }).code;
  return {
    type: err.name,
    message: redactText(err.message),
    ...(err.stack !== undefined ? { stack: redactText(err.stack) } : {}),
    ...(typeof code === "string" ? { code } : {}),
  };
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** The parts of a zod schema's definition the walk reads. */
interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  valueType?: z.ZodType;
  element?: z.ZodType;
  catchall?: z.ZodType;
}

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

/** The schema under optional / default / prefault / nullable / readonly / pipe wrappers (marks are looked up on each). */
function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (let i = 0; i < 16; i++) {
    if (marks.has(current)) return current;
    const def = defOf(current);
    const inner =
      def.type === "pipe"
        ? def.in
        : ["optional", "default", "prefault", "nullable", "readonly", "catch", "nonoptional"].includes(
              def.type,
            )
          ? def.innerType
          : undefined;
    if (!inner) return current;
    current = inner;
  }
  return current;
}

/** A schema node that holds values it does not describe (unknown, any): secret as a whole. */
function isOpaque(schema: z.ZodType): boolean {
  const type = defOf(schema).type;
  return type === "unknown" || type === "any";
}

/** The schema of a child (object field, record value, array element); undefined when the schema says nothing. */
function childOf(schema: z.ZodType | undefined, key: string | undefined): z.ZodType | undefined {
  if (schema === undefined) return undefined;
  const def = defOf(schema);
  if (def.type === "object" && key !== undefined) return def.shape?.[key] ?? def.catchall ?? OPAQUE;
  if (def.type === "record") return def.valueType;
  if (def.type === "array") return def.element;
  return undefined;
}

/** What an object key the schema does not name is treated as: opaque, so secret as a whole. */
const OPAQUE = z.unknown();

/** One field of a schema as the redaction sees it: its path (`*` for a record's values, `[]` for array items). */
export interface SchemaField {
  path: string;
  /** Declared secret, or a free-form object (secret as a whole unless of a known shape). */
  mark: "secret" | "free-form" | undefined;
}

/** Every field of `schema` down to its leaves (or to a marked node), for the test that keeps the marks honest. */
export function schemaFields(schema: z.ZodType, path = ""): SchemaField[] {
  const node = unwrap(schema);
  const meta = marks.get(node);
  if (meta) return [{ path, mark: "secret" in meta ? "secret" : "free-form" }];
  const def = defOf(node);
  const at = (k: string): string => (path ? `${path}.${k}` : k);
  if (def.type === "object" && def.shape)
    return Object.entries(def.shape).flatMap(([k, child]) => schemaFields(child, at(k)));
  if (def.type === "record" && def.valueType) return schemaFields(def.valueType, at("*"));
  if (def.type === "array" && def.element) return schemaFields(def.element, at("[]"));
  return [{ path, mark: undefined }];
}
