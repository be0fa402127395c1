"""Write the synthetic four-way parallel corpus under .test/data/cloze/ (outputs are committed).

Invented for this project, tokenized with single spaces: English, German, Spanish and
French sentences built from templates and a small four-language lexicon, with the gold
word alignments English -> each language in Pharaoh format (0-based) and a word list per
language (word, universal POS, optional dependency relation) from which the workflow builds
a lookup spaCy pipeline. The templates put in every case the cloze filters must handle:
words that are not one-to-one aligned (Spanish "a menudo", the one-word Spanish and
French for "gives up"), a word that is not letters only (French "aujourd'hui"), proper nouns, numbers, a separable German verb (svp) and an English particle
(prt), and sentences too short or too long.

    python .test/make_cloze_corpus.py

Files: cloze_demo.{en,de,es,fr} (the corpus), cloze_demo.en-{de,es,fr}.align (gold
alignments), lexicon_{lang}.tsv, and cloze_extra.en / cloze_extra.fr (a larger English-French parallel text of
the same kind, for the eflomal run).
"""

import hashlib
import random
from pathlib import Path

OUT = Path(__file__).parent / "data" / "cloze"
LANGS = ("en", "de", "es", "fr")

# class -> list of (en, de, es, fr); a multi-word entry is split on spaces into tokens
WORDS = {
    "NOUN": [("dog", "Hund", "perro", "chien"), ("house", "Haus", "casa", "maison"), ("book", "Buch", "libro", "livre"),
             ("city", "Stadt", "ciudad", "ville"), ("child", "Kind", "niño", "enfant"),
             ("report", "Bericht", "informe", "rapport"), ("farmer", "Bauer", "granjero", "fermier"),
             ("teacher", "Lehrer", "maestro", "professeur")],
    "ADJ": [("old", "alte", "viejo", "vieux"), ("small", "kleine", "pequeño", "petit"), ("new", "neue", "nuevo", "nouveau"),
            ("good", "gute", "bueno", "bon"), ("tired", "müde", "cansado", "fatigué")],
    "VERB": [("sleeps", "schläft", "duerme", "dort"), ("reads", "liest", "lee", "lit"),
             ("works", "arbeitet", "trabaja", "travaille"), ("waits", "wartet", "espera", "attend"),
             ("sings", "singt", "canta", "chante")],
    "ADV": [("here", "hier", "aquí", "ici"), ("always", "immer", "siempre", "toujours"), ("often", "oft", "a menudo", "souvent"),
            ("today", "heute", "hoy", "aujourd'hui"), ("quickly", "schnell", "rápidamente", "rapidement"),
            ("rarely", "selten", "raramente", "rarement")],
    "PROPN": [("Paris", "Paris", "París", "Paris"), ("Anna", "Anna", "Ana", "Anne")],
    "NUM": [("three", "drei", "tres", "trois"), ("two", "zwei", "dos", "deux")],
}
DET = ("the", "der", "el", "le")
PUNCT = (".", ".", ".", ".")
AND = ("and", "und", "y", "et")
IN = ("in", "in", "en", "à")
WITH = ("with", "mit", "con", "avec")
# separable / particle verb: en "gives up" (prt), de "gibt ... auf" (svp), es/fr one word
GIVE_UP = {"en": ["gives", "up"], "de": ["gibt", "auf"], "es": ["abandona"], "fr": ["abandonne"]}

# Templates: per language, the slot order. Slots are names; the alignment links equal names.
TEMPLATES = [
    # the ADJ NOUN VERB ADV .
    {"en": "D A N V R P", "de": "D A N V R P", "es": "D N A V R P", "fr": "D N A V R P"},
    # the NOUN VERB ADV in PROPN .
    {"en": "D N V R I X P", "de": "D N V R I X P", "es": "D N V R I X P", "fr": "D N V R I X P"},
    # the ADJ NOUN and the NOUN VERB ADV .
    {"en": "D A N C D2 N2 V R P", "de": "D A N C D2 N2 V R P", "es": "D N A C D2 N2 V R P", "fr": "D N A C D2 N2 V R P"},
    # NUM NOUN VERB with the NOUN .
    {"en": "M N V W D N2 P", "de": "M N V W D N2 P", "es": "M N V W D N2 P", "fr": "M N V W D N2 P"},
    # the NOUN gives up ADV .   (German: der NOUN gibt ADV auf .)
    {"en": "D N G R P", "de": "D N G R G2 P", "es": "D N G R P", "fr": "D N G R P"},
    # too short: NOUN VERB .
    {"en": "N V P", "de": "N V P", "es": "N V P", "fr": "N V P"},
]
SLOT_CLASS = {"A": "ADJ", "N": "NOUN", "N2": "NOUN", "V": "VERB", "R": "ADV", "X": "PROPN", "M": "NUM"}
FIXED = {"D": DET, "D2": DET, "P": PUNCT, "C": AND, "I": IN, "W": WITH}


