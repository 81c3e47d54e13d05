"""Varied, realistic-looking memories and questions for load tests (seeded, reproducible).

Every sentence states at least one number or date, so near-duplicate merging (which needs
equal figures) rarely folds two of them; exact repeats are dropped by the generator.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

PEOPLE = (
    "Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Niaj Olivia Peggy Rupert "
    "Sybil Trent Victor Walter Yusuf Zoe Priya Mateo Aiko Lars Fatima Chen Sofia Omar Lena"
).split()
PLACES = (
    "Berlin|Lisbon|the office|Seattle|the lake house|Kyoto|the gym|Montreal|the farmers market|"
    "Boston|the library|Nairobi|the dentist|Oslo|the climbing wall|Austin|the hospital|Porto"
).split("|")
ORGS = "Acme|Globex|Initech|the city council|Umbrella Labs|Stark Freight|the school board".split(
    "|"
)
TOPICS = (
    "the Q3 budget|the billing migration|the hiring plan|the new onboarding flow|the outage "
    "review|the mobile release|the data retention policy|the vendor contract|the roadmap"
).split("|")
TECH = "Postgres|Redis|Kafka|FastAPI|React|Neo4j|Qdrant|Kubernetes|Terraform|Rust".split("|")
FOODS = "ramen|tacos|a lentil curry|sourdough|pho|paella|a mushroom risotto|dumplings".split("|")
HOBBIES = "pottery|bouldering|the cello|chess|trail running|watercolour|birdwatching".split("|")
DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()

TEMPLATES = (
    "{p} moved the meeting about {t} to {d} at {h}:00.",
    "{p} said the {x} cluster used {n} GB of memory during Tuesday's load test.",
    "We agreed with {o} to pay {n}00 euros per month for the support plan.",
    "{p} flew to {l} on {d} and stays for {m} nights.",
    "{p} cooked {f} for {m} people at the {d} dinner.",
    "{p} has been practising {b} for {m} years and goes every {d}.",
    "The {x} upgrade for {t} is blocked until ticket #{n} is fixed.",
    "{p}'s daughter turns {m} on the {m2}th and wants a party at {l}.",
    "Rent of {n}0 is due on the {m2}th; {p} pays it from the joint account.",
    "{p} ran {m} km along the river in {m2} minutes on {d}.",
    "{p} prefers {f} over pizza and is allergic to peanuts since {y}.",
    "{o} asked {p} to review {t} before {d}, about {n} pages.",
    "Deploys of {x} at {o} happen on {d} after QA signs off; last one took {m} minutes.",
    "{p} booked the dentist in {l} for {d} at {h}:30, appointment {n}.",
    "{p} lent {p2} {n} dollars for the trip to {l}.",
    "The {b} class at {l} costs {n} a term and starts on {d}.",
    "{p} and {p2} have known each other since {y}, when they met in {l}.",
    "{p} switched {t} from MySQL to {x} and cut the nightly job to {m} minutes.",
    "{p} slept only {m} hours on {d} because of the {x} pager alert #{n}.",
    "{p} adopted a dog named {p2} in {y}; it weighs {m} kg.",
)

QUESTIONS = (
    "When is the meeting about {t}?",
    "How much memory did the {x} cluster use?",
    "How much do we pay {o} for support?",
    "When did {p} fly to {l}?",
    "What did {p} cook for dinner?",
    "How long has {p} been practising {b}?",
    "What is blocking the {x} upgrade?",
    "When is {p}'s daughter's birthday party?",
    "When is the rent due?",
    "How far did {p} run on {d}?",
    "What food does {p} prefer?",
    "What did {o} ask {p} to review?",
    "When does {o} deploy {x}?",
    "When is {p}'s dentist appointment?",
    "How much money did {p} lend for the trip?",
    "How much is the {b} class at {l}?",
    "How did {p} and {p2} meet?",
    "Why is the nightly job for {t} faster?",
    "Why did {p} sleep badly?",
    "What is the name of {p}'s dog?",
)


def _slots(rnd: random.Random) -> dict[str, object]:
    p, p2 = rnd.sample(PEOPLE, 2)
    return {
        "p": p,
        "p2": p2,
        "l": rnd.choice(PLACES),
        "o": rnd.choice(ORGS),
        "t": rnd.choice(TOPICS),
        "x": rnd.choice(TECH),
        "f": rnd.choice(FOODS),
        "b": rnd.choice(HOBBIES),
        "d": rnd.choice(DAYS),
        "h": rnd.randint(8, 18),
        "n": rnd.randint(2, 99_999),
        "m": rnd.randint(2, 60),
        "m2": rnd.randint(1, 28),
        "y": rnd.randint(1995, 2025),
    }


@dataclass(frozen=True)
class SyntheticMemory:
    text: str
    created_at: datetime
    episode: str


def memories(n: int, seed: int = 1, start: datetime | None = None) -> Iterator[SyntheticMemory]:
    """``n`` distinct memories over the year before ``start``, in episodes of 5-30 entries a
    few minutes apart (the shape of a working day's notes)."""
    rnd = random.Random(seed)
    end = start or datetime.now(UTC)
    seen: set[str] = set()
    made = 0
    episode = 0
    while made < n:
        episode += 1
        t = end - timedelta(days=rnd.uniform(1, 365))
        for _ in range(rnd.randint(5, 30)):
            text = rnd.choice(TEMPLATES).format(**_slots(rnd))
            if text in seen:
                continue
            seen.add(text)
            t += timedelta(minutes=rnd.uniform(0.5, 6))
            yield SyntheticMemory(text, t, f"s{seed}-ep{episode}")
            made += 1
            if made >= n:
                return


def questions(n: int, seed: int = 2) -> list[str]:
    rnd = random.Random(seed)
    return [rnd.choice(QUESTIONS).format(**_slots(rnd)) for _ in range(n)]
