// First: every module after it creates its named closures through tsx's keepNames helper (keep-names-fix.ts).
import "./keep-names-fix.js";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { isTalkError, NOOP_LOGGER } from "../core/index.js";

const HELP = `talkgate: telephony and meeting media server for an AI assistant

Usage:
  talkgate serve [--config PATH] [--port N] [--workers N|auto]
                                        run the server (embedded defaults without a config);
                                        --port N: listen on N (over PORT and server.port);
                                        --workers N: N processes sharing the port (auto: one per core;
                                        over redis.url, else a private redis-server)
  talkgate doctor --config PATH [--dry-run]
                                        migrate legacy realtime config into talk.realtime
  talkgate call FILE.wav [--url URL] [--out FILE.wav] [--mode realtime|stt-tts]
                [--token TOKEN] [--max-seconds 60] [--over-greeting]
                                        simulated phone call against a running server:
                                        the recording is the caller, once the greeting has
                                        played (--over-greeting: from the start); prints the
                                        transcript, writes the assistant's audio (default:
                                        the system's temporary directory); --url defaults to
                                        the server on PORT and HOST; --token (or
                                        TALKGATE_ADMIN_TOKEN) for a server with auth.tokens
  talkgate meetings probe MEETING-URL [--config PATH] [--out FILE.html] [--name NAME]
                [--stay-seconds 15] [--max-seconds 300] [--headless]
                                        joins a live meeting as a throwaway bot, saves every
                                        screen it passed (screenshot, buttons and labels seen,
                                        the state decided and why) into one HTML report, leaves;
                                        exit 0 if it got into the call (docs/meetings.md)
  talkgate help                         this text

Configuration: a JSON file (--config or TALKGATE_CONFIG) plus environment
overrides (PORT, HOST, TALKGATE_WORKERS, PUBLIC_URL, REDIS_URL, TALKGATE_DATA_DIR, LOG_LEVEL,
TALKGATE_ADMIN_TOKEN, OPENAI_API_KEY). See docs/configuration.md.
`;

type Command = (argv: string[]) => Promise<number>;

