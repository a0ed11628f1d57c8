/**
 * A local OTLP/HTTP trace receiver, written from the OTLP specification's
 * HTTP transport (POST `/v1/traces`, `application/json` bodies of an
 * ExportTraceServiceRequest: resourceSpans -> scopeSpans -> spans, ids as
 * hex strings), answering 200 `{}` like a collector. Test-only.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  attributes: Record<string, unknown>;
  events: string[];
  resource: Record<string, unknown>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
};
type KeyValue = { key: string; value: AnyValue };

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? [])
    out[key] =
      value.stringValue ??
      value.boolValue ??
      value.doubleValue ??
      (value.intValue !== undefined ? Number(value.intValue) : undefined);
  return out;
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly contentTypes: string[] = [];
  readonly #server: Server;
  url = "";

  constructor() {
    this.#server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        if (req.method !== "POST" || req.url !== "/v1/traces") {
          res.writeHead(404).end();
          return;
        }
        this.contentTypes.push(String(req.headers["content-type"]));
        try {
          this.#collect(JSON.parse(body));
          res.writeHead(200, { "content-type": "application/json" }).end("{}");
        } catch {
          res.writeHead(400).end();
        }
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this.url;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  #collect(request: {
    resourceSpans?: {
      resource?: { attributes?: KeyValue[] };
      scopeSpans?: {
        spans?: {
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          name: string;
          attributes?: KeyValue[];
          events?: { name: string }[];
        }[];
      }[];
    }[];
  }): void {
    for (const rs of request.resourceSpans ?? []) {
      const resource = attributesOf(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? [])
        for (const span of ss.spans ?? [])
          this.spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId || undefined,
            name: span.name,
            attributes: attributesOf(span.attributes),
            events: (span.events ?? []).map((e) => e.name),
            resource,
          });
    }
  }
}
