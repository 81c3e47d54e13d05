"""Fourth blind split (blind4): entry families, questions, content notes and misc memories.

The tables follow the other split modules: each FAMILIES string is one sentence shape for a
routine kind, naming the kind's slots and quantities in braces (kinds.py) with an optional
format spec after a colon (quantities.py). ``[a|b|c]`` picks one option at random; an empty
option leaves nothing. Every family names the kind's main quantity (or one derived from it)
and every category slot of the kind.

The wording imitates notes typed into a personal assistant and lines that small systems log:
clipped log lines with dots, arrows, double colons and at-signs, hashtags, whole sentences,
abbreviations, units joined to numbers, readings with slashes or "over", currency codes and
symbols before or after amounts, number words, 12- and 24-hour clocks, the quantity at the
front, middle or end, and in some families a passing remark (the weather, who was there, a
small mishap) picked from a few options that is not news.

Content notes are clauses (lower case unless they start with "I" or a name, no final full
stop), each reporting something new. Questions are everyday requests on the routine's topic
that neither quote the entries nor touch anything an outlier could say.

Written on 2026-12-08 without reading the detector, the service, its tests or documentation,
the benchmark scripts, or the tune, heldout, valid, blind and blind2 phrasebooks (the blind3
module was opened for its table format only). Run it once, at the end of a session; the
detector's developer never reads this module or the texts generated from it.
"""

