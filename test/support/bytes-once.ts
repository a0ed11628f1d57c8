/**
 * Audio a test helper makes with a synchronous child process (espeak-ng, ffmpeg), made once per test process
 * and key: the files of a worker share the process (isolate: false), and each synchronous run stalled the
 * worker's event loop, its servers and its browser's socket included, for 0.1-0.7 s. Each caller gets a copy,
 * so one test's changes to its bytes never reach another's.
 */
const made = new Map<string, Uint8Array>();

export function bytesOnce(key: string, make: () => Uint8Array): Uint8Array {
  let bytes = made.get(key);
  if (!bytes) {
    bytes = make();
    made.set(key, bytes);
  }
  return bytes.slice();
}
