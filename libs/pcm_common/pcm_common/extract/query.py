"""Candidate entity keys of a recall query, without a parser.

Recall only needs to know which of the tenant's *existing* entities a query names; the
graph answers that for a list of keys in the one round trip it makes anyway. So instead of
running the extractor's spaCy pipeline on every query (tens of milliseconds, serialised with
the extractor's own batches in an all-in-one process), the query's word n-grams are offered
as keys and the graph keeps the ones it has.

The extractor stores names case-folded and concepts and activities by lemma ("recipes" ->
"recipe", "volunteering" -> "volunteer"), so the last word of each n-gram is also offered in
the base forms a regular English inflection may have come from, plus a short table of
irregular forms. A wrong guess costs nothing: it is not a key in the graph.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pcm_common.models.sparse import STOPWORDS

MAX_NGRAM = 3
MIN_CHARS = 3  # the extractor keeps no concept or activity shorter than this

# Apostrophes and hyphens end a word ("Caroline's" -> "caroline", "dairy-free" -> "dairy",
# "free": the extractor keeps only alphabetic lemmas); inner dots keep one ("node.js").
_WORD = re.compile(r"[^\W_]+(?:\.[^\W_]+)*", re.UNICODE)
# Function words that may sit inside a name ("Bank of America", "Lord of the Rings").
_INNER = frozenset({"of", "the", "and"})

# Question and filler words that are not in the lexical stopword list but never name an
# entity of their own in a question.
_QUERY_FILLER = frozenset(
    """
    also anything couldn ever else etc get got hadn hasn haven kind likely many much mustn
    one ones other others shouldn
    something thing things think way ways would wouldn
    """.split()
)
_SKIP = STOPWORDS | _QUERY_FILLER

# Common irregular plurals and verb forms -> lemma (regular ones are derived by rule).
_IRREGULAR = {
    "children": "child",
    "people": "person",
    "men": "man",
    "women": "woman",
    "feet": "foot",
    "teeth": "tooth",
    "mice": "mouse",
    "geese": "goose",
    "met": "meet",
    "went": "go",
    "gone": "go",
    "made": "make",
    "took": "take",
    "taken": "take",
    "gave": "give",
    "given": "give",
    "bought": "buy",
    "brought": "bring",
    "thought": "think",
    "taught": "teach",
    "caught": "catch",
    "found": "find",
    "felt": "feel",
    "kept": "keep",
    "left": "leave",
    "lost": "lose",
    "won": "win",
    "ran": "run",
    "began": "begin",
    "begun": "begin",
    "saw": "see",
    "seen": "see",
    "wrote": "write",
    "written": "write",
    "drove": "drive",
    "driven": "drive",
    "flew": "fly",
    "flown": "fly",
    "ate": "eat",
    "eaten": "eat",
    "sang": "sing",
    "sung": "sing",
    "swam": "swim",
    "built": "build",
    "spent": "spend",
    "sent": "send",
    "told": "tell",
    "sold": "sell",
    "held": "hold",
    "heard": "hear",
    "knew": "know",
    "known": "know",
    "grew": "grow",
    "grown": "grow",
    "drew": "draw",
    "drawn": "draw",
    "chose": "choose",
    "chosen": "choose",
    "learnt": "learn",
    "paid": "pay",
}

_VOWELS = set("aeiou")


def base_forms(word: str) -> list[str]:
    """``word`` and the lemmas a regular inflection of it may come from (lower case)."""
    w = word.casefold()
    out = [w]
    if w in _IRREGULAR:
        out.append(_IRREGULAR[w])
    n = len(w)
    if n > 3 and w.endswith("ies"):
        out.append(w[:-3] + "y")  # hobbies -> hobby
    if n > 3 and w.endswith(("ses", "xes", "zes", "ches", "shes", "oes")):
        out.append(w[:-2])  # classes -> class
    if n > 3 and w.endswith("s") and not w.endswith("ss"):
        out.append(w[:-1])  # recipes -> recipe
    for suffix in ("ing", "ed"):
        if n > len(suffix) + 2 and w.endswith(suffix):
            stem = w[: -len(suffix)]
            out.append(stem)  # volunteering -> volunteer, helped -> help
            out.append(stem + "e")  # baking -> bake, hiked -> hike
            if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in _VOWELS:
                out.append(stem[:-1])  # running -> run, planned -> plan
            if suffix == "ed" and stem.endswith("i"):
                out.append(stem[:-1] + "y")  # tried -> try
    return list(dict.fromkeys(f for f in out if len(f) >= MIN_CHARS or f == w))


def _ngrams(words: list[str]) -> Iterator[list[str]]:
    for n in range(1, MAX_NGRAM + 1):
        for i in range(len(words) - n + 1):
            gram = words[i : i + n]
            # A key never starts or ends with a function word ("the park", "go to").
            if gram[0].casefold() in _SKIP or gram[-1].casefold() in _SKIP:
                continue
            if any(w.casefold() in _SKIP - _INNER for w in gram[1:-1]):
                continue
            yield gram


def query_keys(text: str, limit: int = 64) -> list[str]:
    """Canonical (case-folded, single-spaced) candidate entity keys of ``text``, at most
    ``limit``, longest n-grams of the query first so a cap keeps the specific ones."""
    words = _WORD.findall(text)
    keys: list[str] = []
    for gram in sorted(_ngrams(words), key=len, reverse=True):
        head = " ".join(w.casefold() for w in gram[:-1])
        for form in base_forms(gram[-1]):
            key = f"{head} {form}" if head else form
            if len(key) >= MIN_CHARS or not key.isalpha():
                keys.append(key)
    return list(dict.fromkeys(keys))[:limit]


# Words by which a question asks for things of one entity type ("which cities has Jon
# visited?"): the answer is a memory that names such an entity next to the query's own,
# though it shares no word with the query ("Took a short trip to Rome"). Only the graph's
# types an extractor tags by name; Person is left out (in a conversation nearly every
# memory names a person) and so is Time (every memory has a date).
TYPE_WORDS: dict[str, frozenset[str]] = {
    "Place": frozenset(
        """city cities town towns village villages country countries state states place
        places where location locations destination destinations region regions continent
        continents island islands""".split()
    ),
    "Organization": frozenset(
        """company companies organization organizations organisation organisations
        employer employers charity charities nonprofit nonprofits""".split()
    ),
    "Work": frozenset(
        """book books novel novels movie movies film films song songs album albums
        artwork artworks""".split()
    ),
    "Event": frozenset("event events festival festivals concert concerts".split()),
    "Animal": frozenset("pet pets animal animals".split()),
    "Product": frozenset("product products device devices gadget gadgets brand brands".split()),
    "Technology": frozenset(
        """tool tools library libraries framework frameworks database databases
        language languages""".split()
    ),
}


def query_types(text: str) -> list[str]:
    """Entity types the query asks for by a type word, sorted (see ``TYPE_WORDS``)."""
    words = {w.casefold() for w in _WORD.findall(text)}
    return sorted(t for t, names in TYPE_WORDS.items() if words & names)
