"""Third blind split (blind3): entry families, questions, content notes and misc memories.

The tables follow the other split modules: each FAMILIES string is one sentence shape for a
routine kind, naming the kind's slots and quantities in braces (kinds.py) with an optional
format spec after a colon (quantities.py). ``[a|b|c]`` picks one option at random; an empty
option leaves nothing. Every family names the kind's main quantity (or one derived from it)
and every category slot of the kind.

The wording imitates what people jot into a personal assistant and what small systems log:
terse log lines and key=value records, whole sentences, abbreviations, units glued to numbers,
readings with slashes or "over", currency codes and symbols before or after amounts, number
words, 12- and 24-hour clocks, the quantity first or last, and some incidental detail (who was
there, the weather, a remark) that is not news.

Content notes are clauses (lower case unless they start with "I" or a name, no final full
stop), each reporting something new. Questions are everyday requests on the routine's topic
that neither quote the entries nor touch anything an outlier could say.

Written on 2026-12-07 without reading the detector, the service, its tests or documentation,
the benchmark scripts, or the tune, heldout, valid and blind phrasebooks (the blind2 module was
opened for its table format only). Run it once, at the end of a session; the detector's
developer never reads this module or the texts generated from it.
"""

FAMILIES: dict[str, tuple[str, ...]] = {
    "rent": (
        "rent out: {amount:neg} / {payee}",
        "Sent this month's rent to {payee} — {amount}. [Rain all day.|Sunny for once.|Kids off "
        "school, chaos.]",
        "{amount:codeafter} rent, paid to {payee} via online banking[ before work|| on the train].",
        "Transferred the rent ({amount:round}) to {payee}; [reference was the flat number|they "
        "confirmed by text|no reply yet but it's gone].",
        "{payee} // rent // {amount:code}",
        "Rent's gone out: {amount} to {payee}, [same as always|first try, no faff|right on "
        "the dot].",
        "Housing: {amount:k} to {payee}[, from the joint account|, partner sent half back|].",
        "{amount} for rent went across to {payee} this morning, [bank app was slow again|kettle "
        "still boiling|kids still in bed].",
        "Note to self — rent paid. {payee}, {amount:code}, [from the current account|card "
        "ending 4417|by bank transfer].",
        "Paid {payee} {amount:approx} — flat's covered till next month.",
    ),
    "sleep": (
        "zzz — {sleep:hm}, out cold by {bed:24}",
        "Went to bed at {bed:pm} and slept {sleep:hours}. [Dreamt about exams again.|Wind "
        "howling outside.|Cat hopped up around two.]",
        "Sleep log — in bed {bed:hhmm}, {sleep:hlong} asleep",
        "{sleep:hmin} sleep; turned in {bed:dot}[, window cracked open|, new pillowcase|].",
        "Last night: {sleep:words} of sleep. Bed at {bed}.",
        "Watch app says {sleep:h} asleep, bedtime {bed:ampm}.",
        "Slept roughly {sleep:range} after lights out at {bed:pm} — [felt rested|bit foggy "
        "now|alarm cut into a dream].",
        "bed {bed:fr} | slept {sleep:hsp}",
        "{sleep:tilde} of actual sleep per the tracker (head on pillow by {bed:24}); [woke "
        "at six|chilly room|heavy rain overnight].",
        "Crashed at {bed:pm}, {sleep:hrs} of kip.",
    ),
    "yoga": (
        "{style:cap} with {teacher} at {studio}, {dur:mins}.",
        "yoga | {studio} | {teacher} | {dur:hsp}",
        "{teacher} took the {dur:hyph} {style} class at {studio} tonight. [Hamstrings "
        "screaming.|All balance work.|Candles everywhere.]",
        "Did {dur:words} of {style} at {studio} — {teacher} teaching[, mat by the window|, "
        "borrowed two blocks|].",
        "{studio}: {style}, {dur:hmin}, instructor {teacher}",
        "Class log: {teacher} / {studio} / {dur:m}",
        "Back from {studio}; {teacher}'s {style} ran {dur:hlong}. [Legs like jelly.|Calm all "
        "evening after.|A phone went off during the final rest.]",
        "{dur:h} on the mat at {studio} with {teacher}.",
        "Evening {style} ({dur:clock}) — {teacher}, {studio}, [about a dozen of us|full "
        "room|quiet one]",
        "Yoga tonight at {studio}. {teacher} led it, {dur:tilde}.",
    ),
    "call_home": (
        "Phoned {person} — {dur:words}.",
        "call w/ {person}: {dur:m}",
        "Long natter with {person} on the phone tonight, {dur:hmin}. [All well there.|Heard "
        "everything about the garden.|Mostly talked holidays.]",
        "{dur:minutes} on the phone to {person}[ while cooking| on the walk back|].",
        "Catch-up call — {person}, {dur:hm}.",
        "Video call with {person} lasted {dur:hlong}; [line kept cutting out|got the tour of "
        "the new kitchen|the cat walked across the keyboard].",
        "{person:cap} rang. We talked for {dur:tilde}.",
        "FaceTime {person} {dur:mins}",
        "Caught up with {person} by phone ({dur:hsp}), [usual news|nothing much new|lots of "
        "laughing].",
        "Rang {person} after dinner and chatted {dur:min}.",
    ),
    "electricity_bill": (
        "Electric bill from {provider}: {kwh} used, {amount} due.",
        "{provider} | {kwh:n} kWh | {amount:code}",
        "Power bill landed — {amount}, {kwh:u} this period ({provider}).",
        "Paid {provider} {amount:round} for electricity; meter says {kwh:long}.",
        "elec: {kwh} / {amount:bare} / {provider}",
        "{provider} direct debit for electricity went out, {amount:neg} for {kwh}.",
        "Usage {kwh:approx}, costing {amount:codeafter}; supplier "
        "{provider}[, tariff unchanged|, smart meter read|].",
        "Electricity — {provider} billed {amount} for {kwh}[ with the heating on|, mostly the "
        "oven and the dryer|].",
        "{kwh:n} units on the {provider} statement, {amount:approx} in total.",
        "Got the {provider} email: {amount} for electricity ({kwh:round}).",
    ),
    "pharmacy_refill": (
        "Picked up {med} at {pharmacy}, {copay}.",
        "{pharmacy} refill — {med} — paid {copay:code}",
        "Rx refill {med} @ {pharmacy}: {copay:bare}",
        "Collected my {med} from {pharmacy} on the way back; {copay:round} at the till. "
        "[Queue out the door.|Pharmacist remembered my name.|In and out quickly.]",
        "{copay} for the monthly {med} at {pharmacy}.",
        "Prescription ready at {pharmacy}. Paid {copay:codeafter} for {med}.",
        "meds refill: {pharmacy}, {copay:neg}",
        "Fetched the {med} from {pharmacy} — {copay}, [reminder text came first "
        "thing|they had it on the shelf|waited twenty minutes].",
        "{pharmacy:cap} had my {med} ready; charge was {copay:approx}.",
        "Refilled {med}. {pharmacy}. {copay}.",
    ),
    "run": (
        "Ran {route} — {dist} — clocked {time:hms}.",
        "{dist:u} run @ {route} — {time:hms}",
        "Morning run on {route}: {dist:long} in {time:hmin}. [Cold and windy.|Lovely "
        "sunrise.|Legs felt heavy.]",
        "{route:cap}, {dist:h} loop, {time:hms}[, negative splits|, walked a bit at the end|].",
        "Did {dist:approx} on {route} before breakfast, took {time:min}.",
        "RUN {dist} {time:hms} ({route})",
        "Got out for a run before work — {route}, {dist}, {time:hsp}. [Passed the same dog "
        "walker again.|Drizzle.|Headphones died halfway.]",
        "{time:hms} for {dist:u} along {route}; [breathing stayed easy|felt smooth|pushed the "
        "last stretch].",
        "Logged a run: {route}, {dist:n} {dist:unit}, {time:mins}.",
        "Jogged {route} with [a colleague|the club lot|nobody], {dist} in {time:hms}.",
    ),
    "coffee_friend": (
        "Coffee with {friend} at {cafe}, {dur:words}. Spent {spent}.",
        "{cafe} w/ {friend} — {dur:m}, {spent:bare}",
        "Met {friend} for a flat white at {cafe}; we sat there {dur:hmin}. [Lots of "
        "gossip.|Talked books mostly.|Swapped holiday plans.]",
        "{friend} and I at {cafe} ({dur:hsp}, {spent:code})",
        "Standing date with {friend}: {cafe}, {dur:tilde}, my share {spent}.",
        "Spent {dur:hlong} at {cafe} with {friend} and {spent:round} on [cake|two "
        "lattes|a pastry and tea].",
        "{cafe} again with {friend}. {dur:minutes}. [Window seat.|Full of students.|Music too "
        "loud.]",
        "coffee: {friend} @ {cafe} {dur:mins} {spent:codeafter}",
        "Had a coffee w {friend} — {cafe}, about {dur:hm}.",
        "{dur:hyph} coffee with {friend} at {cafe}[, they paid this time|, split the bill|].",
    ),
    "weigh_in": (
        "Weighed in at {weight}, body fat {fat}.",
        "scale: {weight:u} / {fat} fat",
        "{weight:long} on the scales in the bathroom[ after a shower| pre-breakfast|].",
        "Weight {weight:n} {weight:unit}, BF {fat:n}%.",
        "On the scales: {weight} (fat {fat}).",
        "Weekly weigh-in — {weight:approx}. [Same spot on the tiles.|Before any "
        "food.|Barefoot as usual.]",
        "{weight} this week; smart scale says {fat} fat.",
        "WEIGHT {weight:u} FAT {fat}",
        "Morning weight: {weight:round}, [dry weather|woke early|kids still asleep].",
        "Scale reading {weight} with body fat at {fat:n} percent.",
    ),
    "groceries": (
        "Food shop at {store}: {items}, {amount}.",
        "{store} — {amount:code} ({items:n} items)",
        "Groceries {amount:neg} @ {store}",
        "Big shop at {store}, {amount:round} for {items:w}. [Forgot the milk "
        "again.|Car park rammed.|Self-checkout broke twice.]",
        "{items} in the trolley at {store}, came to {amount}.",
        "weekly shop // {store} // {amount:bare} // {items:n}",
        "Spent {amount:approx} on groceries at {store}[ with the kids in tow| after work|].",
        "Receipt from {store}: {amount:codeafter}, [mostly veg|loads of tins|fruit and "
        "bread mainly].",
        "{store} shop done. {amount}. [Cashier was chatty.|Raining on the walk back.|Used the "
        "bags for life.]",
        "Picked up the week's food from {store} — {items:w}, {amount}.",
    ),
    "blood_pressure": (
        "BP {bp} pulse {pulse:n}",
        "Blood pressure, AM: {bp:mm}, HR {pulse}.",
        "{bp:over}, {pulse:u} — [seated, cuff on the left|right arm|feet flat, back supported]",
        "Cuff read {bp:sp} with a pulse of {pulse}.",
        "bp check: sys {bp:sys} dia {bp:dia}, {pulse:n} bpm",
        "Took my blood pressure before breakfast — {bp}[, second go the same|, sat quietly "
        "first|].",
        "{bp:mm} / pulse {pulse:n}",
        "Morning reading {bp:over} (heart {pulse:long}).",
        "Monitor: {bp}. {pulse}.",
        "Logged BP at {bp:sp} mmHg, resting pulse {pulse:u}.",
    ),
    "glucose": (
        "Pre-breakfast glucose {glucose}.",
        "fbg {glucose:u}",
        "Finger-prick this morning: {glucose:n} {glucose:unit}, [before the kettle|hands "
        "cold|second strip].",
        "Blood sugar before breakfast was {glucose}.",
        "{glucose} fasting — [meter wanted a new battery|porridge after|quick check].",
        "Glucose check: {glucose:approx}",
        "Sugar reading {glucose:n} on waking.",
        "CGM says {glucose} at wake-up[, line flat overnight|].",
        "AM glucose = {glucose}",
        "Tested my sugar first thing, {glucose}. [Quiet morning.|Kettle on.|Still dark out.]",
    ),
    "heart_rate": (
        "Resting HR {hr} per {device}, HRV {hrv}.",
        "{device:cap}: RHR {hr:n}, HRV {hrv:u}",
        "Woke to a resting heart rate of {hr:long} on {device}.",
        "rhr {hr:u} / hrv {hrv:n}ms ({device})",
        "{device:cap} logged {hr} while I slept[; HRV {hrv}|].",
        "Heart rate at rest: {hr}. Source {device}. [Slept in.|Warm night.|Early start.]",
        "HR this morning {hr:n} — {device}, HRV at {hrv}",
        "Overnight numbers off {device}: resting {hr}, variability {hrv}.",
        "{hr:approx} resting, says {device}[, synced fine|, needed a charge after|].",
        "Resting pulse {hr} ({device}); HRV {hrv:n}.",
    ),
    "commute": (
        "Commute via {line}: {dur}.",
        "{line:cap} to work, {dur:hm} door to door.",
        "{dur:minutes} on {line} this morning[ — stood the whole way| — got a seat| — read "
        "two chapters].",
        "{line} in, {dur:m}",
        "Into the office on {line}, took {dur:words}. [Drizzle.|Bright and cold.|Busy as ever.]",
        "Work journey — {line} — {dur:mins}",
        "Took {line} in; {dur:hmin} all told.",
        "{dur:tilde} on {line} to get to work[, podcast on|, coffee in hand|].",
        "Arrived at my desk after {dur:hsp} on {line}.",
        "{line:cap}: {dur:hyph} trip to the office, [usual crowd|nothing to report|same as ever].",
    ),
    "medication_dose": (
        "Took {dose} of {med}.",
        "[x] meds: {med} {dose:u}",
        "Morning {med}: {dose}, with breakfast.",
        "meds — {med} {dose:n}mg",
        "{dose:long} {med} taken at [half seven|breakfast|the usual time].",
        "Had my {med} ({dose}) [with water|with orange juice|after toast].",
        "Dose log: {med}, {dose:u}.",
        "{med:cap} {dose} — meds done[ before work|].",
        "Remembered the {med} today, {dose} as prescribed.",
        "Swallowed {dose} {med} with my tea.",
    ),
    "deployment": (
        "Deployed {service} {version} to {region} in {dur}.",
        "deploy {service}@{version:n} {region} took {dur:m}",
        "Rolled out {version} of {service} in {region}; {dur:mins} end to end[, no alerts|, "
        "canary clean|].",
        "{region}: {service} {version} live after {dur:hmin}.",
        "Release {service} {version} → {region} ({dur:hm})",
        "Shipped {service} to {region} today. Version {version:n}, rollout {dur:min}. [Quiet "
        "afternoon.|Standup ran long first.|Pairing with the new hire.]",
        "[{region}] {service} deploy OK — {version}, {dur:hsp}",
        "Pushed {version} of {service} to {region}, took {dur:words}.",
        "CI/CD: {service} {version} {region} {dur:tilde}",
        "{service} release in {region} went through in {dur:minutes} ({version}).",
    ),
    "oncall_page": (
        "End of on-call: {pages}, mostly {source}, median ack {ack}.",
        "oncall wrap — {pages:n} pages ({source}), ack {ack:m}",
        "{pages:w} this shift, top offender {source}; acked within {ack:mins} on average.",
        "Pager summary: {source} — {pages}. Avg ack {ack:hms}.",
        "Handover note: {pages} over the rotation, [mostly daytime|a couple overnight|spread "
        "out], noisiest was {source}.",
        "{source} paged me {pages:w} this rotation; ack times {ack:tilde}.",
        "Rota finished. Pages: {pages:n}. Source: {source}. Ack: {ack}.",
        "Shift log: {pages} ({source}), responded in {ack:minutes} typically.",
        "PD weekly: {pages:n} incidents, {source}, MTTA {ack:m}",
        "Got {pages} from {source} during on-call, [coffee helped|quiet weekend "
        "otherwise|laptop never left my side].",
    ),
    "invoice": (
        "Invoiced {client} for {hours} — {amount} ({inv}).",
        "{inv} sent to {client}: {hours:n} h, {amount:code}",
        "Billed {client} {amount} for {hours:long} this month[, net 30|, due in two weeks|].",
        "invoice {inv:hash} / {client} / {hours:u} / {amount:bare}",
        "Sent {client} the monthly invoice: {hours} billed, total {amount:codeafter}.",
        "{client} invoice out — {amount:round}, {hours:n} hours logged.",
        "Hours locked for {client}: {hours:approx}. Invoice {inv} for {amount}.",
        "Raised {inv} to {client} ({hours}, {amount}), [emailed their accounts team|put it on "
        "their supplier portal|PDF attached to the thread].",
        "{amount:k} invoice to {client} for {hours:round} of work.",
        "Monthly billing: {client}, {hours}, {amount}. [Accountant copied.|Sent before "
        "lunch.|Friday afternoon admin.]",
    ),
    "sensor_log": (
        "{sensor:cap} sensor: {temp}, {hum} RH, battery {batt}.",
        "[{sensor}] t={temp:u} h={hum:n}% b={batt:n}%",
        "06:00 reading from the {sensor}: temp {temp}, humidity {hum}.",
        "{sensor} | {temp:u} | {hum} | batt {batt}",
        "The {sensor} thermometer shows {temp:approx} and {hum} humidity this morning.",
        "Sensor log — {sensor} — {temp} / {hum}",
        "temp {temp} in the {sensor}, rh {hum:n}%[, battery {batt}|]",
        "{sensor:cap} at dawn: {temp:long}, {hum:long} humidity.",
        "Daily {sensor} check {temp}, {hum}, batt {batt:n}%",
        "Hub reports {sensor} at {temp}, humidity {hum}.",
    ),
    "phone_bill": (
        "{carrier}: {amount} this cycle, {data} used.",
        "Mobile {amount:code} ({carrier}, {data:u})",
        "Phone bill paid to {carrier} — {amount:round}[, {data} of data|].",
        "{carrier} took {amount:neg} for the phone",
        "This month's mobile: {amount} with {carrier}, data {data:n} GB.",
        "Paid the {carrier} bill ({amount:codeafter}); used {data:approx}.",
        "phone — {carrier} — {amount:bare}",
        "{carrier} statement arrived: {amount}. [Same plan as before.|Emailed PDF.|Auto-pay on.]",
        "Mobile bill {amount:approx} from {carrier}, {data:long} of data.",
        "Direct debit to {carrier}, {amount}, for phone and data ({data}).",
    ),
    "gym": (
        "Gym at {gym}: {dur:hm}, top set {lift}.",
        "{gym} — {dur:mins} — squat {lift:u}",
        "Lifted at {gym} for {dur:words}; deadlift {lift}. [Place was empty.|Music was "
        "awful.|Someone was grunting the whole time.]",
        "Session log {gym} {dur:hmin}[, bench {lift}|]",
        "{dur:hyph} workout at {gym}, [legs|push day|pull day], heaviest {lift:long}.",
        "Back from {gym} after {dur:hlong}.",
        "gym ✓ {gym} {dur:m}",
        "Trained at {gym}, {dur:tilde}, worked up to {lift}.",
        "Workout: {gym}, {dur}, {lift} x5 on squats.",
        "{gym:cap} this evening, in and out in {dur:hsp}[; {lift} felt solid|].",
    ),
    "fuel": (
        "Fuelled up, {station}, {litres}, {amount}.",
        "fuel {litres:u} @ {price}/{litres:unit} = {amount} ({station})",
        "{station:cap} — {litres:n} {litres:unit} at {price}, total {amount:code}.",
        "Tank done at {station}: {amount:round} for {litres:long}.",
        "Petrol: {amount:neg}, {litres}, {station}",
        "Put {litres:approx} in at {station}[ on the way to work| after the school run|]; "
        "came to {amount}.",
        "{amount:codeafter} at {station} for {litres}. [Queue at pump 4.|Windscreen washed "
        "too.|Grabbed a sandwich as well.]",
        "Refuelled — {station} — {litres} @ {price}",
        "Diesel from {station}, {litres:u}, {amount:bare}.",
        "Fuel stop at {station}: {litres}, {amount} all in.",
    ),
    "child_pickup": (
        "Collected {child} from {place} at {time:pm}.",
        "{place} → {child} collected {time:24}",
        "{child} picked up from {place}, {time}. [Muddy knees again.|Had a painting to "
        "show me.|Starving as usual.]",
        "Got to {place} for {child} at {time:dot}[, raining|, sunny|].",
        "School gate, {place}: {child} out at {time:hhmm}",
        "Picked {child} up from {place} at {time:ampm} and walked back.",
        "{time:fr} — {child} from {place}",
        "At the {place} gates at {time:pm} to collect {child}.",
        "{child} out of {place} at {time}, [chatty in the car|dozed off on the way|wanted a "
        "snack straight away].",
        "Back with {child} from {place} — collected {time:24}.",
    ),
    "cleaning_service": (
        "{cleaner} cleaned for {hours:hours}, paid {amount}.",
        "Cleaner ({cleaner}) — {hours:hm} — {amount:code}",
        "{cleaner} came today: {hours:words} of cleaning, {amount:round} [in cash|by bank "
        "transfer|via the app].",
        "cleaning {hours:hrs} / {amount:bare} / {cleaner}",
        "Paid {cleaner} {amount} for {hours:hlong}[; oven's spotless|; did the sheets too|].",
        "Whole place done by {cleaner}, {hours:hsp}.",
        "{hours:h} clean from {cleaner}, {amount:codeafter}.",
        "Fortnightly clean — {cleaner} — {amount:approx}",
        "{cleaner} was here {hours:hmin}, [used the spare key|brought their own "
        "products|left a note on the counter].",
        "Cleaning visit: {cleaner}, {hours}, {amount}.",
    ),
    "subscription": (
        "{service} {plan} renewed, {amount}.",
        "{service} — {amount:neg} (monthly)",
        "Subscription charge: {service} {plan}, {amount:code}.",
        "{amount} went out to {service} for the {plan} plan[, card ending 0931|].",
        "Paid {service} {amount:codeafter} this month.",
        "sub: {service} {amount:bare}",
        "{service} billed me {amount} [overnight|this morning|while I was at work].",
        "Monthly {service} payment of {amount} ({plan}).",
        "{service} renewal notice: {plan}, {amount:approx}.",
        "{service} auto-renew went through — {amount}. [Receipt filed.|Barely noticed "
        "it.|Auto-pay as usual.]",
    ),
    "water_intake": (
        "Today's water total {water}",
        "{glasses} of water, {water:alt} total",
        "Drank {water:long} of water[ at my desk| mostly in the afternoon|].",
        "h2o {water:u}",
        "Hydration: {glasses:w}, about {water}.",
        "Finished {water:approx} of water by bedtime.",
        "Refilled the bottle enough for {water} today — [hot day|office air is dry|lots of "
        "herbal tea too].",
        "{water:alt} water logged",
        "Got through {glasses} today ({water:u}).",
        "Daily water — {water:n} {water:unit}. [Bottle by the bed.|Kept the jug on the "
        "desk.|Easy today.]",
    ),
    "dog_walk": (
        "Walked {dog} round {route}, {dur:words}.",
        "dog walk {dur:m} / {dist:u} / {route}",
        "{dog} and I did {route} this morning — {dur:hmin}, {dist}. [Frost on the "
        "grass.|Met the spaniel from next door.|Ball lost in the bushes.]",
        "Took {dog} out on {route} for {dur:mins}[, off the lead most of the way|, muddy "
        "paws after|].",
        "{route:cap} with {dog}: {dist:approx} in {dur:min}.",
        "Morning walkies — {dog}, {route}, {dur:hsp}",
        "{dur:hyph} walk with {dog} along {route}.",
        "Dog out: {route} / {dist:long}",
        "Did {route} with {dog} in {dur:tilde}, [drizzly|bright and crisp|windy] out.",
        "{dog} walked, {route}, {dur:hlong}.",
    ),
    "cloud_bill": (
        "{host} invoice for {project}: {amount}, {storage} stored.",
        "cloud — {host} — {amount:code} ({storage:u})",
        "Hosting bill from {host} came in at {amount:codeafter}[ for {project}|].",
        "Paid {host} {amount} for {project}'s servers; storage at {storage}.",
        "{host} charged {amount:neg} this month",
        "Monthly {host} bill {amount:bare} — [nothing odd in the breakdown|mostly "
        "compute|mostly disk and bandwidth].",
        "{project:cap} hosting ({host}): {amount}, disk {storage:round}.",
        "{amount:approx} to {host}, [card charged automatically|receipt in the inbox|paid "
        "from the business account].",
        "Cloud spend {host}: {amount}, {storage:n} GB used.",
        "{host} statement — {project} — {amount}",
    ),
    "tutoring": (
        "{subject:cap} lesson with {tutor}, {dur:min}, paid {fee}.",
        "tutoring: {tutor} / {subject} / {dur:hm} / {fee:bare}",
        "{tutor} came round for {dur:words} of {subject}[, homework set|, worked through a "
        "past paper|].",
        "Had {subject} with {tutor} — {dur:mins}, {fee:code}.",
        "{dur:hyph} {subject} session, {tutor}. [Good focus.|Lots of questions.|Ran through "
        "the tricky bits again.]",
        "Paid {tutor} {fee:round} after today's {dur:hsp} lesson.",
        "Lesson log — {tutor}, {dur:hlong}, {fee}",
        "{tutor}: {subject}, {dur:tilde}, {fee:codeafter}",
        "Weekly {subject} tutoring with {tutor} ran {dur:hmin}.",
        "{fee} to {tutor} for {subject} ({dur}).",
    ),
}

