"""Routine kinds, the entities they mention and the people who keep them.

Nothing in this module is wording: it holds cadences, quantities, value ranges and the pools of
places, people and providers. All phrasing splits share it. The placeholders a kind offers to
its phrasing templates are its slot names and its quantity names (names starting with "_" are
hidden helpers used only to derive other quantities).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .quantities import Currency, Unit

INTERVAL_DAYS: dict[str, float] = {
    "daily": 1.0,
    "weekdays": 1.4,
    "few_days": 2.5,
    "weekly": 7.0,
    "biweekly": 14.0,
    "monthly": 30.4,
}


@dataclass(frozen=True)
class Quantity:
    """One number an entry reports.

    form: money | duration | measure | count | reading | clock | version | serial.
    base: range the routine's usual value is drawn from (money in US dollars, measures in the
    metric unit, durations in minutes, clocks in minutes after midnight).
    spread: relative jitter of normal entries (absolute minutes for clocks).
    step: rounding step (minutes for durations, base units for measures that use it).
    scale_by / ratio_from / per: the value is ratio x another quantity / per, the ratio being
    this quantity's own base (or another quantity's value, for ratio_from).
    choices / choices_by: the usual value is one of these (or depends on a slot's value).
    """

    name: str
    form: str
    base: tuple[float, float] = (0.0, 0.0)
    spread: float = 0.0
    step: float = 1.0
    unit: str = ""
    scale_by: str = ""
    ratio_from: str = ""
    noun: tuple[str, str] = ("", "")
    nice: str = ""
    base_low: tuple[float, float] = (0.0, 0.0)
    choices: tuple[float, ...] = ()
    choices_by: str = ""
    price: bool = False
    per: float = 1.0  # a derived value is ratio x other / per (an hourly rate over minutes)


@dataclass(frozen=True)
class Kind:
    """A kind of routine: cadence, time of day, slots, quantities and outlier options."""

    key: str
    label: str
    cadence: str
    hours: tuple[float, float]
    jitter_min: int
    slots: dict[str, tuple[str, ...]]
    quantities: tuple[Quantity, ...]
    main: str
    factors: tuple[float, ...]
    category_slots: tuple[str, ...] = ()
    stamp_after: str = ""
    linked: dict[str, dict[str, tuple[float, ...]]] = field(default_factory=dict)

    @property
    def interval_days(self) -> float:
        return INTERVAL_DAYS[self.cadence]

    @property
    def outlier_kinds(self) -> tuple[str, ...]:
        if self.category_slots:
            return ("value", "category", "content")
        return ("value", "content")

    def main_fields(self) -> set[str]:
        """The main quantity and the quantities derived from it: showing any one of them
        shows a value outlier."""
        derived = {q.name for q in self.quantities if q.scale_by == self.main}
        return {self.main} | {name for name in derived if not name.startswith("_")}

    def placeholders(self) -> set[str]:
        visible = {q.name for q in self.quantities if not q.name.startswith("_")}
        return visible | set(self.slots)


UNITS: dict[str, dict[str, Unit]] = {
    "km": {"metric": Unit("km", "kilometres"), "us": Unit("mi", "miles", 0.621371)},
    "kg": {"metric": Unit("kg", "kilos"), "us": Unit("lbs", "pounds", 2.20462)},
    "lift": {
        "metric": Unit("kg", "kilos", trim=True),
        "us": Unit("lbs", "pounds", 2.20462, decimals=0),
    },
    "water": {"metric": Unit("L", "litres"), "us": Unit("oz", "ounces", 33.814, decimals=0)},
    "water_alt": {
        "metric": Unit("ml", "millilitres", 1000, decimals=0),
        "us": Unit("cups", "cups", 4.227),
    },
    "fuel": {"metric": Unit("L", "litres"), "us": Unit("gal", "gallons", 0.264172)},
    "kwh": {"metric": Unit("kWh", "kilowatt-hours", decimals=0)},
    "gb": {"metric": Unit("GB", "gigabytes")},
    "glucose": {"metric": Unit("mmol/L", "mmol/L"), "us": Unit("mg/dL", "mg/dL", 18.0, decimals=0)},
    "temp": {
        "metric": Unit("°C", "degrees", space=False),
        "us": Unit("°F", "degrees", 1.8, 32.0, space=False),
    },
    "pct": {"metric": Unit("%", "percent", decimals=0, space=False)},
    "bpm": {"metric": Unit("bpm", "beats a minute", decimals=0)},
    "ms": {"metric": Unit("ms", "milliseconds", decimals=0)},
    "mg": {"metric": Unit("mg", "milligrams", decimals=0)},
    "hrs": {"metric": Unit("hrs", "hours")},
}

# Price per litre becomes price per gallon in US units.
PRICE_PER_UNIT: dict[str, float] = {"metric": 1.0, "us": 3.78541}


def unit_for(unit_key: str, system: str) -> Unit:
    table = UNITS[unit_key]
    return table.get(system, table["metric"])


CURRENCIES: dict[str, Currency] = {
    "GBP": Currency("GBP", "£", 0.79),
    "EUR": Currency("EUR", "€", 0.92, suffix=True),
    "EUR-IE": Currency("EUR", "€", 0.92),
    "USD": Currency("USD", "$", 1.0),
    "CAD": Currency("CAD", "$", 1.37),
    "AUD": Currency("AUD", "$", 1.52),
    "CHF": Currency("CHF", "CHF ", 0.88),
    "JPY": Currency("JPY", "¥", 150.0, decimals=0, price_decimals=0, nice_step=100.0, level=0.7),
    "INR": Currency(
        "INR", "₹", 83.0, decimals=0, price_decimals=2, indian=True, nice_step=100.0, level=0.3
    ),
    "SEK": Currency("SEK", "kr", 10.5, suffix=True, nice_step=10.0),
}


@dataclass(frozen=True)
class Profile:
    """A persona: name, country, currency key and unit system."""

    name: str
    country: str
    currency: str
    units: str = "metric"


PROFILES: tuple[Profile, ...] = (
    Profile("Harriet Blackwood", "United Kingdom", "GBP"),
    Profile("Owen Pritchard", "United Kingdom", "GBP"),
    Profile("Nadia Rahman", "United Kingdom", "GBP"),
    Profile("Lukas Brandt", "Germany", "EUR"),
    Profile("Camille Laurent", "France", "EUR"),
    Profile("Marta Ferrer", "Spain", "EUR"),
    Profile("Siobhan Kearney", "Ireland", "EUR-IE"),
    Profile("Pieter de Vries", "Netherlands", "EUR"),
    Profile("Marcus Greene", "United States", "USD", "us"),
    Profile("Dolores Ortega", "United States", "USD", "us"),
    Profile("Tyrone Wallace", "United States", "USD", "us"),
    Profile("Ayaka Mori", "Japan", "JPY"),
    Profile("Kenji Watanabe", "Japan", "JPY"),
    Profile("Priya Venkatesh", "India", "INR"),
    Profile("Arjun Malhotra", "India", "INR"),
    Profile("Chloé Tremblay", "Canada", "CAD"),
    Profile("Liam O'Connor", "Australia", "AUD"),
    Profile("Mia Thompson", "Australia", "AUD"),
    Profile("Reto Ammann", "Switzerland", "CHF"),
    Profile("Ingrid Lindqvist", "Sweden", "SEK"),
    Profile("Tomasz Zielinski", "Germany", "EUR"),
    Profile("Grace Mensah", "United Kingdom", "GBP"),
    Profile("Wei Chen", "Canada", "CAD"),
    Profile("Beatriz Santos", "Ireland", "EUR-IE"),
)

FIRST_NAMES: tuple[str, ...] = (
    "Ana",
    "Ben",
    "Chiara",
    "Dev",
    "Emeka",
    "Fatima",
    "Gus",
    "Hana",
    "Ivo",
    "Jonas",
    "Keiko",
    "Lars",
    "Maya",
    "Noor",
    "Oscar",
    "Pilar",
    "Quinn",
    "Rosa",
    "Sami",
    "Tess",
    "Uma",
    "Viktor",
    "Wren",
    "Yusuf",
    "Zoe",
)
CHILD_NAMES: tuple[str, ...] = (
    "Ella",
    "Finn",
    "Ruby",
    "Leo",
    "Isla",
    "Theo",
    "Nia",
    "Arlo",
    "Maddie",
    "Kofi",
    "Juno",
)


def _q(name: str, form: str, **kw: Any) -> Quantity:
    return Quantity(name, form, **kw)


KINDS: tuple[Kind, ...] = (
    Kind(
        "rent",
        "monthly rent",
        "monthly",
        (8.0, 12.0),
        50,
        {
            "payee": (
                "Parkside Lettings",
                "Harbour Estates",
                "Greenway Property Management",
                "Beacon Rentals",
                "Mr Okafor",
                "Lindqvist Homes",
                "Cedar Court Lettings",
                "Mrs Halloran",
            )
        },
        (_q("amount", "money", base=(850, 2300), nice="whole10"),),
        "amount",
        (2.4, 3.1, 3.8, 0.3),
        ("payee",),
    ),
    Kind(
        "sleep",
        "nightly sleep",
        "daily",
        (6.5, 9.0),
        30,
        {},
        (
            _q("sleep", "duration", base=(410, 495), spread=0.07, step=5),
            _q("bed", "clock", base=(22 * 60 + 30, 23 * 60 + 40), spread=20),
        ),
        "sleep",
        (0.42, 0.38, 1.65),
    ),
    Kind(
        "yoga",
        "weekly yoga classes",
        "weekly",
        (18.0, 20.5),
        25,
        {
            "teacher": FIRST_NAMES,
            "studio": (
                "Lotus Room",
                "Sattva Studio",
                "Breathe Loft",
                "Shala North",
                "Root & Branch Yoga",
                "Kaivalya Hall",
            ),
            "style": ("vinyasa", "hatha", "yin", "ashtanga", "Iyengar"),
        },
        (_q("dur", "duration", choices=(60, 75, 90)),),
        "dur",
        (0.25, 0.3),
        ("teacher", "studio"),
    ),
    Kind(
        "call_home",
        "weekly calls home",
        "weekly",
        (18.5, 21.5),
        40,
        {
            "person": (
                "Mum",
                "Dad",
                "my grandmother",
                "Grandpa",
                "my sister",
                "Aunt Rosa",
                "my brother",
                "Nonna",
            )
        },
        (_q("dur", "duration", base=(30, 70), spread=0.14),),
        "dur",
        (0.07, 0.1, 3.2),
        ("person",),
    ),
    Kind(
        "electricity_bill",
        "monthly electricity bills",
        "monthly",
        (9.0, 20.0),
        90,
        {
            "provider": (
                "Northgrid Energy",
                "Brightwell Power",
                "Solace Electric",
                "Verdant Energy",
                "Kestrel Utilities",
                "OpenVolt",
            )
        },
        (
            _q("kwh", "measure", base=(220, 420), spread=0.11, unit="kwh"),
            _q("_rate", "money", base=(0.24, 0.32)),
            _q("amount", "money", scale_by="kwh", ratio_from="_rate"),
        ),
        "kwh",
        (3.1, 3.9, 0.22),
        ("provider",),
    ),
    Kind(
        "pharmacy_refill",
        "monthly prescription refills",
        "monthly",
        (10.0, 18.5),
        60,
        {
            "pharmacy": (
                "Wellspring Pharmacy",
                "Corner Chemist",
                "MediPlus",
                "Hawthorn Drugs",
                "CityCare Pharmacy",
                "Apotheca",
            ),
            "med": (
                "thyroid tablets",
                "inhaler",
                "blood-pressure pills",
                "antihistamines",
                "statins",
                "eczema cream",
            ),
        },
        (_q("copay", "money", base=(8, 20), nice="whole"),),
        "copay",
        (4.5, 6.0),
        ("pharmacy",),
    ),
    Kind(
        "run",
        "runs",
        "few_days",
        (6.5, 8.5),
        35,
        {
            "route": (
                "the canal towpath",
                "the lakeside loop",
                "the park perimeter",
                "the river trail",
                "the old railway path",
                "the seafront",
            )
        },
        (
            _q("dist", "measure", base=(5.0, 10.0), spread=0.08, unit="km"),
            _q("time", "duration", base=(5.0, 6.4), spread=0.04, scale_by="dist", step=1 / 60),
        ),
        "dist",
        (0.3, 2.7),
        ("route",),
    ),
    Kind(
        "coffee_friend",
        "weekly coffee with a friend",
        "weekly",
        (9.5, 16.5),
        30,
        {
            "friend": FIRST_NAMES,
            "cafe": (
                "Bean There",
                "The Grindhouse",
                "Kettle & Crumb",
                "Café Nord",
                "Small Batch",
                "The Roastery",
            ),
        },
        (
            _q("dur", "duration", base=(45, 80), spread=0.13),
            _q("spent", "money", base=(6, 12), spread=0.12),
        ),
        "dur",
        (0.12, 3.3),
        ("friend", "cafe"),
    ),
    Kind(
        "weigh_in",
        "weekly weigh-ins",
        "weekly",
        (6.5, 8.5),
        25,
        {},
        (
            _q("weight", "measure", base=(58, 96), spread=0.012, unit="kg"),
            _q("fat", "measure", base=(17, 31), spread=0.03, unit="pct"),
        ),
        "weight",
        (1.13, 0.87),
    ),
    Kind(
        "groceries",
        "weekly grocery trips",
        "weekly",
        (10.0, 19.0),
        60,
        {
            "store": (
                "FreshWay",
                "Greenbasket",
                "ValueMart",
                "the Co-op on Mill Road",
                "Mercado Sol",
                "Harvest Foods",
            )
        },
        (
            _q("amount", "money", base=(60, 140), spread=0.12),
            _q("items", "count", base=(16, 30), spread=0.12, noun=("item", "items")),
        ),
        "amount",
        (3.6, 0.18),
        ("store",),
    ),
    Kind(
        "blood_pressure",
        "daily blood-pressure readings",
        "daily",
        (7.0, 8.5),
        25,
        {},
        (
            _q("bp", "reading", base=(114, 132), base_low=(72, 85), spread=0.04),
            _q("pulse", "measure", base=(60, 76), spread=0.07, unit="bpm"),
        ),
        "bp",
        (1.38, 1.42),
    ),
    Kind(
        "glucose",
        "daily fasting glucose readings",
        "daily",
        (6.8, 8.0),
        20,
        {},
        (_q("glucose", "measure", base=(4.8, 5.8), spread=0.06, unit="glucose"),),
        "glucose",
        (2.5, 0.5),
    ),
    Kind(
        "heart_rate",
        "daily resting heart rate",
        "daily",
        (6.5, 8.0),
        25,
        {
            "device": (
                "the Garmin",
                "my Fitbit",
                "the Oura ring",
                "the chest strap",
                "the Apple Watch",
                "the Polar band",
            )
        },
        (
            _q("hr", "measure", base=(54, 68), spread=0.05, unit="bpm"),
            _q("hrv", "measure", base=(38, 72), spread=0.1, unit="ms"),
        ),
        "hr",
        (1.75, 0.55),
        ("device",),
    ),
    Kind(
        "commute",
        "weekday commutes",
        "weekdays",
        (8.3, 9.6),
        15,
        {
            "line": (
                "the 73 bus",
                "the Northern line",
                "the M4",
                "the canal cycle path",
                "the 8:05 train",
                "the tram",
                "the ring road",
                "the ferry",
            )
        },
        (_q("dur", "duration", base=(25, 55), spread=0.12),),
        "dur",
        (2.9, 3.5),
        ("line",),
    ),
    Kind(
        "medication_dose",
        "daily medication doses",
        "daily",
        (7.5, 9.0),
        20,
        {"med": ("metformin", "sertraline", "lisinopril", "propranolol", "lamotrigine")},
        (_q("dose", "measure", unit="mg", choices_by="med"),),
        "dose",
        (2.0, 3.0),
        linked={
            "med": {
                "metformin": (500, 850),
                "sertraline": (50, 100),
                "lisinopril": (10, 20),
                "propranolol": (40, 80),
                "lamotrigine": (100, 200),
            }
        },
    ),
    Kind(
        "deployment",
        "routine software deployments",
        "few_days",
        (10.0, 16.5),
        60,
        {
            "service": (
                "billing-api",
                "orders-worker",
                "search-gateway",
                "auth-service",
                "notifications",
                "reporting-etl",
            ),
            "region": ("eu-west-1", "us-east-2", "ap-southeast-1", "eu-central-1", "us-west-2"),
        },
        (_q("dur", "duration", base=(8, 22), spread=0.14), _q("version", "version")),
        "dur",
        (6.5, 9.0),
        ("region",),
    ),
    Kind(
        "oncall_page",
        "weekly on-call shift summaries",
        "weekly",
        (9.0, 10.5),
        20,
        {
            "source": (
                "checkout-api",
                "payments-gateway",
                "search-indexer",
                "the ledger service",
                "cdn-edge",
                "the auth cluster",
            )
        },
        (
            _q("pages", "count", base=(3, 6), spread=0.2, noun=("page", "pages")),
            _q("ack", "duration", base=(3, 7), spread=0.15),
        ),
        "pages",
        (5.5, 7.0),
        ("source",),
    ),
    Kind(
        "invoice",
        "monthly client invoices",
        "monthly",
        (9.0, 18.0),
        80,
        {
            "client": (
                "Halcyon Media",
                "Tern & Co",
                "Bluefin Analytics",
                "Orchard Studio",
                "Meridian Freight",
                "Quillon Legal",
            )
        },
        (
            _q("hours", "measure", base=(22, 40), spread=0.1, unit="hrs"),
            _q("_rate", "money", base=(60, 95), nice="whole"),
            _q("amount", "money", scale_by="hours", ratio_from="_rate"),
            _q("inv", "serial", base=(40, 180)),
        ),
        "hours",
        (3.6, 0.14),
        ("client",),
    ),
    Kind(
        "sensor_log",
        "daily sensor readings",
        "daily",
        (5.9, 6.2),
        4,
        {"sensor": ("greenhouse", "server cupboard", "nursery", "wine cellar", "garage", "loft")},
        (
            _q("temp", "measure", base=(14, 23), spread=0.05, unit="temp"),
            _q("hum", "measure", base=(40, 65), spread=0.06, unit="pct"),
            _q("batt", "measure", base=(78, 96), spread=0.01, unit="pct"),
        ),
        "temp",
        (1.9, 2.1),
        ("sensor",),
    ),
    Kind(
        "phone_bill",
        "monthly phone bills",
        "monthly",
        (9.0, 20.0),
        90,
        {
            "carrier": (
                "Tellus Mobile",
                "Skyline",
                "Orbit Telecom",
                "Nimbus Mobile",
                "Parrot",
                "Kite Wireless",
            )
        },
        (
            _q("amount", "money", base=(25, 60), spread=0.05),
            _q("data", "measure", base=(5, 25), spread=0.14, unit="gb"),
        ),
        "amount",
        (4.2, 5.5),
        ("carrier",),
    ),
    Kind(
        "gym",
        "gym sessions",
        "few_days",
        (6.5, 19.5),
        40,
        {
            "gym": (
                "IronWorks",
                "PulseFit",
                "the Leisure Centre",
                "Forge Athletic",
                "Anytime Gym",
                "Summit Club",
            )
        },
        (
            _q("dur", "duration", base=(45, 75), spread=0.12),
            _q("lift", "measure", base=(60, 110), spread=0.04, step=2.5, unit="lift"),
        ),
        "dur",
        (0.2, 2.9),
        ("gym",),
    ),
    Kind(
        "fuel",
        "car refuelling",
        "weekly",
        (7.5, 19.5),
        90,
        {
            "station": (
                "the Shell on Kingsway",
                "the BP by the bypass",
                "Esso Northgate",
                "the Total at the roundabout",
                "the supermarket pumps",
                "Texaco Riverside",
            )
        },
        (
            _q("litres", "measure", base=(34, 50), spread=0.1, unit="fuel"),
            _q("price", "money", base=(1.55, 1.85), spread=0.025, price=True),
            _q("amount", "money", scale_by="litres", ratio_from="price"),
        ),
        "litres",
        (0.2, 0.17),
        ("station",),
    ),
    Kind(
        "child_pickup",
        "weekday school pickups",
        "weekdays",
        (15.0, 15.7),
        0,
        {
            "child": CHILD_NAMES,
            "place": (
                "Oakfield Primary",
                "St Anne's",
                "Riverside School",
                "the after-school club",
                "Hillcrest Academy",
                "Little Acorns nursery",
            ),
        },
        (_q("time", "clock", base=(15 * 60 + 5, 15 * 60 + 35), spread=8),),
        "time",
        (1.18, 1.2),
        ("place",),
        stamp_after="time",
    ),
    Kind(
        "cleaning_service",
        "fortnightly cleaning visits",
        "biweekly",
        (10.0, 16.0),
        60,
        {"cleaner": FIRST_NAMES},
        (
            _q("hours", "duration", choices=(120, 150, 180, 210, 240)),
            _q("_rate", "money", base=(18, 28), nice="whole"),
            _q("amount", "money", scale_by="hours", ratio_from="_rate", per=60.0),
        ),
        "hours",
        (0.3, 0.25),
        ("cleaner",),
    ),
    Kind(
        "subscription",
        "monthly subscriptions",
        "monthly",
        (6.0, 23.0),
        30,
        {
            "service": ("StreamBox", "Melodia", "CloudVault", "ReadMore", "Cinemaxx+", "Podlift"),
            "plan": ("Premium", "Family", "Standard", "Plus"),
        },
        (_q("amount", "money", base=(7, 20), nice="price99"),),
        "amount",
        (3.0, 4.0),
        ("service",),
    ),
    Kind(
        "water_intake",
        "daily water intake",
        "daily",
        (20.5, 22.5),
        30,
        {},
        (
            _q("water", "measure", base=(1.7, 2.6), spread=0.1, unit="water"),
            _q("glasses", "count", base=(4, 4), scale_by="water", noun=("glass", "glasses")),
        ),
        "water",
        (0.24, 2.5),
    ),
)

# Kinds that only the blind splits deal (added with the first of them); the other splits keep the
# 26 above, so their datasets do not change.
EXTRA_KINDS: tuple[Kind, ...] = (
    Kind(
        "dog_walk",
        "daily dog walks",
        "daily",
        (6.8, 8.2),
        30,
        {
            "dog": ("Biscuit", "Pepper", "Otis", "Maple", "Bruno", "Tilly"),
            "route": (
                "the common",
                "Millbrook woods",
                "the playing fields",
                "the allotment lane",
                "the reservoir path",
                "the dunes",
            ),
        },
        (
            _q("dur", "duration", base=(30, 55), spread=0.12),
            _q(
                "dist", "measure", base=(3.6, 5.4), spread=0.06, unit="km", scale_by="dur", per=60.0
            ),
        ),
        "dur",
        (0.2, 3.4),
        ("route",),
    ),
    Kind(
        "cloud_bill",
        "monthly cloud hosting bills",
        "monthly",
        (8.0, 18.0),
        90,
        {
            "host": (
                "Cirrus Compute",
                "Hostwell",
                "Gridline Hosting",
                "Altostack",
                "ByteHarbor",
                "Cumulo Systems",
            ),
            "project": ("the blog", "the side project", "the photo archive", "the shop site"),
        },
        (
            _q("amount", "money", base=(18, 60), spread=0.07),
            _q("storage", "measure", base=(40, 160), spread=0.03, unit="gb"),
        ),
        "amount",
        (4.0, 6.5),
        ("host",),
    ),
    Kind(
        "tutoring",
        "weekly tutoring sessions",
        "weekly",
        (16.0, 19.0),
        20,
        {
            "tutor": ("Ms Adeyemi", "Mr Novak", "Dr Ferreira", "Mrs Kowalski", "Mr Haddad"),
            "subject": ("maths", "piano", "Spanish", "chemistry", "guitar"),
        },
        (
            _q("dur", "duration", choices=(45, 60, 90)),
            _q("_rate", "money", base=(30, 55), nice="whole"),
            _q("fee", "money", scale_by="dur", ratio_from="_rate", per=60.0),
        ),
        "dur",
        (0.3, 0.25),
        ("tutor",),
    ),
)

# Kinds dealt per split; a split not named here deals KINDS.
SPLIT_KINDS: dict[str, tuple[Kind, ...]] = {
    "blind": KINDS + EXTRA_KINDS,
    "blind2": KINDS + EXTRA_KINDS,
    "blind3": KINDS + EXTRA_KINDS,
    "blind4": KINDS + EXTRA_KINDS,
    "blind5": KINDS + EXTRA_KINDS,
}


def kinds_for(split: str) -> tuple[Kind, ...]:
    """The kinds a split deals to its personas."""
    return SPLIT_KINDS.get(split, KINDS)


KIND_BY_KEY: dict[str, Kind] = {kind.key: kind for kind in KINDS + EXTRA_KINDS}
