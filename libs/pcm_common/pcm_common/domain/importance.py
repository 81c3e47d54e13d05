"""The importance tier of a memory written without one (DESIGN §2: "importance tier"; the
tier sets the initial strength, §3). A pure function of the text, by rules that say why:

- `high`: what an agent must not lose. A standing instruction ("Always run the linter",
  "Never push on Fridays", "Make sure ..."), a decision or commitment ("we decided to ...",
  "from now on ..."), a stated rule or constraint ("it's mandatory", "the policy is ..."),
  a deadline, an allergy or another safety fact.
- `low`: chatter that carries nothing to remember: a short reply made only of
  acknowledgements, greetings and laughter ("ok thanks!", "haha nice", "see you").
- `normal`: everything else, so an unclear case keeps the default strength.

An explicit `importance` on the write always wins; this is only the fallback.
"""

from __future__ import annotations

import re
from itertools import islice

HIGH, NORMAL, LOW = "high", "normal", "low"

# A sentence that opens with an instruction (after an optional "please" / "note:").
_INSTRUCTION = re.compile(
    r"(?:^|[.!?;:\n]\s*)(?:please\s+|note:?\s+|rule:?\s+)?"
    r"(?:always|never|don'?t\s+ever|do\s+not|don'?t|make\s+sure|be\s+sure\s+to|remember\s+to|"
    r"ensure|avoid|stop\s+using|only\s+use)\b"
    # Not encouragement or small talk: "Don't give up!", "Always happy to help".
    r"(?!\s+(?:give\s+up|quit|worry|stress|hesitate|be\s+(?:sorry|shy|afraid|hard|so)\b|"
    r"let\s+(?:it|that|them|anything|anyone)\b|happy|good|great|glad|nice|fun|up\s+for|here))",
)
_DECISION = re.compile(
    r"\b(?:(?:we|i|they|the\s+team)\s+(?:have\s+)?(?:decided|agreed|committed|promised|chose)|"
    r"from\s+now\s+on|going\s+forward|no\s+longer\s+allowed)\b",
)
_CONSTRAINT = re.compile(
    r"\b(?:mandatory|must\s+not|mustn'?t|is\s+required|are\s+required|requirements?|policy|"
    r"urgent|deadline|due\s+(?:by|on|date)|allerg(?:y|ic|ies)|emergency\s+contact|"
    r"blood\s+type)\b",
)

# Words a reply made only of chatter consists of (lower case, letters and apostrophes).
CHATTER = frozenset(
    """
    ok okay okey k kk alright thanks thank thx ty you u too so much very lol lmao haha hahaha
    hehe heh cool nice great awesome sure yes yeah yep yup no nope nah hi hey hello hiya bye
    goodbye good morning night evening see ya later soon cya wow omg oh ah aw aww np welcome
    you're youre sounds fine will do got it indeed right true agreed same
    """.split()
)
# Words of any script: a text in Cyrillic or CJK is words too, never "no words at all".
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")
# Longer replies are not dismissed even when every word is in the list.
_CHATTER_MAX_WORDS = 6


def infer_importance(text: str) -> str:
    """`high`, `normal` or `low` for a memory whose write gave no tier (module docstring)."""
    # The patterns are in lower case and read the text lower-cased: IGNORECASE made each
    # of them 2-4 times slower (a 100 kB write held the event loop ~100 ms).
    low = text.lower()
    if _INSTRUCTION.search(low) or _DECISION.search(low) or _CONSTRAINT.search(low):
        return HIGH
    if only_words_of(text, CHATTER, _CHATTER_MAX_WORDS):
        return LOW
    return NORMAL


def only_words_of(text: str, vocabulary: frozenset[str], max_words: int) -> bool:
    """A short text (at most `max_words`) made only of `vocabulary`, or of no words at all
    (emoji, "!!"); any figure makes it more than that."""
    # (At most max_words + 1 words are read: a long text is decided by its first ones.)
    words = [m.group() for m in islice(_WORD.finditer(text.lower()), max_words + 1)]
    return (
        len(words) <= max_words
        and all(w in vocabulary for w in words)
        and not re.search(r"\d", text)
    )
