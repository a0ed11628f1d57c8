"""Issue 15, offline: would a keyword-spotting search over the held speech save backchannels?

Replays the utterances bench/backchannel-words.bench.ts wrote (same audio the
session's recognizer got) through pocketsphinx keyword spotting restricted to
the backchannel list (Debian's python3-pocketsphinx and en-us model, the
provider's "fast" search settings), and judges each with two rules in the same run:

  old: the LM search's words by BargeInPolicy with matchBySound (the bench's verdict)
  new: old, except that an utterance old would let interrupt resumes when the
       keyword search found a backchannel AND the LM search heard at most
       --max-words words (fillers aside), none of them an interruption word

  node --import tsx bench/backchannel-words.bench.ts --out /tmp/bc/heard.jsonl --audio /tmp/bc
  /usr/bin/python3 bench/backchannel-kws.py /tmp/bc [--threshold 1e+0] [--max-words 3]

The keyword search decodes each whole clip in one utterance (the provider
segments by its VAD; the clips hold one phrase each, so it is the same audio).
"""

import argparse
import json
import os
import re
import tempfile
from collections import Counter

from pocketsphinx import Decoder

MODEL = "/usr/share/pocketsphinx/model/en-us/"
# The default backchannel list (barge-in-policy.ts) as cmudict spells it; "mm"
# alone is left out (one phone: it fires on any hum).
KEYPHRASES = ["mm-hmm", "mhm", "uh-huh", "yeah", "yep", "okay", "right", "yes", "sure", "alright"]
# cmudict-en-us has no "mm-hmm"; the others are in it.
EXTRA_WORDS = {"mm-hmm": "M HH M"}
INTERRUPTION_WORDS = {"wait", "stop", "no", "hold", "what", "sorry", "excuse", "but"}
FILLERS = {"ah", "ahh", "uh", "uhh", "um", "umm", "er", "erm", "eh", "oh", "hm", "hmm"}


def lm_words(text):
    return [w for w in re.split(r"[^a-z']+", text.lower()) if w and w not in FILLERS]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--threshold", default="1e+0", help="keyphrase threshold, every phrase (pocketsphinx /1e.../)")
    parser.add_argument("--max-words", type=int, default=3)
    args = parser.parse_args()

    config = Decoder.default_config()
    config.set_string("-hmm", MODEL + "en-us")
    config.set_string("-lm", MODEL + "en-us.lm.bin")
    config.set_string("-dict", MODEL + "cmudict-en-us.dict")
    config.set_boolean("-fwdflat", False)
    config.set_int("-maxhmmpf", 3000)
    config.set_int("-topn", 2)
    config.set_string("-logfn", os.devnull)
    decoder = Decoder(config)
    for word, phones in EXTRA_WORDS.items():
        decoder.add_word(word, phones, 0)
    with tempfile.NamedTemporaryFile("w", suffix=".kws", delete=False) as kws:
        kws.writelines("%s /%s/\n" % (k, args.threshold) for k in KEYPHRASES)
    decoder.set_kws("backchannels", kws.name)
    decoder.set_search("backchannels")
    os.unlink(kws.name)

    with open(os.path.join(args.dir, "heard.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    for n, row in enumerate(rows):
        with open(os.path.join(args.dir, "%d.raw" % n), "rb") as f:
            raw = f.read()
        decoder.start_utt()
        decoder.process_raw(raw, False, True)
        decoder.end_utt()
        hyp = decoder.hyp()
        row["spotted"] = hyp.hypstr.strip() if hyp is not None and hyp.hypstr else ""
        words = lm_words(row["heard"])
        guard = len(words) <= args.max_words and not any(w in INTERRUPTION_WORDS for w in words)
        row["old"] = row["bySound"] == "interrupt"
        row["new"] = row["old"] and not (row["spotted"] and guard)

    print("| phrase | utterances | interrupt old | interrupt new | spotted |")
    print("|---|---|---|---|---|")
    for text in dict.fromkeys(r["text"] for r in rows):
        of = [r for r in rows if r["text"] == text]
        print(
            "| %s | %d | %d | %d | %d |"
            % (text, len(of), sum(r["old"] for r in of), sum(r["new"] for r in of), sum(bool(r["spotted"]) for r in of))
        )
    bc = [r for r in rows if r["kind"] == "backchannel"]
    it = [r for r in rows if r["kind"] == "interruption"]
    for rule in ("old", "new"):
        passed = [r for r in it if not r[rule]]
        print(
            "%s: backchannels that interrupt %d / %d; interruptions that do not %d / %d%s"
            % (
                rule,
                sum(r[rule] for r in bc),
                len(bc),
                len(passed),
                len(it),
                " (" + ", ".join('"%s" heard as "%s", spotted "%s"' % (r["text"], r["heard"], r["spotted"]) for r in passed) + ")"
                if passed
                else "",
            )
        )
    print("spotted alone: %d / %d backchannels, %d / %d interruptions" % (
        sum(bool(r["spotted"]) for r in bc), len(bc), sum(bool(r["spotted"]) for r in it), len(it)))
    left = Counter(r["text"] for r in bc if r["new"])
    print("still cut (new):", ", ".join("%s %d" % kv for kv in left.most_common()))


if __name__ == "__main__":
    main()