FAMILIES: dict[str, tuple[str, ...]] = {
    "rent": (
        "{payee} rent ✔ {amount}",
        "Standing order for the flat cleared: {amount:code} to {payee}.",
        "rent -> {payee} :: {amount:bare}",
        "Landlord money sorted. {amount:round} over to {payee}[ after payday| a day early|].",
        "{amount:codeafter} went to {payee} for the month's rent[; pouring outside|; postman "
        "late again|; did it from the sofa].",
        "Did the rent transfer on my phone — {payee}, {amount:k}.",
        "Monthly housing payment of {amount} to {payee} is done[, took a screengrab|, receipt "
        "filed in the folder|].",
        "{payee} got their {amount:approx} rent today. [Flatmate paid me back her "
        "half.|Nobody home but me.|Radiators still lukewarm.]",
        "Re: rent — paid {payee}, {amount:neg} showing on the statement.",
        "Rent day. {amount} → {payee}.",
    ),
    "sleep": (
        "Lights off {bed:pm}; slept {sleep:hm}.",
        "{sleep:hours} of sleep last night, head down at {bed:24}. [Neighbours had a "
        "party.|Wore earplugs.|Duvet too warm.]",
        "sleep: {sleep:hsp} (in bed {bed:fr})",
        "Got {sleep:words} of shut-eye after turning in around {bed}.",
        "Tracker — asleep {sleep:hmin}, lights out {bed:ampm}",
        "In bed by {bed:dot} and down for {sleep:hlong}[, no alarm needed|, woke once for a "
        "drink|].",
        "{sleep:range} sleep, bed {bed:24}",
        "#sleep {sleep:hm} / {bed:pm}",
        "Slept {sleep:tilde} after hitting the pillow at {bed:pm}. [Rain on the "
        "skylight.|Partner snoring.|Street dead quiet.]",
        "Hit the sack at {bed:24}, {sleep:hrs} of rest.",
    ),
    "yoga": (
        "{dur:hyph} {style} session at {studio}, taught by {teacher}.",
        "#yoga {studio} {teacher} {dur:m}",
        "Stretched out at {studio} for {dur:words} — {teacher}'s {style} class[, packed in|, "
        "half empty|].",
        "{teacher} @ {studio} :: {style} :: {dur:hm}",
        "Tonight's practice: {style} with {teacher} ({studio}), {dur:hmin}. [Sore hips "
        "after.|Lots of twists.|Lovely playlist.]",
        "Went to {studio} after work. {dur:mins} of {style}, {teacher} teaching.",
        "Mat class, {studio}, {dur:hlong}. Teacher: {teacher}.",
        "{dur:tilde} {style} at {studio} w/ {teacher}",
        "Yoga done — {teacher} ran a {dur:clock} {style} flow at {studio}[; forgot my bottle|; "
        "new props there|].",
        "{studio:cap} yoga ({teacher}) {dur:h}",
    ),
    "call_home": (
        "Rang {person} for {dur:mins}.",
        "{dur:hsp} chat with {person} tonight[, mostly about telly|, everyone well over "
        "there|, planning the holidays].",
        "Usual call home: {person}, {dur:words}.",
        "tel. {person} {dur:m}",
        "Spoke to {person} on WhatsApp — {dur:hmin}. [Signal dropped twice.|Dog barking in "
        "the background.|They'd just got in from the shops.]",
        "{person:cap} and I talked on the phone {dur:hlong}.",
        "Ring-round done: {person} ({dur:tilde})",
        "Called {person} during dinner, {dur:hm} on speaker.",
        "Phone: {person} // {dur:minutes}",
        "Spent {dur:words} nattering with {person}; [lots of family gossip|they sounded "
        "cheerful|we laughed a lot].",
    ),
    "electricity_bill": (
        "{provider} electric: {kwh:u}, {amount:code}.",
        "Meter usage {kwh} this month; {provider} wants {amount}.",
        "Bill in from {provider}. {amount:round} for {kwh:long} of power.",
        "pwr bill {provider}: {kwh:n} kWh => {amount}",
        "{amount:codeafter} electricity charge ({kwh:approx}) from {provider}[, paid by "
        "card|, auto-paid|].",
        "Energy statement, {provider}: used {kwh:round}, owe {amount}. [Heating on most "
        "nights.|Actual read this time.|Paid through the app.]",
        "Paid the power bill: {amount:neg} to {provider} for {kwh}.",
        "{provider} — {kwh} — {amount:k}",
        "Electricity for the month came to {amount:approx} from {provider}, {kwh:n} units used.",
        "Logged {provider} bill: {kwh:h} period, {amount} total.",
    ),
    "pharmacy_refill": (
        "{med:cap} refill from {pharmacy} — {copay:code}.",
        "Chemist run: {pharmacy}, {copay}, {med}.",
        "{copay:bare} copay @ {pharmacy} ({med})",
        "Grabbed my {med} at {pharmacy} after lunch; cost {copay:round}. [Short wait.|Had to "
        "give my date of birth.|Bag was stapled shut.]",
        "{pharmacy} had the {med} waiting. {copay:codeafter}.",
        "Monthly meds pickup — {med} / {pharmacy} / {copay:neg}",
        "Paid {copay:approx} for {med} at {pharmacy}[, text said it was ready|, dropped in "
        "on the walk home|].",
        "Refill done: {pharmacy}, {copay}.",
        "Went by {pharmacy} for the {med}, charged {copay}.",
        "{pharmacy:cap} — {med} collected, {copay} paid[, pharmacist asked how I'm "
        "doing|, receipt in my coat pocket|].",
    ),
    "run": (
        "{dist:u} along {route} in {time:hms}. [Frosty.|Muggy.|Headwind on the way back.]",
        "run/{route}/{dist}/{time:hms}",
        "Out on {route} early: {dist:long}, {time:hmin}.",
        "Easy {dist:h} jog round {route} — {time:hms}[, chatted to a neighbour after|, new "
        "shoes|].",
        "Strava says {dist:approx} on {route}, moving time {time:min}.",
        "{route:cap} run. {dist}. {time:hsp}.",
        "Completed {dist:round} on {route} ({time:hms}).",
        "Did {route} before the day got going: {dist:n} {dist:unit} in {time:hms}.",
        "Run log {time:hms} · {dist:u} · {route}",
        "Ran {dist} today via {route}; took {time:mins}.",
    ),
    "coffee_friend": (
        "{friend} & me at {cafe} — {dur:hm}, {spent}.",
        "Coffees with {friend} at {cafe}. Sat {dur:words}, paid {spent:round}.",
        "Caught up with {friend} over coffee ({cafe}, {dur:hmin}); [we swapped book "
        "tips|we people-watched|mostly work chat].",
        "coffee: {cafe} / {friend} / {dur:m} / {spent:code}",
        "{dur:mins} at {cafe} with {friend} — my bill {spent:codeafter}.",
        "Usual coffee with {friend}, {cafe}, {dur:tilde}. [Rainy, so we stayed "
        "inside.|Grabbed the window seat.|Place was heaving.]",
        "Met {friend} ({cafe}) for {dur:hlong}; spent {spent:approx}.",
        "{cafe:cap} w/ {friend}: {spent:bare} on drinks, {dur:hsp} of chat.",
        "Spent {spent} on coffee and a bun with {friend} at {cafe}; stayed {dur:min}.",
        "Weekly catch-up — {friend}, {cafe}, {dur:h} there.",
    ),
    "weigh_in": (
        "Scales say {weight}, body fat {fat}.",
        "Weighed in at {weight:u} this morning ({fat} fat).",
        "{weight:long} per the scale in the bathroom, fat reading {fat:n} per cent.",
        "wt {weight:n} {weight:unit} / bf {fat}",
        "Morning weigh-in before breakfast — {weight}; {fat:long} fat.",
        "{weight:approx} today, body fat around {fat}[, after a big dinner "
        "yesterday|, post-shower|, before coffee].",
        "On the scales first thing: {weight:u}. Fat {fat}.",
        "Weekly weight {weight} | fat% {fat:n}",
        "Smart scale synced: {weight}, {fat} body fat. [Low battery icon on the scale.|App "
        "wanted an update.|Cat tried to climb on too.]",
        "Weight check — {weight:h} reading, {fat} fat",
    ),
    "groceries": (
        "Food run to {store}: {items}, {amount}.",
        "{store} — {amount:code} — {items:n} items",
        "Big shop done. {amount:round} at {store} for {items:w}[, forgot the milk|, bought "
        "bags again|].",
        "Spent {amount} on groceries ({store}, {items}).",
        "groceries {store} {amount:neg}",
        "Weekly shop from {store} came to {amount:codeafter}; {items} in the trolley. [Queue "
        "at the tills.|Self-checkout jammed.|Bumped into a neighbour.]",
        "{items:w} from {store}, {amount:approx} all in.",
        "Did the groceries at {store} — bill {amount}, basket of {items:n}.",
        "{store:cap} run, {amount:k}, {items}",
        "Receipt: {store} · {items} · total {amount}",
    ),
    "blood_pressure": (
        "BP {bp} · P {pulse:n}",
        "Today's blood pressure {bp:over}, heart rate {pulse}.",
        "Cuff reading {bp:mm}, {pulse} — [left arm|right arm|seated after tea].",
        "{bp:sp} ({pulse:u}) before breakfast",
        "Morning pressure check: systolic {bp:sys}, diastolic {bp:dia}, pulse {pulse:n}.",
        "Took my BP: {bp}. Pulse {pulse:long}.",
        "bp log — {bp:mm} / hr {pulse}",
        "Sat quietly five minutes then measured {bp:over}; pulse {pulse:u}. [Dog on my "
        "lap.|Radio on.|Kitchen was chilly.]",
        "{bp} and {pulse} on the home monitor today.",
        "Reading: {bp:sp} mmHg, {pulse:n} bpm[, second try|, first try|].",
    ),
    "glucose": (
        "Fasting sugar reads {glucose} today.",
        "glu {glucose:n} {glucose:unit} (fasting)",
        "Finger-prick before eating: {glucose:long}. [Cold fingers, took two goes.|New "
        "lancets.|Meter beeped fine.]",
        "Blood sugar on waking was {glucose:u}.",
        "{glucose} fasting reading, logged in the app.",
        "Morning glucose check — {glucose:approx}[, before tea|, right after getting up|].",
        "Meter said {glucose:n} this morning (fasting).",
        "FBG: {glucose}",
        "Checked my sugar first thing, {glucose}; [slept well|late dinner last night|skipped "
        "the evening snack].",
        "{glucose:u} — fasting, pre-breakfast",
    ),
    "heart_rate": (
        "{device:cap} logged resting HR {hr}, HRV {hrv}.",
        "{device:cap}: rhr {hr:n}, hrv {hrv:n}",
        "Woke up to {hr:long} resting on {device} and an HRV of {hrv}.",
        "RHR {hr:u} · HRV {hrv:u} ({device})",
        "Overnight numbers from {device} — resting pulse {hr}, variability {hrv}. [Cool "
        "room.|Late dinner yesterday.|Windows open overnight.]",
        "{hr} resting heart rate today ({device}).",
        "HR at rest {hr:n}, HRV {hrv:n} ms, read off {device}.",
        "{device:cap} reckons my resting rate is {hr} this morning[, HRV {hrv}|].",
        "Resting: {hr:u}. HRV: {hrv}. Source {device}.",
        "Checked {device} after waking — {hr:n} bpm resting.",
    ),
    "commute": (
        "Commute via {line}: {dur:mins}.",
        "{line:cap} in — {dur:hm}. [Packed.|Got a seat.|Drizzly platform.]",
        "To work on {line}, door to door {dur:words}.",
        "commute={dur:m} via {line}",
        "Took {line} this morning; {dur:hmin} all told[, read on the way|, podcast on|].",
        "{dur:minutes} getting in today on {line}.",
        "Journey to the office: {line}, {dur:tilde}.",
        "Into town — {line} — {dur:min}",
        "Got to my desk after {dur:hsp} on {line}. [Listened to the news.|Cold "
        "morning.|Sat next to a chatty student.]",
        "{line:cap} commute clocked at {dur:clock}.",
    ),
    "medication_dose": (
        "Took {dose} {med} with breakfast.",
        "{med} {dose:u} taken",
        "Morning pill: {med}, {dose:long}.",
        "Dose logged — {med:cap} {dose}[ with juice| with water| after toast].",
        "{dose} of {med} swallowed at breakfast. [Pill box refilled.|Nearly forgot.|Phone "
        "reminder worked.]",
        "med: {med} / {dose:n} {dose:unit}",
        "Had my {med} ({dose:u}) this morning.",
        "{med:cap} — {dose} — am",
        "Remembered the {med} today: {dose}.",
        "Daily {med}, {dose:n}mg, taken.",
    ),
    "deployment": (
        "Deployed {service} {version} to {region}; took {dur:mins}.",
        "release {service}@{version:n} → {region} ({dur:m})",
        "Rolled out {service} {version} in {region} — {dur:words} start to finish.",
        "[{region}] {service} {version} shipped in {dur:hms}",
        "Shipped {version} of {service}. Region {region}, pipeline ran {dur:hmin}. [Reviewer "
        "approved quickly.|Did it as a pair.|Coffee in hand.]",
        "{service} to {region}: {version:n}, {dur:hm}",
        "Prod push — {service} {version}, {region}, {dur:tilde}.",
        "Deployment of {service} ({version}) to {region} finished after {dur:minutes}[, "
        "green dashboards|, no alerts|].",
        "CD pipeline: {service} {version} | {region} | {dur:hsp}",
        "{dur:min} to get {service} {version} live in {region}.",
    ),
    "oncall_page": (
        "On-call recap: {pages} from {source}, avg ack {ack:mins}.",
        "{pages:w} from {source} this rotation; acked within {ack:words} on average.",
        "pager wk: {pages:n} pages ({source}), mean ack {ack:m}",
        "Shift handover — {source} paged me {pages:n} times, ack time ~{ack:min}.",
        "Rota done. {pages} total, mostly {source}; typical ack {ack:hm}. [Quiet nights "
        "otherwise.|Handed over to the next person.|Runbook held up.]",
        "{source}: {pages}, ack {ack:tilde}",
        "This week's pages: {pages:w} ({source}), acknowledged in {ack:minutes} avg.",
        "Pager summary | {source} | {pages:n} | ack {ack:m}",
        "Got {pages} off {source} during my on-call[, mostly daytime|, one woke me up|]; "
        "median ack {ack:min}.",
        "End of on-call: {source} alerts x{pages:n}, mean time to ack {ack:mins}.",
    ),
    "invoice": (
        "Invoiced {client} {inv}: {hours} billed, {amount}.",
        "{inv} → {client} | {hours:n} h | {amount:code}",
        "Sent {client} their monthly bill — {hours:long} of work, {amount:codeafter}.",
        "Billing: {client}, {hours:u}, total {amount}[, net 30|, payable in fourteen days|].",
        "Invoice {inv:hash} out to {client} for {hours} ({amount:round}). [Attached the "
        "timesheet.|Used the new template.|Cc'd the project lead.]",
        "{client} owes {amount} for {hours:n} hrs — {inv}.",
        "Raised invoice {inv} to {client}, {hours:approx} at the usual rate, {amount}.",
        "Monthly invoice: {hours} / {amount:bare} / {client}",
        "Billed {client} {amount:k} ({hours}).",
        "{client} invoice no. {inv:n} sent; {hours:round} logged.",
    ),
    "sensor_log": (
        "{sensor:cap} sensor: {temp}, RH {hum}, battery {batt}.",
        "{sensor} | {temp:u} | {hum} humidity | batt {batt}",
        "Reading from the {sensor}: {temp:long}, humidity {hum}.",
        "06:00 {sensor} temp {temp} hum {hum}",
        "{sensor:cap} at dawn — {temp:approx}, {hum:n}% humidity, battery at {batt}.",
        "Temp/hum ({sensor}): {temp} / {hum}",
        "{temp} in the {sensor} this morning[, {hum} RH|].",
        "Sensor log — {sensor}, {temp:round}, {hum}, {batt} batt[, wifi fine|, synced late|].",
        "{sensor} probe reported {temp} and {hum} humidity. [Frost on the lawn.|Muggy "
        "out.|Windy night.]",
        "Daily env: {sensor}, {temp:u}",
    ),
    "phone_bill": (
        "{carrier} statement: {amount}, {data} used.",
        "Mobile — {carrier} — {amount:code} — {data:u}",
        "Phone bill from {carrier} came in at {amount:round}; data {data:long}.",
        "Paid {carrier} {amount:codeafter} for the month ({data} of data).",
        "{data:approx} data, {amount} owed to {carrier}. [Roaming was off.|Auto-pay "
        "again.|App finally shows the breakdown.]",
        "mob. {carrier} {amount:neg}",
        "Monthly phone: {amount:bare}, carrier {carrier}, {data:n} GB.",
        "{carrier:cap} took {amount} by direct debit[, usage {data}|].",
        "Cell bill ({carrier}) {amount} — {data:round} used.",
        "{amount:approx} for the phone this month, {carrier}.",
    ),
    "gym": (
        "Gym at {gym}, {dur:mins}; top set {lift}.",
        "{gym:cap}: {dur:hm}, squat {lift:u}",
        "Lifted at {gym} for {dur:words}, worked up to {lift:long} on deadlift.",
        "Session log | {gym} | {dur:m} | best {lift}",
        "Trained {dur:hmin} at {gym}. Heaviest lift {lift}. [Busy floor.|Nobody on the "
        "racks.|Music too loud.]",
        "Weights session ({gym}) — {dur:tilde}, bench {lift:n} {lift:unit}.",
        "{dur:hsp} at {gym}[, mostly legs|, upper body|, full body].",
        "Did {dur:minutes} at {gym} and pressed {lift}.",
        "{gym} workout {dur:hlong}, top {lift:u}[, spotter helped|, solo|].",
        "Back from {gym}: {dur:h} lifting.",
    ),
    "fuel": (
        "Fill-up, {station}: {litres}, {amount}.",
        "{station} — {litres:u} @ {price}/{litres:unit} — {amount:code}",
        "Fuel: {litres:long} at {price}, total {amount:round} ({station}).",
        "Topped the tank up at {station}, {amount:codeafter}[ for {litres}|].",
        "Petrol {litres:n} {litres:unit}, {amount}, {station}. [Car wash queue was "
        "huge.|Screenwash topped up too.|Card reader broken, paid inside.]",
        "{amount:neg} at {station} (fuel, {litres})",
        "Refuel — {station} — {litres:approx}",
        "Put {litres} in at {station} for {amount:approx}.",
        "Pump stop: {station}, {litres}, {price} per {litres:unit}.",
        "{station:cap}: {litres:round}, paid {amount}[, loyalty points added|].",
    ),
    "child_pickup": (
        "Went for {child} at {place}; out by {time:pm}.",
        "{child} picked up — {place}, {time:24}",
        "Gate at {place}, got {child} at {time:dot}. [Drizzle.|{child} had a painting to "
        "show me.|Lots of parents chatting.]",
        "pickup {place} {time:hhmm} ({child})",
        "Fetched {child} from {place} at {time}[, snack in the car|, walked home|].",
        "{time:ampm} — {child} out of {place}.",
        "Got {child} from {place} at {time:fr}.",
        "{place:cap} pickup: {child}, {time:pm}, [sunny walk home|scooter ride "
        "back|straight to the swings].",
        "Picked {child} up at {time:24} ({place}).",
        "{child}'s pickup at {place} was {time:pm} today.",
    ),
    "cleaning_service": (
        "{cleaner} cleaned for {hours:hours}; paid {amount}.",
        "Cleaner visit ({cleaner}) {hours:hm}, {amount:code}",
        "{cleaner} came and did the flat, {hours:words}, {amount:round} in cash.",
        "cleaning: {cleaner} / {hours:h} / {amount:bare}",
        "Paid {cleaner} {amount:codeafter} for {hours:hlong} of cleaning. [Kitchen "
        "sparkling.|Windows done too.|Left a note about the oven.]",
        "{hours:hmin} clean by {cleaner} today, {amount}.",
        "Fortnightly visit from {cleaner}: {hours:hsp}, {amount:approx}[, let in with the key "
        "safe|, I was home all along|].",
        "{cleaner} here {hours:range}; {amount} paid through the app.",
        "{cleaner} did the house: {hours:clock}, {amount}.",
        "{amount} to {cleaner} for today's cleaning ({hours:hrs}).",
    ),
    "subscription": (
        "Renewal — {service}, {amount}.",
        "{service} {plan} — {amount:code}/mo",
        "{service} ({plan}) charged the card {amount} for the month.",
        "Sub: {service}, {amount:neg}",
        "Paid {amount:codeafter} for {service} {plan} again. [Still watching it.|Keep meaning "
        "to review it.|Shared with my sister.]",
        "{amount} — {service}, {plan} tier",
        "{service} took its {amount:approx} this month[ on the credit card| via PayPal|].",
        "Auto-renewal: {service} {plan}, {amount:bare}.",
        "Card statement shows {service} at {amount}.",
        "{service} subscription fee {amount} went out today.",
    ),
    "water_intake": (
        "Water today: {water}, about {glasses:n} glasses.",
        "Drank {water:long} ({glasses:w}).",
        "h2o total {water:u}",
        "Hydration tally — {glasses}, roughly {water:alt}.",
        "{water:approx} drunk in total[, mostly at my desk|, plus herbal tea|].",
        "Bottle refills added up to {water} today. [Hot day.|Office heating on full.|Lots of "
        "meetings.]",
        "{glasses:w} of water, {water:round} total.",
        "water log: {water:alt}",
        "By lights-out I'd had {water:u} of water.",
        "Daily water = {water}, {glasses}",
    ),
    "dog_walk": (
        "Walked {dog} round {route}: {dur:mins}, {dist}.",
        "{dog} + me, {route}, {dur:hm}",
        "Morning walk with {dog} on {route}, {dur:words}[, lots of sniffing|, met a "
        "spaniel|, muddy paws].",
        "dog walk {route} {dist:u} / {dur:m}",
        "Took {dog} out along {route} for {dur:hmin}. [Grass white with frost.|Ball lost in a "
        "hedge.|Drizzle.]",
        "{route:cap} with {dog} — {dist:approx} in {dur:min}.",
        "{dur:tilde} on {route}, {dog} off lead most of it.",
        "Walkies: {dog}, {route}, {dur:hsp}.",
        "{dog}'s walk today: {route}, {dur:minutes}, {dist:long}.",
        "Covered {dist} with {dog} on {route}.",
    ),
    "cloud_bill": (
        "{host} charge for {project}: {amount}, {storage} on disk.",
        "cloud: {host} {amount:code} ({storage:u})",
        "Hosting for {project} via {host}: {amount:round} this month.",
        "{project:cap} hosting on {host}, {amount:codeafter}, {storage:n} GB.",
        "Paid {host} {amount} for {project}[; auto-charged to the card|; receipt forwarded "
        "to accounts|].",
        "{host} | {project} | {amount:bare} | {storage}",
        "Server costs ({host}): {amount:approx}, storage {storage:round}. [Read the changelog "
        "email.|Nothing to action.|Tagged it for tax.]",
        "{amount:neg} — {host} hosting",
        "Monthly {host} charge for {project} landed: {amount}.",
        "{host} billed {amount:k} for {project}, {storage} used.",
    ),
    "tutoring": (
        "{subject:cap} lesson with {tutor}, {dur:mins}; {fee}.",
        "{tutor} | {subject} | {dur:hm} | {fee:code}",
        "Tutoring today: {tutor} did {dur:words} of {subject}[ with my daughter| with my "
        "son| online].",
        "Paid {tutor} {fee} for the {dur:hyph} {subject} session.",
        "{dur:hmin} of {subject} with {tutor}. [Homework set.|Good focus today.|Went over "
        "last week's bits.]",
        "lesson log: {tutor} / {subject} / {dur:m} / {fee:bare}",
        "{tutor}'s {subject} class ran {dur:hlong}, {fee:codeafter}.",
        "Weekly {subject} tutoring ({tutor}): {dur:tilde}, {fee:round}.",
        "{tutor} came round for {subject} — {dur:hsp}.",
        "Session with {tutor}: {subject}, {dur:clock}, fee {fee}.",
    ),
}