QUESTIONS: dict[str, tuple[str, ...]] = {
    "rent": (
        "How much should I set aside each month for a house deposit?",
        "What's a sensible way to budget on a single income?",
        "Is it worth asking for a longer lease to keep the rent stable?",
        "Any ideas for making a small flat feel bigger?",
    ),
    "sleep": (
        "What's a good wind-down routine before bed?",
        "Can you suggest some calming podcasts for the evening?",
        "How do I stop checking my phone so late?",
        "Is a weighted blanket worth buying?",
    ),
    "yoga": (
        "Can you suggest some stretches for a stiff lower back?",
        "What should I look for in a good non-slip mat?",
        "How do I get better at balancing poses?",
        "Recommend a short breathing exercise for stressful days.",
    ),
    "call_home": (
        "What are some nice things to send family for no particular reason?",
        "Help me plan a visit back for the holidays.",
        "How can I help an older relative get comfortable with video chat?",
        "Any tips for keeping a phone call flowing when the chat dries up?",
    ),
    "electricity_bill": (
        "How can I use less heating over the winter without freezing?",
        "Is it worth switching to a smart thermostat?",
        "Which appliances tend to use the most electricity?",
        "Would a heat pump make sense in a draughty semi?",
    ),
    "pharmacy_refill": (
        "Can you set a reminder a few days before each refill is due?",
        "Is the bathroom cabinet a bad place to keep medicines?",
        "Can you explain what a generic medicine is?",
        "How should I get rid of expired medicine safely?",
    ),
    "run": (
        "Which foam-roller moves are good for tight calves?",
        "How do I pick the right trainers for my feet?",
        "What's a good snack to carry on a long run?",
        "Any tips for staying motivated in the dark winter months?",
    ),
    "coffee_friend": (
        "What are some good conversation starters with someone I haven't seen in years?",
        "Suggest a thoughtful birthday gift for a close friend.",
        "Where could I go for a quiet brunch this weekend?",
        "How do I keep in touch with people when life gets busy?",
    ),
    "weigh_in": (
        "Can you suggest some high-protein breakfasts?",
        "How often should I replace the batteries in my bathroom scale?",
        "What's a realistic healthy snack for the office?",
        "How do I build a simple home workout plan?",
    ),
    "groceries": (
        "Can you help me plan cheap dinners for the week?",
        "What pantry staples should I always keep in?",
        "Give me a recipe that uses up leftover vegetables.",
        "Any tips for reducing food waste from my weekly shop?",
    ),
    "blood_pressure": (
        "What are some low-salt lunch ideas?",
        "How do I calibrate a home monitor?",
        "Can you explain what systolic and diastolic mean?",
        "Which relaxation techniques actually help with stress?",
    ),
    "glucose": (
        "What are some breakfast options that won't spike my sugar?",
        "Can you suggest low-carb snacks for work?",
        "How should I look after my feet as a diabetic?",
        "What's a good way to keep test strips organised?",
    ),
    "heart_rate": (
        "Which zone should I train in to build endurance?",
        "What's the difference between resting and active heart rate?",
        "How can I get better at managing stress during the day?",
        "Can you recommend an app to track my workouts?",
    ),
    "commute": (
        "Recommend some podcasts for a long journey.",
        "Any ideas to make getting to work less of a slog?",
        "Is it worth getting a folding bike?",
        "What can I do to stay productive while travelling?",
    ),
    "medication_dose": (
        "What's the easiest way to remember things I do every morning?",
        "What's the easiest way to remember my meds when I'm away?",
        "Can I take ibuprofen alongside my usual prescription?",
        "How do I bring medicine through airport security?",
    ),
    "deployment": (
        "Can you explain blue-green deployments simply?",
        "What's a good checklist before a production release?",
        "How should I structure a postmortem document?",
        "Any advice on reviewing large pull requests?",
    ),
    "oncall_page": (
        "How do I stop pages waking me up for things that can wait?",
        "What should go into a good runbook?",
        "Tips for switching off after a stressful week?",
        "How do I ask my manager for on-call compensation?",
    ),
    "invoice": (
        "How do I chase a late payment politely?",
        "What should a freelance invoice always include?",
        "Help me draft a rate increase email for clients.",
        "How should I put aside money for tax as a contractor?",
    ),
    "sensor_log": (
        "What humidity level is best for houseplants?",
        "What's a cheap fix for black mould on window frames?",
        "Which smart home hub works best with battery sensors?",
        "Can you explain how to set up an automation that texts me?",
    ),
    "phone_bill": (
        "Are SIM-only deals usually cheaper?",
        "How can I check which apps use the most mobile data?",
        "What's a good way to keep my number when switching providers?",
        "Is it worth getting insurance for my handset?",
    ),
    "gym": (
        "Can you put together a beginner-friendly stretching plan?",
        "What's a good protein shake that isn't too sweet?",
        "How do I avoid injuring my shoulders when pressing?",
        "How many rest days should I leave between each gym workout?",
    ),
    "fuel": (
        "How do I get more miles out of a tank of fuel?",
        "When should I get the tyres checked?",
        "Is an electric car worth it for someone like me?",
        "What should I keep in the boot for winter emergencies?",
    ),
    "child_pickup": (
        "Can you suggest some easy after-school snacks?",
        "What are fun things to do on a rainy afternoon with a six-year-old?",
        "How do I organise a carpool with other parents?",
        "Ideas for a packed lunch that won't come back uneaten?",
    ),
    "cleaning_service": (
        "What's a good way to declutter a small home?",
        "What's the trick for shifting limescale from taps?",
        "How much should I tip for a house clean?",
        "Which eco-friendly products actually work?",
    ),
    "subscription": (
        "Help me list everything I pay for monthly so I can cut back.",
        "Are shared plans cheaper than separate accounts?",
        "Can you recommend a good audiobook?",
        "What's a good way to track trial periods so I don't get charged?",
    ),
    "water_intake": (
        "Can you suggest a reusable bottle that keeps drinks cold?",
        "What are signs I'm not drinking enough?",
        "How do I build a habit that actually sticks?",
        "Is sparkling water as good for you as still?",
    ),
    "dog_walk": (
        "What's a good treat for training a stubborn puppy?",
        "How do I stop my pet pulling on the lead?",
        "Can you find dog-friendly pubs for a Sunday lunch?",
        "How often should a medium-sized breed see the vet?",
    ),
    "cloud_bill": (
        "How do I set a budget alert for my hosting account?",
        "What's the cheapest way to back up a few hundred photos offsite?",
        "Can you explain what egress fees are?",
        "Should I move a static site somewhere cheaper?",
    ),
    "tutoring": (
        "How can I help with homework without taking over?",
        "What are good ways to practise between lessons?",
        "Suggest some revision techniques for exams.",
        "How do I tell if tutoring is actually helping?",
    ),
}

