"""The local judge across wordings a routine alternates between (issue 32): a reading is
compared by what it measures, whatever the form, and a new wording of the usual entry is
not news. Phrasings written for these tests, of routines the shared dev set lacks."""

from __future__ import annotations

from pcm_common.domain.harmonise import harmonise
from pcm_common.domain.quantities import parse_quantities
from pcm_common.domain.surprisal import FLAG_MIN_SCORE
from pcm_common.judge.local import judge_texts

WATER = [
    "Paid Northwind Water 58.20 CAD.",
    "$57.10 to Northwind Water for the quarter.",
    "Paid Northwind Water 59.75 CAD.",
    "$56.40 to Northwind Water for the quarter.",
    "Paid Northwind Water 58.95 CAD.",
]
GAMES = [
    "Board games at Ludo Cafe for 2 hrs 10 min.",
    "2:05 at Ludo Cafe tonight.",
    "Board games at Ludo Cafe for 1 hr 55 min.",
    "2:20 at Ludo Cafe tonight.",
    "Board games at Ludo Cafe for 2 hrs 0 min.",
]
FUEL = [
    "Filled up the van at Shell: £61.20.",
    "Filled up the van at Shell: £58.90.",
    "Filled up the van at Shell: £63.05.",
    "Filled up the van at Shell: £60.15.",
]
LAUNDRY = [
    "Did the weekly laundry at Suds Laundromat: $14.50.",
    "Did the weekly laundry at Suds Laundromat: $13.75.",
    "Did the weekly laundry at Suds Laundromat: $14.25.",
    "Did the weekly laundry at Suds Laundromat: $15.00.",
    "Did the weekly laundry at Suds Laundromat: $14.50.",
]


def test_a_shared_currency_sign_reads_as_the_code_the_routine_names() -> None:
    texts = [parse_quantities(t) for t in ["$231.40 to Northwind Water", *WATER]]
    keys = {q.key for qs in harmonise(texts) for q in qs}
    assert keys == {"money:CAD"}
    assert judge_texts("$231.40 to Northwind Water for the quarter.", WATER).score >= 0.7
    assert judge_texts("$58.10 to Northwind Water for the quarter.", WATER).score < 0.7


def test_a_sign_stays_when_the_routine_names_two_currencies_of_its_group() -> None:
    texts = [parse_quantities(t) for t in ("$5.00 tip", "5.00 CAD", "5.00 AUD")]
    assert [q.key for qs in harmonise(texts) for q in qs] == [
        "money:USD",
        "money:CAD",
        "money:AUD",
    ]


def test_a_bare_clock_reads_in_the_unit_of_the_routine_durations() -> None:
    assert judge_texts("2:15 at Ludo Cafe tonight.", GAMES).score < FLAG_MIN_SCORE
    assert judge_texts("0:20 at Ludo Cafe tonight.", GAMES).score >= FLAG_MIN_SCORE
    # Run splits stay minutes and seconds beside durations in minutes.
    (q,) = harmonise([parse_quantities("Best mile 7:05"), parse_quantities("ran 7 min")])[0]
    assert q.value == 7 * 60 + 5


def test_the_routine_figure_in_a_new_clause_is_not_news() -> None:
    text = "Fuel stop at Shell; 41 litres in the tank, £60.80 at the pump."
    assert judge_texts(text, FUEL).score < FLAG_MIN_SCORE
    news = "Filled up the van at Shell: £60.10. The tyre pressure warning came on."
    verdict = judge_texts(news, FUEL)
    assert verdict.score >= FLAG_MIN_SCORE and verdict.kind == "content"


def test_a_reworded_event_is_no_category_change_but_a_new_place_is() -> None:
    reworded = judge_texts("Laundry run at Suds Laundromat, total $14.00.", LAUNDRY)
    assert reworded.score < FLAG_MIN_SCORE
    moved = judge_texts("Did the weekly laundry at Bubbles Launderette: $14.50.", LAUNDRY)
    assert moved.score >= FLAG_MIN_SCORE and moved.kind == "category"


INVOICES = [
    "Billed Harbour Ltd £1,240.00 for March.",
    "Invoice to Harbour Ltd went out: £1,180.00.",
    "Billed Harbour Ltd £1,310.00 for May.",
    "Invoice to Harbour Ltd went out: £1,205.00.",
]