QUESTIONS: dict[str, tuple[str, ...]] = {
    "rent": (
        "Should I keep the rent money in a separate account?",
        "Any tips for negotiating when the lease comes up for renewal?",
        "What should a move-out inspection checklist include?",
        "How do renters insurance policies usually work?",
    ),
    "sleep": (
        "Any tips for switching my brain off at night?",
        "Can you suggest a herbal drink that helps you relax?",
        "Does an afternoon nap spoil your sleep later on?",
        "How do blackout curtains compare to an eye mask?",
    ),
    "yoga": (
        "Could you suggest a few stretches for tight shoulders?",
        "What should I look for in a new yoga mat?",
        "Is there a breathing exercise I can do at my desk?",
        "How do I stop my wrists aching in downward dog?",
    ),
    "call_home": (
        "Any gift ideas for a parent who has everything?",
        "How can I help my family set up video calls on a tablet?",
        "What's a good way to remember family birthdays?",
        "Could you suggest a cheap international phone plan?",
    ),
    "electricity_bill": (
        "Which appliances use the most electricity?",
        "Would solar panels make sense for our energy bill?",
        "What temperature should a fridge be set to?",
        "Do smart plugs actually save money?",
    ),
    "pharmacy_refill": (
        "How do I dispose of old tablets safely?",
        "What's the best way to store medicines in a hot flat?",
        "Is there an app that reminds you when a refill is due?",
        "Which over-the-counter remedies are good for hay fever?",
    ),
    "run": (
        "Can you recommend a stretching routine after running?",
        "How often should I replace my trainers?",
        "What should I snack on before a longer run?",
        "Any tips for staying motivated in winter?",
    ),
    "coffee_friend": (
        "Can you suggest a few board games for two people?",
        "What's a nice birthday present for an old school friend?",
        "Which coffee beans are good for a cafetière?",
        "Any ideas for a day trip with a mate?",
    ),
    "weigh_in": (
        "Can you suggest some high-protein lunches?",
        "How accurate are bathroom scales, really?",
        "What's a realistic goal for a beginner strength plan?",
        "Any easy swaps to eat more vegetables?",
    ),
    "groceries": (
        "Could you draft a meal plan for the coming days?",
        "What's a cheap vegetarian dinner I can batch cook?",
        "How can I trim what we spend on groceries?",
        "Can you help me plan a picnic shop?",
    ),
    "blood_pressure": (
        "Which foods are good for blood pressure?",
        "What's a sensible daily limit for salt?",
        "Can you suggest some gentle exercise that's good for the heart?",
        "What's a good relaxation technique for stressful days?",
    ),
    "glucose": (
        "Could you suggest a low-sugar breakfast?",
        "What snacks keep energy steady through the afternoon?",
        "How do I make sense of carb counts on food packets?",
        "Is brown bread actually better than white?",
    ),
    "heart_rate": (
        "What does a resting pulse say about fitness?",
        "How can I recover better between training days?",
        "Does caffeine change your heart rate at rest?",
        "Can you suggest a calming breathing routine?",
    ),
    "commute": (
        "Is a folding bike worth it for the commute?",
        "How do I ask my manager about flexible hours?",
        "Can you recommend a podcast for short journeys?",
        "Could you suggest a good umbrella that survives wind?",
    ),
    "medication_dose": (
        "Can you set up a simple habit tracker for me?",
        "Is it okay to have vitamins alongside my prescription?",
        "What's a good pill organiser for travel?",
        "How should I prepare questions for a GP appointment?",
    ),
    "deployment": (
        "Can you outline a good rollback checklist?",
        "How can I make our build pipeline faster?",
        "How do feature flags usually work?",
        "Could you summarise best practice for deployment reviews?",
    ),
    "oncall_page": (
        "How can I write a clearer runbook?",
        "What are good ways to reduce alert fatigue?",
        "Can you suggest how to structure a post-incident review?",
        "Any advice for sleeping well during an on-call stretch?",
    ),
    "invoice": (
        "What's a good way to chase a late payment politely?",
        "How should I set aside money for tax as a freelancer?",
        "What should every invoice include to be valid?",
        "Which bookkeeping apps suit a sole trader?",
    ),
    "sensor_log": (
        "How do I stop condensation building up on windows?",
        "What's the ideal humidity for houseplants?",
        "Which rechargeable batteries last the longest?",
        "How often should I recalibrate a home thermometer?",
    ),
    "phone_bill": (
        "Is it cheaper to buy a phone outright or on contract?",
        "How do I find out which apps drain my battery?",
        "What's a good way to back up old photos?",
        "Can you explain how eSIMs work?",
    ),
    "gym": (
        "Can you suggest a warm-up for leg day?",
        "How much protein do I need after training?",
        "What's a good stretching plan for rest days?",
        "Any tips for better deadlift form?",
    ),
    "fuel": (
        "How can I get better mileage out of the car?",
        "What's a good checklist before a long motorway drive?",
        "Is an electric car cheaper to run in the long term?",
        "Is it worth paying extra for premium petrol?",
    ),
    "child_pickup": (
        "Any ideas for healthy snacks for hungry kids?",
        "How do I set up a fair pocket-money system?",
        "Could you suggest some easy weeknight dinners kids like?",
        "What should go in a pickup rota agreement with other parents?",
    ),
    "cleaning_service": (
        "What's the best way to get limescale off taps?",
        "How often should a mattress be flipped?",
        "Can you suggest an eco-friendly all-purpose spray?",
        "How much should I tip a cleaner at Christmas?",
    ),
    "subscription": (
        "Can you suggest a good series to start this weekend?",
        "What's a simple way to track recurring payments?",
        "Which streaming service has the best documentaries?",
        "How can I cancel a subscription I've forgotten about?",
    ),
    "water_intake": (
        "Can you suggest some flavourings for plain water?",
        "What are signs of dehydration?",
        "Which reusable flask keeps drinks coldest?",
        "Do fizzy drinks count as fluids?",
    ),
    "dog_walk": (
        "What's a good chew toy for a dog that destroys everything?",
        "How do I teach recall to a stubborn puppy?",
        "Any tips for trimming claws at home?",
        "What can I do on days when a long walk isn't possible?",
    ),
    "cloud_bill": (
        "How can I set a budget alert on my hosting account?",
        "What's the simplest way to keep offsite backups?",
        "How do I rotate API keys without downtime?",
        "What's a good password manager for a small team?",
    ),
    "tutoring": (
        "How much should a parent help with homework, really?",
        "Could you suggest a practice plan to go with the weekly lesson?",
        "Could you suggest some educational apps for teenagers?",
        "How do I know if a tutor is a good fit?",
    ),
}