CONTENT_NOTES: dict[str, tuple[str, ...]] = {
    "rent": (
        "the letting agent is moving us onto a new payment portal",
        "the landlord says the boiler will be replaced in March",
        "a neighbour told me the building has been sold",
        "I found damp spreading behind the wardrobe",
    ),
    "sleep": (
        "I've started taking magnesium before bed",
        "the neighbours' baby has started crying through the wall",
        "the doctor suggested cutting out caffeine after noon",
        "we've swapped to a bigger mattress",
    ),
    "yoga": (
        "the studio is closing for refurbishment in April",
        "I tweaked my wrist during the arm balances",
        "the teacher invited me to help run a beginners' workshop",
        "they're adding a Saturday morning slot",
    ),
    "call_home": (
        "Grandpa is going into hospital for a knee operation",
        "my sister is expecting her second baby",
        "they're thinking about selling up and moving to the coast",
        "Dad has been told to stop driving",
    ),
    "electricity_bill": (
        "the supplier is raising the unit rate from next quarter",
        "an engineer is coming to swap the meter",
        "I've been moved onto a fixed tariff until 2026",
        "there's a credit of fifty on the account from an old overpayment",
    ),
    "pharmacy_refill": (
        "the pharmacist said the manufacturer has changed",
        "they're out of stock until next week",
        "my GP wants to see me before issuing any more",
        "the tablets now come in blister packs instead of a tub",
    ),
    "run": (
        "I rolled my ankle on a tree root",
        "the council is closing that path for resurfacing",
        "I've signed up for a half marathon in May",
        "my left knee started aching near the end",
    ),
    "coffee_friend": (
        "they told me they're emigrating to Canada in the spring",
        "they've just been made redundant",
        "the cafe is changing hands next month",
        "I found out we went to the same primary school",
    ),
    "weigh_in": (
        "the doctor wants me to keep a closer eye on it",
        "I've started a new medication that can cause weight gain",
        "the GP referred me to a dietitian",
        "my partner has joined in with the weekly weigh-ins",
    ),
    "groceries": (
        "they've stopped stocking my usual oat milk",
        "I got a letter saying my loyalty card points expire soon",
        "the store is closing its town-centre branch",
        "I bumped into an old colleague in the checkout queue",
    ),
    "blood_pressure": (
        "the doctor has added a second tablet",
        "I've been getting headaches in the mornings",
        "the cuff is starting to crack at the seam",
        "the nurse wants readings from both arms from now on",
    ),
    "glucose": (
        "I've been feeling shaky before lunch",
        "the clinic moved my HbA1c check to next month",
        "a new sensor arrived to try out",
        "I've been told to cut back on fruit juice",
    ),
    "heart_rate": (
        "my watch flagged an irregular rhythm overnight",
        "I've had a cold since the weekend",
        "the strap broke and I'm using a spare",
        "I started a beta blocker on Monday",
    ),
    "commute": (
        "the station is fitting new ticket barriers",
        "my team is moving to a different office in June",
        "I've been asked to come in four days a week",
        "the timetable changes from the next quarter",
    ),
    "medication_dose": (
        "the new batch of pills is a different shape",
        "I've had an upset stomach after it",
        "the doctor wants to review it in six weeks",
        "I'm meant to stop it before my surgery in March",
    ),
    "deployment": (
        "the pipeline moved to new runners this week",
        "a customer reported a bug right after it",
        "legal wants sign-off for every rollout from now on",
        "the database migration is scheduled for Friday",
    ),
    "oncall_page": (
        "the paging rules are being changed next sprint",
        "I've been nominated to lead the incident review",
        "the company is moving to follow-the-sun coverage",
        "my laptop died mid-incident on Tuesday",
    ),
    "invoice": (
        "they've asked for a purchase order number from now on",
        "their finance contact has left the company",
        "I'm planning to bill by the day from January",
        "the last one is still unpaid after six weeks",
    ),
    "sensor_log": (
        "a firmware update was installed at midnight",
        "I moved the unit to a higher shelf",
        "there's a new dehumidifier running in there",
        "a mouse chewed through a cable near it",
    ),
    "phone_bill": (
        "they're adding roaming charges for Europe",
        "my contract ends in two months",
        "I added my teenager to the account",
        "the carrier is retiring 3G in my area",
    ),
    "gym": (
        "the gym is raising the membership fee",
        "one of the coaches offered to check my form for free",
        "I felt a twinge in my lower back on the last set",
        "they've installed new squat racks",
    ),
    "fuel": (
        "the tyre pressure light came on",
        "the MOT is due at the end of the month",
        "the pump cut out twice before it finished",
        "I noticed a chip in the windscreen",
    ),
    "child_pickup": (
        "the teacher mentioned a nit outbreak in the class",
        "they've been picked for the football team",
        "there's a new crossing guard by the main road",
        "I got a letter about a class trip to the zoo",
    ),
    "cleaning_service": (
        "they're putting their rate up from the next visit",
        "a vase in the hall got broken",
        "they'll be away for three weeks in August",
        "they asked if I could buy a new mop",
    ),
    "subscription": (
        "they're ending the ad-free tier in June",
        "my card was flagged for a double charge",
        "the student discount has run out",
        "I've been sent a survey about cancelling",
    ),
    "water_intake": (
        "the doctor suggested adding electrolytes",
        "my kidney results came back a bit off",
        "I bought a filter jug",
        "I've been waking up thirsty at night",
    ),
    "dog_walk": (
        "I found a lump on the side of the belly",
        "the council has put up new rules about keeping dogs on a leash",
        "a cyclist nearly ran into us at the bend",
        "someone's left poison warnings on the gate",
    ),
    "cloud_bill": (
        "they're deprecating the region I'm hosted in",
        "a surprise snapshot charge appeared",
        "the free credits expired",
        "I got a security notice about an exposed key",
    ),
    "tutoring": (
        "they've suggested moving to fortnightly",
        "the exam board changed the syllabus",
        "the tutor is moving to the other side of town",
        "I was told a mock grade went up a band",
    ),
}

