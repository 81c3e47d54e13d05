"""Texts whose activations set the smoothing scales of the `minilm-q8s` graph
(`minilm_smooth`).

Smoothing only needs each hidden channel's largest magnitude over realistic inputs: the
few outlier channels of a BERT-style model are a property of the model, not of the topic,
so a hundred varied sentences settle them. These are written for this purpose (no
benchmark data): what agents store and ask (facts with figures, routines, preferences,
instructions, coding notes, chat turns, questions), short and long.
"""

from __future__ import annotations

_SENTENCES = (
    "Hey! Long time no see, how have you been lately?",
    "I finally finished the pottery course last weekend and made three bowls.",
    "Thanks so much for the recommendation, the book was amazing.",
    "My sister is visiting from Toronto next month, so I'm cleaning the spare room.",
    "That sounds great, let me know when you want to go hiking again.",
    "I've been feeling a bit overwhelmed at work since the reorganisation in March.",
    "We adopted a kitten from the shelter; she is called Miso and she is very shy.",
    "Honestly I think the concert was the best night of the whole summer.",
    "Did you ever hear back from the landlord about the broken heater?",
    "I started volunteering at the community garden every Saturday morning.",
    "Never force-push to the main branch; open a pull request and wait for review.",
    "Always run the database migrations in a transaction on the staging cluster first.",
    "The user prefers answers in British English with metric units.",
    "Do not share customer email addresses outside the support team.",
    "Use tabs for indentation in the Makefile and four spaces everywhere else.",
    "The payments service retries webhooks five times with exponential backoff.",
    "Switched the cache from Memcached to Redis because we needed sorted sets.",
    "The flaky test in test_orders.py fails when the clock crosses midnight UTC.",
    "Production logs are kept for 30 days, audit logs for seven years.",
    "Run `make lint` before committing; CI rejects files that ruff reformats.",
    "The API returns 429 with a Retry-After header when a tenant exceeds 100 requests/s.",
    "Bumped numpy to 2.1 and pinned onnxruntime below 1.21 after the ABI break.",
    "Decided to keep the monolith for now and split billing out next quarter.",
    "Ran 5 km in 27:10 this morning, a new personal best.",
    "Slept about six hours, woke up at 5:45 because of the neighbours.",
    "Paid the electricity bill, 84.20 euros, two days late.",
    "Weekly yoga class on Thursday evenings at 7 pm with Dana.",
    "Took the 8:15 train to work, it was 20 minutes late again.",
    "Blood pressure 128 over 82 at the pharmacy check today.",
    "Spent 45 minutes practising Spanish verbs on the app.",
    "Bought groceries for the week: oats, lentils, spinach, eggs and coffee.",
    "Called mum on Sunday, she is recovering well after the knee surgery.",
    "The quarterly report is due on the 14th and needs sign-off from finance.",
    "Our team velocity dropped to 21 points after two people went on leave.",
    "The vendor quoted 12,500 dollars for the annual licence, up 8 percent.",
    "Meeting with the design team moved to Wednesday at 3:30.",
    "What did we decide about the retention policy for deleted accounts?",
    "When is the next dentist appointment?",
    "Which library did we pick for parsing phone numbers and why?",
    "How much did the flights to Lisbon cost in the end?",
    "Who is responsible for the on-call rotation this week?",
    "Why did the nightly export job fail on Friday?",
    "Remind me what my daughter wanted for her birthday.",
    "Is there anything I should avoid when talking to the new client?",
    "I'm allergic to penicillin, so please flag any prescription that contains it.",
    "Grandpa used to take us fishing at the lake every August when we were kids.",
    "The kids' school closes early on Fridays, pick-up is at 12:30.",
    "After the accident I stopped driving at night for almost a year.",
    "She said the new role pays better but the commute is over an hour each way.",
    "Our wedding anniversary is on June 9th; we usually go back to the same restaurant.",
    "Ok.",
    "Sounds good!",
    "lol yes exactly",
    "Can you fix the failing import in services/recall/api.py?",
    "Traceback: KeyError 'tenant' raised in handlers.py line 212 during replay.",
    "SELECT count(*) FROM orders WHERE created_at > now() - interval '7 days';",
    "The Kubernetes deployment uses 3 replicas, 500m CPU and 1 GiB memory each.",
    "Set PCM_REDIS_URL to redis://cache:6379/2 in the staging overlay.",
    "I've been thinking about going back to school to study marine biology, maybe "
    "part-time at first, because the idea of spending my thirties in the same job "
    "without learning anything new honestly scares me more than the tuition does.",
    "The outage on Tuesday started when a config push removed the health-check path, "
    "the load balancer marked every pod unhealthy within two minutes, and it took us "
    "forty minutes to roll back because the rollback script also read the broken config.",
    "My therapist suggested writing down three good things every evening, and after a "
    "month of doing it I notice I sleep better and argue less with my partner.",
)

_WHO = ("I", "Maya", "Tom", "My manager", "The team", "Grandma", "Priyanka", "Jonas")
_WHEN = ("yesterday", "on Monday", "last week", "this morning", "in 2019", "on May 3rd")
_WHAT = (
    "signed the lease for the flat on Elm Street",
    "ordered a standing desk for 340 dollars",
    "moved the sprint review to 10:00",
    "cancelled the gym membership after 14 months",
    "found a bug in the invoice rounding",
    "planted tomatoes and basil on the balcony",
    "cooked a lentil curry for six people",
    "upgraded the laptop to 32 GB of RAM",
)


def texts() -> list[str]:
    """The calibration set: the sentences above plus short composed ones (109 texts, 85
    distinct: the composed ones repeat after 24, which changes no maximum; kept as the
    measured copies were made, since the batches' make-up moves the last float bits)."""
    composed = [f"{_WHO[i % 8]} {_WHAT[i * 3 % 8]} {_WHEN[i % 6]}." for i in range(48)]
    return [*_SENTENCES, *composed]
