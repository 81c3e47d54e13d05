"""Synthetic personal-routine datasets for evaluating anomaly flags.

Writes files in the layout of the dev routine files (meta, personas, memories, questions) from
26 routine kinds (29 in the blind splits) and eight disjoint phrasing splits, ``tune``,
``heldout``, ``valid``, ``blind``, ``blind2``, ``blind3``, ``blind4`` and ``blind5``.
Standard library only; the output depends only on the split, the variant, the seed and the
persona count.
"""

from .generate import DEFAULT_SEED, GENERATOR_VERSION, build_dataset

__all__ = ["DEFAULT_SEED", "GENERATOR_VERSION", "build_dataset"]