CONTENT_NOTES: dict[str, tuple[str, ...]] = {
    "rent": (
        "the landlord's agent asked for a reference from my new employer",
        "a surveyor is booked to look at the cracked bathroom ceiling",
        "the freeholder is putting scaffolding up for roof repairs",
        "a parking permit for the flat has finally come through",
    ),
    "sleep": (
        "I started taking melatonin on the doctor's advice",
        "a fox screaming outside woke me twice",
        "we swapped to a firmer mattress",
        "I've begun using a sunrise alarm clock",
    ),
    "yoga": (
        "the studio is closing for renovations next month",
        "I tweaked my lower back in a twist",
        "I signed up for a teacher training taster weekend",
        "they're switching all classes to heated rooms",
    ),
    "call_home": (
        "they've booked flights to visit us at Easter",
        "the old house back home is going on the market",
        "Dad has been referred for a knee operation",
        "my cousin had a baby girl on Tuesday",
    ),
    "electricity_bill": (
        "the supplier is moving us to a tariff with peak pricing",
        "the meter is being replaced with a digital one next week",
        "the bill included a one-off government energy rebate",
        "we lost electricity for two days after the storm",
    ),
    "pharmacy_refill": (
        "the pharmacist said the dosage instructions have changed",
        "they were out of stock and ordered a generic brand instead",
        "the branch is closing and my prescription moves to another shop",
        "I've been switched to a three-month supply from now on",
    ),
    "run": (
        "I felt a sharp twinge in my left calf",
        "I entered a half marathon in October",
        "a cyclist clipped my elbow at the bridge",
        "the council is putting floodlights along the route",
    ),
    "coffee_friend": (
        "they told me they're emigrating to Canada in the summer",
        "we agreed to start a book club together",
        "the café announced it's shutting at the end of the month",
        "they've just been promoted to head of department",
    ),
    "weigh_in": (
        "the doctor has asked me to track my waist measurement as well",
        "I started a new medication that can affect appetite",
        "I replaced the scale's batteries and recalibrated it",
        "I've signed up for a nutritionist programme",
    ),
    "groceries": (
        "the store has stopped stocking my usual oat milk",
        "I signed up for their delivery pass",
        "they've gone cashless-only at every till",
        "I found a recalled jar of peanut butter in the cupboard",
    ),
    "blood_pressure": (
        "the GP has started me on a low dose of amlodipine",
        "I bought a new cuff because the old one was cracked",
        "the nurse wants readings twice a day for a fortnight",
        "I've cut out caffeine completely since Monday",
    ),
    "glucose": (
        "the diabetes nurse booked me for an HbA1c test",
        "I switched to a continuous glucose monitor",
        "I've started a short walk after every dinner",
        "my dietitian suggested trying intermittent fasting",
    ),
    "heart_rate": (
        "I've been diagnosed with a mild thyroid problem",
        "a firmware update changed how it measures overnight",
        "I stopped drinking alcohol entirely",
        "I tested positive for covid yesterday",
    ),
    "commute": (
        "the company is moving offices to the other side of town",
        "a new timetable starts from next Monday",
        "I bought an annual season ticket",
        "my boss approved working from home on Fridays",
    ),
    "medication_dose": (
        "the consultant wants to taper me off over the next month",
        "the tablets look different because the manufacturer changed",
        "I had a mild rash and rang the surgery about it",
        "my GP added a second tablet to take at night",
    ),
    "deployment": (
        "the release carried a database migration for the first time",
        "we moved the pipeline onto a new CI provider",
        "security asked us to sign all artefacts from now on",
        "our tech lead is leaving and I'm taking over releases",
    ),
    "oncall_page": (
        "we're adding a second engineer to every rotation from next month",
        "one outage was escalated to the CTO",
        "the paging tool is being replaced by a new vendor",
        "I'm being moved off the rota after this cycle",
    ),
    "invoice": (
        "they asked to move to quarterly billing",
        "the client is being acquired by a larger firm",
        "I raised my day rate for next year and they accepted",
        "their finance team now requires a purchase order number",
    ),
    "sensor_log": (
        "I moved the sensor to a higher shelf",
        "the hub got a firmware update overnight",
        "I fitted a dehumidifier in there",
        "a second sensor is now paired for comparison",
    ),
    "phone_bill": (
        "the carrier is switching off the 3G network in my area",
        "I added a tablet SIM to the account",
        "they're raising prices by inflation plus a bit from April",
        "my contract's minimum term ends next month",
    ),
    "gym": (
        "the gym has been bought by a bigger chain",
        "I've booked a physio for my shoulder",
        "I signed up for a powerlifting meet in the spring",
        "they're cutting the opening hours at weekends",
    ),
    "fuel": (
        "the garage says the brake pads need replacing soon",
        "I've ordered a plug-in hybrid as a replacement",
        "a warning light for low coolant came on",
        "the station is being converted to EV chargers only",
    ),
    "child_pickup": (
        "the teacher mentioned a head lice letter coming home",
        "collection is moving to the side gate from Monday",
        "we've been invited to a classmate's birthday party on Saturday",
        "a grandparent will collect on Thursdays from now on",
    ),
    "cleaning_service": (
        "they broke a vase and offered to replace it",
        "they're raising their hourly rate in the new year",
        "they'll be away for three weeks over summer",
        "I've asked them to start doing the ironing too",
    ),
    "subscription": (
        "they're adding adverts to the cheaper tier",
        "the company behind it is merging with a rival",
        "password sharing outside the household will be blocked",
        "an email said my card on file has expired",
    ),
    "water_intake": (
        "the doctor told me to drink less in the evening",
        "we had a water softener fitted",
        "I started adding electrolyte tablets",
        "our tap water is under a boil notice this week",
    ),
    "dog_walk": (
        "the vet found a grass seed in one ear",
        "a sign says dogs must be on leads from next month",
        "we adopted a second dog from the rescue",
        "the dog limped on the way back",
    ),
    "cloud_bill": (
        "they announced the free tier is ending",
        "a leaked key ran up unknown usage and I revoked it",
        "I migrated the database to a managed service",
        "the provider is retiring my region in the summer",
    ),
    "tutoring": (
        "the teacher suggested entering the exam a grade higher",
        "we're switching the sessions to video calls only",
        "they're taking a term off from January",
        "an exam date has been set for June",
    ),
}

