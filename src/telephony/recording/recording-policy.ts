/** Which calls are recorded and what they hear first, resolved once from `telephony.recording`. */
import type { TelephonyConfig } from "../../config/index.js";
import { TalkError } from "../../core/index.js";
import { recordingsDir } from "../../voice/index.js";

export interface RecordingPolicy {
  /** `<dataDir>/recordings`. */
  dir: string;
  /** Our numbers whose calls are recorded; undefined: every call. */
  numbers: ReadonlySet<string> | undefined;
  /** Spoken before the greeting; undefined: nothing. */
  notice: string | undefined;
}

/** The policy of `telephony.recording`; undefined when recording is off. */
export function callRecordingPolicy(
  config: TelephonyConfig,
  dataDir: string | undefined,
): RecordingPolicy | undefined {
  const recording = config.recording;
  if (!recording.enabled) return undefined;
  if (!dataDir)
    throw new TalkError("config_invalid", "telephony.recording.enabled needs a data directory (dataDir).");
  return {
    dir: recordingsDir(dataDir),
    numbers: recording.numbers ? new Set(recording.numbers) : undefined,
    notice: recording.notice ? recording.notice : undefined,
  };
}

/** Whether a call is recorded: our number is the called one inbound, the caller id outbound. */
export function recordsCall(
  policy: RecordingPolicy | undefined,
  call: { from?: string | undefined; to?: string | undefined; direction?: string | undefined },
): boolean {
  if (!policy) return false;
  if (!policy.numbers) return true;
  const ours = call.direction?.startsWith("outbound") ? call.from : call.to;
  return ours !== undefined && policy.numbers.has(ours);
}