def test_another_series_that_only_brushes_the_family_is_no_change() -> None:
    # A deploy log whose nearest entries are invoices (through "billing"): it shares no
    # word and no kind of figure the routine agrees on, so it swaps no provider and adds
    # no statement to the invoices' routine.
    text = "Another billing-svc rollout (r2.4.1) to eu-west-1, fourteen minutes."
    assert judge_texts(text, INVOICES).score < FLAG_MIN_SCORE
    # The routine's own entry with a swapped client is still a category change.
    swapped = judge_texts("Invoice to Northgate Partners went out: £1,220.00.", INVOICES)
    assert swapped.score >= FLAG_MIN_SCORE and swapped.kind == "category"


WEIGH_INS = [
    "68.2kg on the bathroom scale.",
    "Weekly weight: 68.5 kg.",
    "68.1kg on the bathroom scale.",
    "Weekly weight: 68.4 kg.",
    "68.3kg on the bathroom scale.",
]


def test_a_log_measuring_more_is_not_compared_with_another_series_kilograms() -> None:
    # A climbing log's first entries lie near the weigh-ins (both in kg) but measure a
    # time as well: its 95 kg is no body weight.
    text = "Bouldering 80 min at Crux Hall, max hang 95 kg."
    assert judge_texts(text, WEIGH_INS).score < FLAG_MIN_SCORE
    # A weigh-in in a new wording is still compared with the others.
    assert judge_texts("Scale says 81.0 kg.", WEIGH_INS).score >= FLAG_MIN_SCORE
    assert judge_texts("Scale says 68.3 kg.", WEIGH_INS).score < FLAG_MIN_SCORE


def test_an_extra_figure_in_a_wording_that_names_nothing_still_compares() -> None:
    # "body fat" is a figure some weigh-ins add; the weight is compared with every
    # weigh-in whatever else they state.
    family = [*WEIGH_INS, "Weekly weight: 68.2 kg."]
    assert judge_texts("Body fat 24%, 81.0 kg.", family).score >= FLAG_MIN_SCORE


CHARGING = [
    "EV top-up at Ionity Kelso: 31.2 kWh, €18.40.",
    "€17.95 for 30.4 kWh, Ionity Kelso.",
    "EV top-up at Ionity Kelso: 32.0 kWh, €18.90.",
    "€18.10 for 30.8 kWh, Ionity Kelso.",
    "EV top-up at Ionity Kelso: 31.5 kWh, €18.55.",
]


def test_a_new_wording_with_a_swapped_provider_is_a_category_change() -> None:
    # No word in common with any entry, but the same two kinds of figure (energy and
    # money): the routine's entry, with another charger named where Ionity Kelso was.
    text = "Charged up? Yes: Fastned Brora, 31.9 kWh, €19.05."
    verdict = judge_texts(text, CHARGING)
    assert verdict.score >= FLAG_MIN_SCORE and verdict.kind == "category", verdict
    assert "Fastned Brora" in verdict.differs and "Ionity Kelso" in verdict.differs
    # The same wording at the usual charger is no change.
    assert judge_texts("Charged up? Yes: Ionity Kelso, 31.9 kWh, €19.05.", CHARGING).score < (
        FLAG_MIN_SCORE
    )


def test_a_unit_abbreviation_is_no_place() -> None:
    family = [
        "Diesel at Gulf Ashby, 41 L. for £62.10.",
        "Diesel at Gulf Ashby, 39 L. for £59.80.",
        "Diesel at Gulf Ashby, 40 L. for £61.00.",
        "Diesel at Gulf Ashby, 42 L. for £63.40.",
    ]
    verdict = judge_texts("Diesel at Jet Corby, 40 L. for £61.30.", family)
    assert verdict.kind == "category" and "L." not in verdict.differs, verdict


def test_a_glaring_figure_is_judged_against_three_entries() -> None:
    family = [
        "Peak flow this morning: 420 L/min.",
        "Peak flow this morning: 410 L/min.",
        "Peak flow this morning: 430 L/min.",
    ]
    assert judge_texts("Peak flow this morning: 150 L/min.", family).score >= FLAG_MIN_SCORE
    # three entries say little of the spread: a modest change is not flagged
    assert judge_texts("Peak flow this morning: 470 L/min.", family).score < FLAG_MIN_SCORE


