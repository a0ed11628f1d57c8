/**
 * Call recordings for operators (admin scope): `GET /admin/recordings` lists
 * this worker's `<dataDir>/recordings/`, `GET /admin/recordings/<name>.wav`
 * serves one; on the Talk API `admin.recordings.list` and
 * `admin.recording.read` (base64 pages of at most 1 MiB). A name is checked
 * against the recordings' own pattern before any file is touched, so no path
 * outside the directory can be named.
 */
import { createReadStream } from "node:fs";
import type { FastifyPluginAsync } from "fastify";
import { z } from "zod";
import { TalkError } from "../core/index.js";
import { listRecordings, openRecording, RECORDING_NAME } from "../voice/index.js";
import { type SurfaceContext } from "../gateway/index.js";
import { adminOnly } from "./admin-api.js";

/** Largest page admin.recording.read returns, bytes. */
export const MAX_RECORDING_PAGE = 1_048_576;

const name = z.string().regex(RECORDING_NAME, "1-160 characters of [A-Za-z0-9_-] (without .wav)");
const readParams = z.strictObject({
  name,
  offset: z.number().int().min(0).default(0),
  length: z.number().int().min(1).max(MAX_RECORDING_PAGE).default(MAX_RECORDING_PAGE),
});

export function registerRecordingMethods(ctx: SurfaceContext, dir: string): void {
  ctx.registerMethod("admin.recordings.list", {
    scope: "admin",
    params: z.strictObject({}),
    handler: async () => ({ recordings: await listRecordings(dir) }),
  });
  ctx.registerMethod("admin.recording.read", {
    scope: "admin",
    params: readParams,
    handler: async (p) => {
      const recording = await openRecording(dir, p.name);
      const data = await recording.read(p.offset, p.length);
      return {
        name: p.name,
        offset: p.offset,
        totalBytes: recording.bytes,
        bytes: data.byteLength,
        data: Buffer.from(data).toString("base64"),
      };
    },
  });
}

export function recordingRoutes(ctx: SurfaceContext, dir: string): FastifyPluginAsync {
  return async (app) => {
    app.addHook("onRequest", adminOnly(ctx));
    app.get("/admin/recordings", async (_req, reply) => {
      try {
        return reply.send({ recordings: await listRecordings(dir) });
      } catch (err) {
        return ctx.replyError(reply, err);
      }
    });
    app.get<{ Params: { file: string } }>("/admin/recordings/:file", async (req, reply) => {
      try {
        const file = req.params.file;
        if (!file.endsWith(".wav"))
          throw new TalkError("invalid_params", "A recording is served as <name>.wav.");
        const recording = await openRecording(dir, file.slice(0, -4));
        return reply
          .header("content-type", "audio/wav")
          .header("content-length", String(recording.bytes))
          .header("content-disposition", `attachment; filename="${file}"`)
          .header("cache-control", "no-store")
          .send(createReadStream(recording.path, { start: 0, end: Math.max(0, recording.bytes - 1) }));
      } catch (err) {
        return ctx.replyError(reply, err);
      }
    });
  };
}