def sentence(template: dict, rng: random.Random) -> tuple[dict, dict]:
    """Tokens per language and gold links English -> each language."""
    fill = {slot: rng.choice(WORDS[cls]) for slot, cls in SLOT_CLASS.items()}
    while fill["N2"] == fill["N"]:
        fill["N2"] = rng.choice(WORDS["NOUN"])
    tokens, positions = {}, {}
    for li, lang in enumerate(LANGS):
        toks, pos = [], {}
        for slot in template[lang].split():
            if slot in FIXED:
                words = [FIXED[slot][li]]
            elif slot == "G":
                words = GIVE_UP[lang] if lang != "de" else [GIVE_UP["de"][0]]
            elif slot == "G2":
                words = [GIVE_UP["de"][1]]
            else:
                words = fill[slot][li].split()
            if slot == "G" and lang == "en":
                pos["G"], pos["G2"] = [len(toks)], [len(toks) + 1]
            else:
                pos[slot] = list(range(len(toks), len(toks) + len(words)))
            toks.extend(words)
        if lang in ("es", "fr") and "G" in pos and "G2" not in pos:
            pos["G2"] = pos["G"]  # the one-word verb also translates the particle
        if toks[0][0].isalpha():
            toks[0] = toks[0][0].upper() + toks[0][1:]
        tokens[lang], positions[lang] = toks, pos
    links = {}
    for lang in LANGS[1:]:
        pairs = set()
        for slot, en_pos in positions["en"].items():
            for i in en_pos:
                for j in positions[lang].get(slot, []):
                    pairs.add((i, j))
        links[lang] = sorted(pairs)
    return tokens, links


def lexicon(lang: str) -> list[tuple[str, str, str]]:
    li = LANGS.index(lang)
    rows = {}
    for cls, entries in WORDS.items():
        for e in entries:
            for w in e[li].split():
                rows.setdefault(w.lower(), (w.lower(), cls if " " not in e[li] else ("ADP" if w == "a" else cls), ""))
    for fixed, cls in ((DET, "DET"), (AND, "CCONJ"), (IN, "ADP"), (WITH, "ADP"), (PUNCT, "PUNCT")):
        rows[fixed[li].lower()] = (fixed[li].lower(), cls, "")
    if lang == "en":
        rows["gives"], rows["up"] = ("gives", "VERB", ""), ("up", "ADP", "prt")
    elif lang == "de":
        rows["gibt"], rows["auf"] = ("gibt", "VERB", ""), ("auf", "ADP", "svp")
    else:
        w = GIVE_UP[lang][0]
        rows[w] = (w, "VERB", "")
    return sorted(rows.values())


def corpus(n: int, rng: random.Random, weights) -> tuple[dict, dict]:
    lines = {lang: [] for lang in LANGS}
    aligns = {lang: [] for lang in LANGS[1:]}
    for _ in range(n):
        tokens, links = sentence(rng.choices(TEMPLATES, weights=weights)[0], rng)
        for lang in LANGS:
            lines[lang].append(" ".join(tokens[lang]))
        for lang in LANGS[1:]:
            aligns[lang].append(" ".join(f"{i}-{j}" for i, j in links[lang]))
    return lines, aligns


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    rng = random.Random(2006)
    lines, aligns = corpus(80, rng, weights=[4, 1, 2, 1, 1, 1])
    # one over-long sentence, as Europarl has
    long_tokens, long_links = sentence(TEMPLATES[2], rng)
    for lang in LANGS:
        lines[lang].append(" ".join(long_tokens[lang] * 6))
    for lang in LANGS[1:]:
        n_en, n_xx = len(long_tokens["en"]), len(long_tokens[lang])
        aligns[lang].append(" ".join(f"{i + k * n_en}-{j + k * n_xx}" for k in range(6) for i, j in long_links[lang]))
    for lang in LANGS:
        (OUT / f"cloze_demo.{lang}").write_text("\n".join(lines[lang]) + "\n", encoding="utf-8")
        (OUT / f"lexicon_{lang}.tsv").write_text(
            "".join("\t".join(r).rstrip("\t") + "\n" for r in lexicon(lang)), encoding="utf-8")
    for lang in LANGS[1:]:
        (OUT / f"cloze_demo.en-{lang}.align").write_text("\n".join(aligns[lang]) + "\n", encoding="utf-8")
    extra, _ = corpus(3000, random.Random(7), weights=[4, 1, 2, 1, 1, 1])
    (OUT / "cloze_extra.en").write_text("\n".join(extra["en"]) + "\n", encoding="utf-8")
    (OUT / "cloze_extra.fr").write_text("\n".join(extra["fr"]) + "\n", encoding="utf-8")
    for f in sorted(OUT.iterdir()):
        print(hashlib.sha256(f.read_bytes()).hexdigest(), f.name)


if __name__ == "__main__":
    main()