def test_a_category_change_needs_four_entries() -> None:
    family = [
        "Piano lesson with Ms Abara, 45 min.",
        "Piano lesson with Ms Abara, 45 min.",
        "Piano lesson with Ms Abara, 45 min.",
    ]
    assert judge_texts("Piano lesson with Mr Lindqvist, 45 min.", family).score < FLAG_MIN_SCORE
    four = [*family, "Piano lesson with Ms Abara, 45 min."]
    assert judge_texts("Piano lesson with Mr Lindqvist, 45 min.", four).score >= FLAG_MIN_SCORE


def test_a_bedtime_in_four_digits_reads_as_the_family_clocks() -> None:
    # "from 10:52" carries no am/pm; beside "lights out 2248" it is the evening.
    family = [
        "Asleep for 7:10 (from 10:52).",
        "lights out 2248 | 7.2h",
        "Asleep for 7:25 (from 10:41).",
        "lights out 2255 | 7.0h",
        "Asleep for 7:05 (from 10:58).",
    ]
    assert judge_texts("lights out 2301 | 7.1h", family).score < FLAG_MIN_SCORE
    assert judge_texts("lights out 0342 | 3.5h", family).score >= FLAG_MIN_SCORE


# A routine with a habit of passing remarks, each new against the others.
KILN = [
    "Pottery at Clayhouse with Ines, 2 h; the wheel kept wobbling.",
    "Pottery at Clayhouse with Ines, 2 h.",
    "Pottery at Clayhouse with Ines, 2 h; glaze ran everywhere.",
    "Pottery at Clayhouse with Ines, 2 h; sunny walk home.",
    "Pottery at Clayhouse with Ines, 2 h.",
    "Pottery at Clayhouse with Ines, 2 h; new apron.",
]


def test_a_passing_remark_is_no_news_where_the_routine_makes_them() -> None:
    text = "Pottery at Clayhouse with Ines, 2 h; the radio was loud."
    assert judge_texts(text, KILN).score < FLAG_MIN_SCORE
    # Longer than any remark the routine made: news.
    news = (
        "Pottery at Clayhouse with Ines, 2 h; afterwards the studio owner told us the lease "
        "ends in March and the classes are moving to Dunmore."
    )
    assert judge_texts(news, KILN).score >= FLAG_MIN_SCORE
    # The same short remark in a routine that never makes one is news.
    plain = [t.split(";")[0] + "." for t in KILN]
    assert judge_texts(text, plain).score >= FLAG_MIN_SCORE


def test_minutes_written_as_m_are_not_metres_far_from_the_routines_distances() -> None:
    family = [
        "Ran 8.0 km along the quay.",
        "door to desk 38m (tram)",
        "Ran 8.0 km along the quay.",
        "Ran 8.0 km along the quay.",
        "Ran 8.0 km along the quay.",
    ]
    assert judge_texts("door to desk 41m (tram)", family).score < FLAG_MIN_SCORE
    walks = [
        "Walked 1.2 km to the market.",
        "Walked 1.5 km to the market.",
        "Walked 1.3 km to the market.",
        "Walked 1.4 km to the market.",
    ]
    # Near the stated distances, "m" is metres and compares with them.
    assert judge_texts("walk 300m market", walks).score >= FLAG_MIN_SCORE


def test_a_new_adjunct_is_no_news_where_the_routine_varies_one() -> None:
    family = [
        "Window cleaner came: front and back, £18 by card.",
        "Window cleaner came: front and back, £18 via the app.",
        "Window cleaner came: front and back, £18 by card.",
        "Window cleaner came: front and back, £18 via the app.",
        "Window cleaner came: front and back, £18 by card.",
    ]
    text = "Window cleaner came: front and back, £18 in cash."
    assert judge_texts(text, family).score < FLAG_MIN_SCORE
    # A family that never varies one: a companion added is still news.
    swims = [
        "Swim at Ocean Baths, 40 min.",
        "Swim at Ocean Baths, 42 min.",
        "Swim at Ocean Baths, 39 min.",
        "Swim at Ocean Baths, 41 min.",
    ]
    assert judge_texts("Swim at Ocean Baths with Priya Nair, 40 min.", swims).score >= (
        FLAG_MIN_SCORE
    )


