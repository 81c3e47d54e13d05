"""Category and content changes from the family's consensus (pcm_common.domain.changes):
pure functions on hand-built tokens, no parser."""

from __future__ import annotations

from pcm_common.domain import change_profile as cp
from pcm_common.domain import changes as ch
from pcm_common.domain.surprisal import FLAG_MIN_SCORE, Tok


def _t(text: str, pos: str, clause: int = 0, role: str = "", head: str = "", **kw: bool) -> Tok:
    lemma = text.lower()
    return Tok(text, lemma, pos, clause, role=role, head=head or lemma if role else "", **kw)


def _name(text: str, role: str, head: str = "", clause: int = 0) -> Tok:
    return _t(text, "PROPN", clause, role, head or text.lower(), is_name=True)


def _num(text: str, clause: int = 0) -> Tok:
    return _t(text, "NUM", clause, is_num=True)


# Two phrasings of one routine: "Coffee with <who> at <place>, N min" and
# "Met <who> for coffee at <place> (N min)": no common word order.
def _a(who: str = "Ana", place: tuple[str, str] = ("Cafe", "Nero")) -> list[Tok]:
    head = place[-1].lower()
    return [
        _t("Coffee", "NOUN", role="root"),
        _t("with", "ADP"),
        _name(who, "with"),
        _t("at", "ADP"),
        *(_name(p, "at", head) for p in place),
        _num("45"),
        _t("min", "NOUN"),
    ]


def _b(who: str = "Ana", place: tuple[str, str] = ("Cafe", "Nero")) -> list[Tok]:
    head = place[-1].lower()
    return [
        _t("Met", "VERB"),
        _name(who, "obj"),
        _t("coffee", "NOUN", role="for"),
        _t("at", "ADP"),
        *(_name(p, "at", head) for p in place),
        _num("50"),
        _t("min", "NOUN"),
    ]


FIGS = ["duration"]


def _family(n: int = 8) -> list[cp.Profile]:
    return [cp.profile(_a() if i % 2 else _b(), FIGS) for i in range(n)]


def _kinds(report: ch.ChangeReport) -> list[str]:
    return [c.kind for c in report.changes if c.score >= FLAG_MIN_SCORE]


def test_usual_entries_in_either_phrasing_change_nothing() -> None:
    for toks in (_a(), _b()):
        assert ch.detect_changes(cp.profile(toks, FIGS), _family()).changes == []


def test_a_swapped_place_is_a_category_change_in_any_phrasing() -> None:
    for make in (_a, _b):
        report = ch.detect_changes(cp.profile(make("Ana", ("Blue", "Bottle")), FIGS), _family())
        assert _kinds(report) == ["category"]
        assert report.changes[0].new == "Blue Bottle"


def test_a_swapped_person_is_a_category_change() -> None:
    report = ch.detect_changes(cp.profile(_b("Lucia"), FIGS), _family())
    assert _kinds(report) == ["category"] and report.changes[0].usual == "Ana"


def test_an_inconsistent_family_has_no_usual_slot() -> None:
    family = [cp.profile(_a(w), FIGS) for w in ("Ana", "Tom", "Lena", "Ravi", "Maya", "Ines")]
    assert ch.detect_changes(cp.profile(_a("Priya"), FIGS), family).changes == []


def test_consensus_needs_more_than_three_of_four() -> None:
    """Laplace's rule: 3 of 4 members (0.67) is no consensus; 4 of 4 (0.83) is."""
    assert ch.smoothed_share(3, 4) < ch.CONSENSUS <= ch.smoothed_share(4, 4)
    four = [cp.profile(_a(), FIGS) for _ in range(4)]
    three = [*four[:3], cp.profile(_a("Tom"), FIGS)]
    assert _kinds(ch.detect_changes(cp.profile(_a("Lucia"), FIGS), four)) == ["category"]
    assert ch.detect_changes(cp.profile(_a("Lucia"), FIGS), three).changes == []


def test_an_added_sentence_of_new_words_is_a_content_change() -> None:
    extra = [
        _t("My", "PRON", 1, is_stop=True),
        _t("knee", "NOUN", 1, role="subj"),
        _t("swelled", "VERB", 1),
        _t("badly", "ADV", 1),
    ]
    report = ch.detect_changes(cp.profile(_b() + extra, FIGS), _family())
    assert _kinds(report) == ["content"] and "knee" in report.changes[0].new


def test_a_single_new_sentence_without_the_routine_beside_it_is_not_content() -> None:
    alone = [_t("Knee", "NOUN", 0, role="subj"), _t("swelled", "VERB", 0)]
    assert ch.detect_changes(cp.profile(alone, []), _family()).changes == []


def test_an_added_place_in_an_otherwise_usual_entry_is_a_category_change() -> None:
    extra = [_t("at", "ADP"), _t("doctor", "NOUN", role="at", head="office"),
             _t("office", "NOUN", role="at")]  # fmt: skip
    report = ch.detect_changes(cp.profile(_a() + extra, FIGS), _family())
    assert _kinds(report) == ["category"]


def test_a_new_modifier_of_a_known_thing_is_no_new_place() -> None:
    """ "the bathroom scale" for "the scale": the head is known, only qualified."""
    family = [cp.profile([_t("Scale", "NOUN", role="root"), _num("84")], ["weight"])] * 6
    memory = [_t("bathroom", "NOUN", role="on", head="scale"),
              _t("scale", "NOUN", role="on"), _num("84")]  # fmt: skip
    assert ch.detect_changes(cp.profile(memory, ["weight"]), family).changes == []


def _shop(store: str) -> list[Tok]:
    return [_t("Weekly", "ADJ"), _t("shop", "NOUN", role="root"), _t("at", "ADP"),
            _name(store, "at"), _num("63.20")]  # fmt: skip


def _copay(pharmacy: str) -> list[Tok]:
    return [_t("Refilled", "VERB"), _t("tablets", "NOUN", role="obj"), _t("at", "ADP"),
            _name(pharmacy, "at"), _t("copay", "NOUN", role="appos"), _num("10.00")]  # fmt: skip


def test_a_neighbouring_routine_in_the_family_sets_no_consensus() -> None:
    """A grocery bill whose family is mostly pharmacy copays (both dollar amounts): the
    copays share no word with it, so their pharmacy is not its usual store."""
    money = ["money:USD"]
    family = [cp.profile(_shop("ValueFoods"), money)] + [
        cp.profile(_copay("Riverside"), money) for _ in range(5)
    ]
    memory = cp.profile(_shop("ValueFoods"), money)
    assert ch.routine_members(memory, family) == family[:1]
    assert ch.detect_changes(memory, family).changes == []


def test_members_found_through_each_other() -> None:
    """One phrasing shares a word with the memory, another only with that phrasing."""
    a = cp.profile([_t("bill", "NOUN", role="root"), _name("Solace", "from")], ["money:GBP"])
    b = cp.profile([_t("charged", "VERB"), _name("Solace", "subj")], ["money:GBP"])
    memory = cp.profile([_t("bill", "NOUN", role="root"), _name("Verdant", "from")], ["money:GBP"])
    assert len(ch.routine_members(memory, [b, a, b, a])) == 4
