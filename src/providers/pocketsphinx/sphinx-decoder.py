"""Resident pocketsphinx decoder for talkgate (see pocketsphinx-stt.ts).

Loads the acoustic and language models once, then decodes one stream after
another from stdin, so a stream costs only its decoding, not a model load.

argv[1]: JSON {"name": {"type": "string"|"int"|"float"|"boolean", "value": ...}}
         decoder settings (names without the leading "-").
argv[2]: optional JSON {"lmOnlyDictDir": "/tmp"}: load the dictionary restricted
         to the language model's words (the n-gram search never proposes the
         others), cached as a file in a private subdirectory of that directory.
         Saves ~13 MB per decoder with Debian's en-us model (134,723 -> ~79,000
         entries); falls back to the full dictionary if the cache cannot be written.

stdin, frames: 1 byte kind, 4 bytes little-endian payload length, payload.
  1 start a stream; payload: optional JSON {"partialBytes": 16000}: inside an
    utterance, report the running hypothesis each time this much audio was
    decoded (absent or 0: never)
  2 audio: 16 kHz mono PCM16 little-endian
  3 end of the stream's input
stdout, one JSON object a line:
  {"ready": true}         models loaded
  {"partial": "text"}     the running hypothesis of the utterance in progress (changed)
  {"utterance": "text"}   an utterance ended inside the stream (decoder VAD)
  {"done": true}          the stream's input is decoded (after its last utterance)

End of stdin (the server went away) ends the process. Segmentation inside a
stream follows pocketsphinx_continuous: an utterance ends when the decoder's
VAD goes from speech to silence.
"""

import hashlib
import json
import os
import re
import struct
import sys
import tempfile

from pocketsphinx import Decoder, NGramModel

START, AUDIO, END = 1, 2, 3
SETTERS = {"string": "set_string", "int": "set_int", "float": "set_float", "boolean": "set_boolean"}


ALTERNATE = re.compile(r"\(\d+\)$")


def private_dir(parent):
    path = os.path.join(parent, "talkgate-sphinx-%d" % os.getuid())
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if not os.path.isdir(path) or os.path.islink(path) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise OSError("not a private directory: " + path)
    return path


def lm_only_dict(dict_path, lm_path, parent):
    """The dictionary's entries whose word is in the language model, as a cached file; None when not possible."""
    try:
        stats = [(p, os.stat(p).st_size, os.stat(p).st_mtime_ns) for p in (dict_path, lm_path)]
        key = hashlib.sha256(json.dumps(stats).encode()).hexdigest()[:20]
        directory = private_dir(parent)
        path = os.path.join(directory, "lm-only-%s.dict" % key)
        if os.path.exists(path):
            return path
        lm = NGramModel(lm_path)
        unknown = lm.prob(["<talkgate-not-a-word>"])
        with open(dict_path, encoding="utf-8", errors="surrogateescape") as source:
            kept = [
                line
                for line in source
                if line.split(None, 1) and lm.prob([ALTERNATE.sub("", line.split(None, 1)[0])]) != unknown
            ]
        del lm
        if not kept:
            return None
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as out:
            out.writelines(kept)
        os.replace(tmp, path)
        return path
    except (OSError, RuntimeError, ValueError):
        return None


def main() -> int:
    settings = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    helper = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    if helper.get("lmOnlyDictDir") and "dict" in settings and "lm" in settings:
        restricted = lm_only_dict(settings["dict"]["value"], settings["lm"]["value"], helper["lmOnlyDictDir"])
        if restricted:
            settings["dict"] = {"type": "string", "value": restricted}
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
    # Running hypotheses inside an utterance: audio decoded since the last one, and the last one sent.
    partial_bytes = 0
    since_partial = 0
    last_partial = ""
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
            partial_bytes = int(json.loads(payload).get("partialBytes") or 0) if payload else 0
        elif kind == AUDIO and open_utt:
            decoder.process_raw(payload, False, False)
            in_speech = decoder.get_in_speech()
            if in_speech and not started:
                started = True
                since_partial, last_partial = 0, ""
            elif not in_speech and started:
                decoder.end_utt()
                text = hyp_text()
                if text:
                    send({"utterance": text})
                elif last_partial:
                    send({"partial": ""})  # the running hypothesis came to nothing
                decoder.start_utt()
                started = False
            if started and partial_bytes > 0:
                since_partial += len(payload)
                if since_partial >= partial_bytes:
                    since_partial = 0
                    text = hyp_text()
                    if text and text != last_partial:
                        last_partial = text
                        send({"partial": text})
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