# A routine in three wordings; only one of them, seldom written, ends in a passing remark:
# too seldom for a habit of the routine, always for a habit of that wording.
WALKS = [
    "Walked Bruno round Hollins Park, 45 min.",
    "Evening stroll with Bruno: 44 min, Hollins Park; rain all the way.",
    "Dog walk 46 min (Hollins Park, Bruno)",
    "Walked Bruno round Hollins Park, 43 min.",
    "Dog walk 45 min (Hollins Park, Bruno)",
    "Walked Bruno round Hollins Park, 44 min.",
    "Dog walk 47 min (Hollins Park, Bruno)",
]


def test_a_remark_is_no_news_where_its_wording_makes_them() -> None:
    text = "Evening stroll with Bruno: 45 min, Hollins Park; chased the ducks in the pond."
    assert judge_texts(text, WALKS).score < FLAG_MIN_SCORE
    news = (
        "Evening stroll with Bruno: 45 min, Hollins Park; the vet phoned to say his blood "
        "test came back abnormal and he needs surgery next week."
    )
    assert judge_texts(news, WALKS).score >= FLAG_MIN_SCORE
    # The same remark where that wording never carries one is news.
    plain = [t.replace("; rain all the way", "") for t in WALKS]
    assert judge_texts(text, plain).score >= FLAG_MIN_SCORE


# A templated log in two wordings. The parse gives the new place no role like the old
# one's (spaCy reads "the chalk downs" after the colon as an adverbial), so only the
# template shows the swap.
RUNS_8K = [
    "44 minutes for 8 km along the riverside trail.",
    "Out early: the riverside trail, 8 km, 46m.",
    "Out early: the riverside trail, 8 km, 43m.",
    "45 minutes for 8 km along the riverside trail.",
    "Out early: the riverside trail, 8 km, 47m.",
    "Out early: the riverside trail, 8 km, 44m.",
]


def test_a_template_repeated_but_for_its_place_is_a_category_change() -> None:
    text = "Out early: the chalk downs, 8 km, 45m."
    v = judge_texts(text, RUNS_8K)
    assert v.score >= FLAG_MIN_SCORE and v.kind == "category", v
    assert "chalk downs" in v.differs and "riverside trail" in v.differs
    # A routine that runs somewhere else each time agrees on no place: no news.
    places = ["old quarry", "beech wood", "harbour wall", "ring road", "sand dunes", "canal"]
    tour = [t.replace("riverside trail", p) for t, p in zip(RUNS_8K, places, strict=True)]
    assert judge_texts(text, tour).score < FLAG_MIN_SCORE
    # The usual place with another time is no category change.
    assert judge_texts("Out early: the riverside trail, 8 km, 45m.", RUNS_8K).kind != "category"


SUBSCRIPTIONS = [
    "Lumen Books Plus billing: 7.49 EUR for Family.",
    "Paid €7.49 for Lumen Books Plus this month.",
    "Lumen Books Plus billing: 7.49 EUR for Family.",
    "Lumen Books Plus renewed: €7.49.",
    "Lumen Books Plus billing: 7.49 EUR for Family.",
]


def test_a_new_provider_in_the_providers_place_is_a_change_whatever_its_parse() -> None:
    v = judge_texts("Streamory billing: 7.49 EUR for Family.", SUBSCRIPTIONS)
    assert v.score >= FLAG_MIN_SCORE and v.kind == "category", v


def test_a_templated_remark_swapped_for_another_is_no_category_change() -> None:
    family = [
        "Bed 23:10, up 6:40; slept soundly all night.",
        "Bed 23:05, up 6:35; slept soundly all night.",
        "Bed 23:15, up 6:45; slept soundly all night.",
        "Bed 23:00, up 6:30; slept soundly all night.",
        "Bed 23:10, up 6:40; slept soundly all night.",
    ]
    v = judge_texts("Bed 23:10, up 6:40; woke to the alarm.", family)
    assert v.kind != "category", v
