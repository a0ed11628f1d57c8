/** The rate every captured meeting track leaves the decoder at (mono PCM16): what speech recognition wants. */
export const CAPTURE_RATE = 16_000;