const commands: Record<string, Command> = {
  async serve(argv) {
    const { values } = parseArgs({
      args: argv,
      options: { config: { type: "string" }, workers: { type: "string" }, port: { type: "string" } },
      strict: true,
    });
    const { workers, port } = values;
    if (port !== undefined && !/^\d{1,5}$/.test(port)) {
      process.stderr.write(`talkgate serve: --port must be a port number (0-65535), got "${port}"\n`);
      return 2;
    }
    if (workers !== undefined && workers !== "auto" && !/^[1-9]\d?$/.test(workers)) {
      process.stderr.write(
        `talkgate serve: --workers must be a whole number from 1 to 64, or auto (one per core), got "${workers}"\n`,
      );
      return 2;
    }
    const { runServe } = await import("./serve.js");
    return runServe({
      configPath: values.config,
      ...(port !== undefined ? { port: Number(port) } : {}),
      ...(workers !== undefined ? { workers: workers === "auto" ? workers : Number(workers) } : {}),
    });
  },
  async doctor(argv) {
    const { values } = parseArgs({
      args: argv,
      options: { config: { type: "string" }, "dry-run": { type: "boolean", default: false } },
      strict: true,
    });
    const path = values.config ?? process.env.TALKGATE_CONFIG;
    if (!path) {
      process.stderr.write("talkgate doctor: name the config file with --config PATH (or TALKGATE_CONFIG)\n");
      return 2;
    }
    const { runDoctor, formatDoctorReport } = await import("../config/doctor.js");
    const { buildProviders } = await import("../app/providers.js");
    const report = runDoctor({
      path,
      dryRun: values["dry-run"],
      // The provider defaults serve resolves at start-up; its warnings are serve's to log.
      checkProviders: (config) => void buildProviders(config, NOOP_LOGGER),
    });
    process.stdout.write(`${formatDoctorReport(report)}\n`);
    return report.problems.length > 0 ? 1 : 0;
  },
  async call(argv) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        url: { type: "string" },
        out: { type: "string" },
        mode: { type: "string" },
        token: { type: "string" },
        "max-seconds": { type: "string" },
        "over-greeting": { type: "boolean" },
      },
      strict: true,
    });
    const file = positionals[0];
    const mode = values.mode;
    if (
      !file ||
      positionals.length > 1 ||
      (mode !== undefined && mode !== "realtime" && mode !== "stt-tts")
    ) {
      process.stderr.write(
        "talkgate call: usage: talkgate call FILE.wav [--url URL] [--out FILE.wav] [--mode realtime|stt-tts] [--token TOKEN] [--max-seconds N] [--over-greeting]\n",
      );
      return 2;
    }
    const { runCall } = await import("./call.js");
    const token = values.token ?? process.env.TALKGATE_ADMIN_TOKEN;
    // `npm run call` runs in the package's directory; paths are the caller's, relative to where npm was run.
    const here = process.env.INIT_CWD ?? process.cwd();
    return runCall(
      {
        file: resolve(here, file),
        ...(values.url !== undefined ? { url: values.url } : {}),
        ...(values.out !== undefined ? { out: resolve(here, values.out) } : {}),
        ...(mode !== undefined ? { mode } : {}),
        ...(token !== undefined ? { token } : {}),
        ...(values["max-seconds"] !== undefined ? { maxSeconds: Number(values["max-seconds"]) } : {}),
        ...(values["over-greeting"] ? { overGreeting: true } : {}),
      },
      {
        stdout: (line) => process.stdout.write(`${line}\n`),
        stderr: (line) => process.stderr.write(`${line}\n`),
      },
    );
  },
  async meetings(argv) {
    const [sub, ...rest] = argv;
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        config: { type: "string" },
        out: { type: "string" },
        name: { type: "string" },
        "stay-seconds": { type: "string" },
        "max-seconds": { type: "string" },
        headless: { type: "boolean", default: false },
      },
      strict: true,
    });
    const seconds = (v: string | undefined): number | undefined | null =>
      v === undefined ? undefined : /^\d{1,5}$/.test(v) ? Number(v) : null;
    const stay = seconds(values["stay-seconds"]);
    const max = seconds(values["max-seconds"]);
    if (sub !== "probe" || positionals.length !== 1 || stay === null || max === null) {
      process.stderr.write(
        "talkgate meetings: usage: talkgate meetings probe MEETING-URL [--config PATH] [--out FILE.html] [--name NAME] [--stay-seconds N] [--max-seconds N] [--headless]\n",
      );
      return 2;
    }
    const { runProbe } = await import("./probe.js");
    const here = process.env.INIT_CWD ?? process.cwd();
    return runProbe(
      {
        url: positionals[0]!,
        configPath: values.config ?? process.env.TALKGATE_CONFIG,
        out: values.out === undefined ? undefined : resolve(here, values.out),
        name: values.name,
        staySeconds: stay,
        maxSeconds: max,
        headless: values.headless,
      },
      {
        stdout: (line) => process.stdout.write(`${line}\n`),
        stderr: (line) => process.stderr.write(`${line}\n`),
      },
    );
  },
  async help() {
    process.stdout.write(HELP);
    return 0;
  },
};

export async function main(argv: string[]): Promise<number> {
  const [name = "help", ...rest] = argv;
  const command = commands[name === "--help" || name === "-h" ? "help" : name];
  if (!command) {
    process.stderr.write(`talkgate: unknown command "${name}"\n\n${HELP}`);
    return 2;
  }
  try {
    return await command(rest);
  } catch (err) {
    if (isTalkError(err)) process.stderr.write(`talkgate ${name}: ${err.message}\n`);
    else if (err instanceof Error && "code" in err && String(err.code).startsWith("ERR_PARSE_ARGS"))
      process.stderr.write(`talkgate ${name}: ${err.message}\n\n${HELP}`);
    else
      process.stderr.write(
        `talkgate ${name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
    return 1;
  }
}

const code = await main(process.argv.slice(2));
if (code !== 0 || process.argv[2] !== "serve") process.exitCode = code;
