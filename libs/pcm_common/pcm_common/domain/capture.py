"""The capture gate for automatic captures (DESIGN §6): a hook that sends every prompt would
fill the store with "sounds good" and "go ahead", which nobody will ever need recalled and
every later recall would have to rank past. Explicit stores are never gated.

mnemos decides with a model's prediction of the next message; without a model call on the
write path, PCM skips what is predictable by its form: a short message made only of
acknowledgements and of the steering words agents are given ("continue", "try again",
"looks good, ship it"), or one with no words at all. Anything with a figure, a name outside
those words or more than a few words is kept, so a gated capture loses nothing that a
rule or a fact could be made of.
"""

from __future__ import annotations

from pcm_common.domain.importance import CHATTER, only_words_of

# Steering an agent, on top of the acknowledgements `importance.CHATTER` lists.
_STEERING = frozenset(
    """
    continue go ahead on proceed do it that this please pls plz try again retry redo keep
    going next looks look good lgtm perfect ship run and yes no ok let's lets now then
    carry same works thanks done stop wait hmm hm huh what why sorry exactly correct
    """.split()
)
PREDICTABLE = CHATTER | _STEERING
# Longer messages are kept even when every word is in the list.
MAX_WORDS = 8


def predictable(text: str) -> bool:
    """Whether an automatic capture of `text` is skipped (module docstring)."""
    return only_words_of(text, PREDICTABLE, MAX_WORDS)