MISC: tuple[str, ...] = (
    "Finished [a jigsaw of the Alps|the 1,000-piece puzzle|a crossword book] with [my "
    "niece|Gran|the neighbours' kid].",
    "Booked [a cottage in Wales|a week in Crete|two nights in Porto] for [June|late "
    "summer|the bank holiday].",
    "[Auntie Bea|My cousin Jo|Old Mr Patel] turned [eighty|fifty|sixty-five] — sent a card.",
    "The [kitchen tap|back door|bathroom fan] is [dripping|sticking|rattling] again; need a "
    "handyman.",
    "Saw [a film about lighthouses|the new animated film|a restored silent film] at the "
    "[cinema|community hall].",
    "Learnt to [make dumplings|knit a scarf|change a bike tyre] from [a video|a "
    "neighbour|a library book].",
    "Bought [tulip bulbs|a lemon tree|chilli plants] for the [balcony|back garden|window box].",
    "[Our street|The village|My building] is having a [summer party|jumble sale|litter pick] "
    "on [Saturday|the 14th].",
    "Lent my [ladder|drill|camping stove] to [the couple upstairs|my brother-in-law|a friend "
    "from choir].",
    "Started reading [a biography of Marie Curie|a thick fantasy series|short stories by "
    "Alice Munro].",
    "The washing machine made a [grinding|squealing|thumping] noise; looked it up online.",
    "Joined a [choir|pottery class|book club] that meets on [Thursdays|alternate Mondays].",
    "Found [old photos|my school reports|a box of letters] in the [attic|wardrobe|shed].",
    "Rearranged the [living room|bookshelves|spare room] — [much better|not sure "
    "yet|partner hates it].",
    "Watched the [eclipse|meteor shower|fireworks] from the [roof|garden|hill behind the house].",
    "Tried a new recipe: [shakshuka|mushroom risotto|fish tacos]. [Would make "
    "again.|Too salty.|Kids loved it.]",
    "Passport renewal [sent off|approved|still pending] — [photo was awful|took ages "
    "online|quicker than expected].",
    "[Niamh|Tomás|Hiro] got engaged! Wedding's [next spring|in Lisbon|probably next year].",
    "Sorted three bags of [clothes|books|toys] for the charity shop.",
    "Heard [owls|a woodpecker|geese flying over] [at night|early on].",
    "Museum trip: [the Egyptian rooms|a dinosaur exhibit|modern art] with [friends|my "
    "parents|the kids].",
    "Fixed the [wobbly table|squeaky hinge|loose shelf] with [glue|a washer|two screws].",
    "[Gran|Uncle Dev|My old teacher] sent a [postcard from Iceland|parcel of books|long letter].",
    "Signed up for a [five-a-side team|pub quiz team|community garden plot].",
    "Learning [the chords to an old folk song|Italian for ordering food|the names of the "
    "constellations].",
    "Birthday present ideas for [Sam|my godson|the boss's leaving do]: [a kite|a board "
    "game|a nice pen].",
    "Got the [bike|sewing machine|lawnmower] serviced; [cost less than feared|good as "
    "new|took a week].",
    "It [snowed|hailed|poured] out of nowhere on [Tuesday|the way back from town].",
    "Volunteered at the [food bank|animal shelter|library book sale] for [the "
    "afternoon|a morning].",
    "Dug a new bed for [garlic|sweet peas|raspberries] along the fence.",
    "Went to [a wedding|a christening|a fortieth] in [Leeds|Galway|Lyon]; [danced all "
    "night|food was great|long way home].",
    "Need to [return the library books|renew my driving licence|send thank-you cards] "
    "[soon|before Friday].",
    "Made [jam|chutney|pickles] with [plums|green tomatoes|cucumbers] from [the "
    "neighbour|the market].",
    "Bumped into [an old schoolfriend|my first boss|a former neighbour] at the "
    "[market|bookshop|bus stop].",
)
