"""Resident pocketsphinx decoder for talkgate (see pocketsphinx-stt.ts).

Loads the acoustic and language models once, then decodes one stream after
another from stdin, so a stream costs only its decoding, not a model load.

argv[1]: JSON {"name": {"type": "string"|"int"|"float"|"boolean", "value": ...}}
         decoder settings (names without the leading "-").

stdin, frames: 1 byte kind, 4 bytes little-endian payload length, payload.
  1 start a stream
  2 audio: 16 kHz mono PCM16 little-endian
  3 end of the stream's input
stdout, one JSON object a line:
  {"ready": true}         models loaded
  {"utterance": "text"}   an utterance ended inside the stream (decoder VAD)
  {"done": true}          the stream's input is decoded (after its last utterance)

End of stdin (the server went away) ends the process. Segmentation inside a
stream follows pocketsphinx_continuous: an utterance ends when the decoder's
VAD goes from speech to silence.
"""

import json
import struct
import sys

from pocketsphinx import Decoder

START, AUDIO, END = 1, 2, 3
SETTERS = {"string": "set_string", "int": "set_int", "float": "set_float", "boolean": "set_boolean"}


def main() -> int:
    settings = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    config = Decoder.default_config()
    for name, setting in settings.items():
        value = setting["value"]
        if setting["type"] == "float":
            value = float(value)
        getattr(config, SETTERS[setting["type"]])("-" + name, value)
    decoder = Decoder(config)
    out = sys.stdout
    stdin = sys.stdin.buffer

    def send(message):
        out.write(json.dumps(message) + "\n")
        out.flush()

    def hyp_text():
        hyp = decoder.hyp()
        return hyp.hypstr.strip() if hyp is not None and hyp.hypstr else ""

    send({"ready": True})
    open_utt = False
    started = False
    while True:
        header = stdin.read(5)
        if len(header) < 5:
            return 0
        kind, length = struct.unpack("<BI", header)
        payload = stdin.read(length) if length else b""
        if len(payload) < length:
            return 0
        if kind == START:
            if open_utt:
                decoder.end_utt()
            decoder.start_utt()
            open_utt, started = True, False
        elif kind == AUDIO and open_utt:
            decoder.process_raw(payload, False, False)
            in_speech = decoder.get_in_speech()
            if in_speech and not started:
                started = True
            elif not in_speech and started:
                decoder.end_utt()
                text = hyp_text()
                if text:
                    send({"utterance": text})
                decoder.start_utt()
                started = False
        elif kind == END:
            if open_utt:
                decoder.end_utt()
                text = hyp_text() if started else ""
                if text:
                    send({"utterance": text})
                open_utt, started = False, False
            send({"done": True})


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