MISC: tuple[str, ...] = (
    "Repotted the [monstera|fern|spider plant] into a [bigger|terracotta|glazed] pot.",
    "[Beth|Uncle Raj|The twins] sent a postcard from [Lisbon|Kyoto|the Lake District].",
    "Our [book group|pub quiz team|choir] picked [a crime novel|a new name|a new venue] for "
    "[next time|the spring|the autumn].",
    "Found [an old diary|my grandad's war medals|a shoebox of old cassettes] in the "
    "[attic|shed|back of the wardrobe].",
    "The [fence panel|gutter|garden gate] came [loose|down|off its hinge] in the wind.",
    "Tried a recipe for [shakshuka|lentil dal|banana bread] — [turned out great|needs more "
    "salt|too spicy].",
    "Watched [a documentary on octopuses|the cycling highlights|a Hitchcock classic] [with "
    "friends|on the sofa|in one sitting].",
    "Ordered [new curtains|a bookshelf|a rug] for the [living room|spare room|hallway].",
    "[The neighbours' cat|A robin|A hedgehog] keeps visiting the [garden|patio|back "
    "step] [every evening|lately|again].",
    "Signed up for a [pottery|life drawing|beginners' Italian] class starting in "
    "[March|the autumn|January].",
    "Went to [a gig at the Roundhouse|a comedy night|a jazz brunch] with [the cousins|some "
    "old colleagues|Sam].",
    "The passport application [went off|came back|was approved] — [took ages|faster than I "
    "feared|the photo looks awful].",
    "Donated [a bin bag of clothes|old toys|a lamp] to the [charity shop|church sale|swap shop].",
    "Bought a [second-hand|vintage|refurbished] [record player|sewing machine|camera] at [the "
    "flea market|an estate sale|a charity auction].",
    "[My niece|Our godson|Little Ada] lost a [front tooth|wobbly tooth|baby tooth] at last.",
    "Planted [garlic|sweet peas|broad beans] in the [raised bed|veg patch|front border].",
    "Wedding invitation from [Priya and Tom|an old uni friend|Jess] — [July|September|next "
    "spring].",
    "Whole afternoon gone [sorting photos|assembling flat-pack|painting the skirting boards].",
    "The [library|local museum|gallery] has [a free exhibition on maps|a talk about "
    "bees|a late opening] [this month|on Friday|soon].",
    "The [smoke alarm|doorbell|kitchen timer] started [beeping|flashing|chirping] at "
    "[midnight|dawn|dinner time].",
    "Made [marmalade|lemon curd|sourdough], a first for me.",
    "Had a [long bath|lazy morning|quiet day] and read [a whole novel|magazines|half a memoir].",
    "[A colleague|My aunt|Kate] recommended [a mystery series|a history podcast|a cookbook].",
    "Booked [tickets for the ballet|a table for our anniversary|a guided cave tour] for "
    "[May|December|a fortnight's time].",
    "Lost my [scarf|reading glasses|house keys] [in the precinct|at the cinema|at the theatre].",
    "[A plumber|A locksmith|The window fitter] is booked for [Tuesday|next week|the 3rd].",
    "Picking up [chess openings|the ukulele|juggling] via [an app|a friend|YouTube].",
    "Snow [forecast|settled|melted] [overnight|by lunchtime|for the weekend] — [kids "
    "thrilled|roads a mess|very pretty].",
    "Sold [the old pram|a sofa|some books] online for [a bit|less than hoped|a fair price].",
    "Birdwatching at [the marsh|the estuary|the nature reserve] — saw [a heron|two "
    "kingfishers|a buzzard].",
    "[Picked|Bought|Got given] [a punnet of strawberries|blackberries|plums] from [a farm "
    "stand|the hedgerow|next door].",
    "Our [street|block|village] group chat is arguing about [parking|bins|a new bench].",
    "Framed [a print of the coast|the kids' drawings|a wedding photo] for the "
    "[landing|stairs|study].",
    "Helped out at the [soup kitchen|park clean-up|library sale] [on Saturday|for a "
    "morning|with colleagues].",
    "Got [a parcel|a letter|an email] from [an old penfriend|the council|a cousin abroad] "
    "about [a reunion|the bins|their new house].",
)
