/**
 * Local speech detection on the microphone's 10 ms levels (dBFS): speech is
 * a level `marginDb` above the tracked noise floor (and above `minDb`) for
 * `onsetMs`; it ends after `hangoverMs` below. Used for the page's own
 * decisions only: starting a turn in conversation over stt-tts (the server's
 * VAD ends it) and stopping playback at once when the user talks over the
 * assistant. The browser's echo cancellation keeps the assistant's own voice
 * out of the microphone.
 */
export class SpeechDetector {
  constructor({ marginDb = 14, minDb = -50, onsetMs = 120, hangoverMs = 600, warmupMs = 300 } = {}) {
    this.marginDb = marginDb;
    this.minDb = minDb;
    this.onsetFrames = Math.round(onsetMs / 10);
    this.hangoverFrames = Math.round(hangoverMs / 10);
    this.warmupFrames = Math.round(warmupMs / 10);
    /** The tracked noise floor, dBFS; starts at the first level seen. */
    this.floor = undefined;
    this.frames = 0;
    this.speaking = false;
    this.above = 0;
    this.below = 0;
  }

  /**
   * Feeds 10 ms levels; returns "start", "end" or undefined (the last transition).
   * @param {number[]} levels
   */
  process(levels) {
    let event;
    for (const db of levels) {
      this.frames += 1;
      this.floor ??= db;
      const loud = db > Math.max(this.minDb, this.floor + this.marginDb);
      // The floor follows quiet frames at once, steady noise within a second, speech hardly at all.
      const up = this.speaking ? 0.001 : 0.01;
      this.floor += (db - this.floor) * (db < this.floor ? 0.2 : up);
      if (!this.speaking) {
        this.above = loud ? this.above + 1 : 0;
        // No onset while the floor is still being learnt.
        if (this.above >= this.onsetFrames && this.frames > this.warmupFrames) {
          this.speaking = true;
          this.below = 0;
          event = "start";
        }
      } else {
        this.below = loud ? 0 : this.below + 1;
        if (this.below >= this.hangoverFrames) {
          this.speaking = false;
          this.above = 0;
          event = "end";
        }
      }
    }
    return event;
  }
}
