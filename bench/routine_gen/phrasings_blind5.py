"""Fifth blind split (blind5): entry families, questions, content notes and misc memories.

The tables follow the other split modules: each FAMILIES string is one sentence shape for a
routine kind, naming the kind's slots and quantities in braces (kinds.py) with an optional
format spec after a colon (quantities.py). ``[a|b|c]`` picks one option at random; an empty
option leaves nothing. Every family names the kind's main quantity (or one derived from it)
and every category slot of the kind.

The wording imitates what people jot into a notes app or send to themselves in a chat:
lower-case fragments, bullets, arrows and pipes as separators, tick marks, emoji, "w/", "@",
"pd", "ref", "x3"-style counts, "=>" and "=" sums, "give or take", "or so" and "-ish"
approximations, hour ranges, field labels ("class: ... / teacher: ..."), the quantity first or
last, clocks in several styles, and in some families an aside in brackets or after a dash
picked from a few options that is not news.

Content notes are clauses (lower case unless they start with "I" or a name, no final full
stop), each reporting something new. Questions are everyday requests on the routine's topic
that neither quote the entries nor touch anything an outlier could say.

Written on 2026-12-09 without reading the detector, the service, its tests, its documentation
or the benchmark scripts; the other phrasebooks were opened only to keep clear of their
wording. Run it once, at the end of a session; the detector's developer never reads this
module or the texts generated from it.
"""

FAMILIES: dict[str, tuple[str, ...]] = {
    "rent": (
        "paid rent. {payee}. {amount} gone 💸",
        "Note to self: {payee} has had this month's {amount:round}[, bank app lagged|, "
        "confirmation email came through|].",
        "{amount:bare} ({payee}) — rent, sorted",
        "ok rent's out the door: {amount:codeafter} to {payee}",
        "{payee:cap}... {amount:approx} for the flat. [ugh.|as ever.|fine.]",
        "Transfer ref RENT → {payee} • {amount:code}",
        "rent {amount:k} pd to {payee} (online banking)",
        "Flat money for the month => {payee}, {amount} [(on time for once)|(set a reminder "
        "for next time)|(flatmate squares up with me later)]",
        "Sent {payee} the rent, showing as {amount:neg} on my account now.",
        "{amount} rent, payee {payee}, done before lunch.",
    ),
    "sleep": (
        "zzz {sleep:hm} (lights out {bed:pm})",
        "Bed {bed:24} → up with the alarm. Total {sleep:hsp}.",
        "slept {sleep:range}, turned in at {bed} [— heating kept ticking|— cat on my "
        "feet|— vivid dreams]",
        "Overnight — in bed {bed:dot}, asleep for {sleep:hlong} give or take.",
        "{sleep:hours} sleep, went down {bed:ampm} ish",
        "Sleep app → {sleep:hmin} | bedtime {bed:fr}",
        "Managed {sleep:words} of kip; head on pillow by {bed:pm}.",
        "night: {sleep:h}, bed @ {bed:hhmm}",
        "Turned in {bed:24}. Slept {sleep:hrs}. [Bit groggy.|Felt fine.|Hit snooze twice.]",
        "{sleep:clock} of actual sleep per the watch, bed {bed:pm}",
    ),
    "yoga": (
        "{style:cap} w/ {teacher} @ {studio} ({dur:m})",
        "yoga ✓ {studio}, {teacher} teaching, {dur:hsp} [— hamstrings screaming|— loved "
        "the savasana bit|— room was roasting]",
        "Back from {studio}. {teacher}'s {style} class ran {dur:minutes}.",
        "{dur:words} of {style} at {studio} this evening, {teacher} took it.",
        "class: {style} / teacher: {teacher} / where: {studio} / how long: {dur:hmin}",
        "Did {teacher}'s class at {studio} ({style}, {dur:min} or so).",
        "{studio} → {dur:hm} {style}, led by {teacher}[. Brought my own mat|. Borrowed a block|].",
        "Evening {style} flow — {teacher}, {studio}, {dur:clock}",
        "{teacher:cap} at {studio} again: {dur:hlong} {style} [+ a bit of chanting|+ "
        "headstands|+ long holds]",
        "yoga night • {studio} • {teacher} • {dur:mins}",
    ),
    "call_home": (
        "called {person}, {dur:m} 📞",
        "Catch-up with {person} ({dur:hsp}) [— their garden's overrun|— talked about the "
        "news|— mostly weather]",
        "{dur:minutes} on the phone to {person} this evening.",
        "The usual weekly ring: {person}, {dur:words}.",
        "{person:cap} rang me back; we went on for {dur:hlong}.",
        "ph → {person} | {dur:hmin}",
        "Video call w/ {person}, {dur:clock} by the call timer[, grainy picture|, screen "
        "froze twice|].",
        "Talked to {person} {dur:tilde}. [Nothing much new.|Sounded tired.|Lots of laughing.]",
        "Chat with {person} lasted {dur:mins}",
        "{dur:hm} facetime, {person}",
    ),
    "electricity_bill": (
        "elec bill in — {provider}, {kwh:round}, {amount}",
        "{provider} wants {amount:code} for {kwh} [(estimated read)|(smart meter read)|]",
        "Power this month: {kwh:n} units → {amount:round} ({provider})",
        "{amount:codeafter} to {provider}. Usage {kwh:long}.",
        "Paid electric ({provider}) {amount:bare}; meter says {kwh:u}",
        "Electricity: {kwh:approx} used, {provider} charging {amount}. [Direct debit.|Paid "
        "by card online.|Filed it.]",
        "{provider} bill: {kwh} / {amount:neg}",
        "kWh this month {kwh:n} — cost {amount:approx} — supplier {provider}",
        "Got the {provider} statement, {amount} for {kwh:round}[, due in 14 days|, paying "
        "it now|].",
        "{kwh:u} of electricity billed by {provider}",
    ),
    "pharmacy_refill": (
        "collected {med} from {pharmacy} ({copay})",
        "{pharmacy:cap} → {med} → {copay:round}",
        "Rx pickup: {med}, {pharmacy}, paid {copay:code}",
        "{copay:approx} at {pharmacy} for my {med}[, in and out fast|, queue out the "
        "door|, ten-minute wait].",
        "Picked up the {med} — {pharmacy}, {copay:codeafter}.",
        "meds ✓ ({pharmacy}) {copay:bare}",
        "Prescription refilled at {pharmacy}. {med:cap}. Charge: {copay}.",
        "Popped into {pharmacy} on the way home, {med} ready, {copay} at the till.",
        "{copay} — {pharmacy} — {med} for the month",
        "This month's {med} sorted, {pharmacy}: {copay:neg}. [Bag's in the car.|Leaflet "
        "inside again.|]",
    ),
    "run": (
        "{dist} @ {route}, {time:hms} [— legs heavy|— nice sunrise|— wet underfoot]",
        "Morning run: {route}. Dist {dist:n}{dist:unit}, time {time:hms}.",
        "ran {route} ({dist:long}) in {time:mins}",
        "{time:hms} for {dist:round} round {route}",
        "Out early along {route}, watch says {dist:u}, {time:hmin}.",
        "{route:cap} • {dist} • {time:hms} • easy pace",
        "Jogged {dist:approx} on {route}[, didn't stop once|, walked the hill|].",
        "run — {route} — {time:hm} — {dist:h} loop",
        "Got a run in before work. {route}, {dist}, {time:hms}.",
        "{dist:u} | {time:hms} | {route}",
    ),
    "coffee_friend": (
        "coffee w/ {friend} at {cafe}, {dur:m}, {spent:bare}",
        "{friend} & I hung out at {cafe} for {dur:hlong}. Paid {spent}.",
        "{cafe} with {friend} ☕ {dur:hsp} [— flat whites all round|— we split a "
        "cake|— new barista on]",
        "Met up with {friend} — {cafe} again — {dur:words}, {spent:approx} on me.",
        "Caffeine + gossip: {friend}, {cafe}, {dur:min}",
        "{dur:hm} at {cafe} ({friend}); spent {spent:round}",
        "Weekly coffee ✓ {friend} / {cafe} / {dur:mins} / {spent:code}",
        "Sat with {friend} in {cafe} {dur:tilde}.",
        "{friend:cap} came to {cafe}, stayed {dur:minutes}[, I got the round|, their shout|]",
        "Coffee catch-up, {cafe}: {friend}, {dur:hmin}, bill {spent:codeafter}.",
    ),
    "weigh_in": (
        "{weight} this am, bf {fat}",
        "weight → {weight:u} ({fat} fat)",
        "Scale: {weight:n}, fat {fat:n}%",
        "Weekly weigh: {weight:long}; body-fat reading {fat}",
        "{weight:approx} on the scale, fat % {fat:n}[ (before breakfast)| (after the loo)| "
        "(in pyjamas)]",
        "Stepped on the scale — {weight}. {fat} fat.",
        "wk weigh-in • {weight:u} • {fat}",
        "Weighed myself: {weight:round}, body fat {fat:u}. [Same time as usual.|Scale "
        "wobbly on the tiles.|]",
        "{weight} | {fat} bf",
        "{weight:h} reading first thing, fat {fat}",
    ),
    "groceries": (
        "shop @ {store}: {amount}, {items:n} things",
        "Groceries: {store}, {items}, {amount:code}",
        "{amount:round} at {store} 🛒 ({items:w})",
        "Weekly food shop done at {store}[ — forgot bin bags again| — used the "
        "self-scan| — took ages]. Total {amount:codeafter}.",
        "{store:cap} haul: {items}, {amount:approx}",
        "food • {store} • {amount:bare}",
        "Spent {amount} at {store} this week on groceries.",
        "{items:n} items, {amount:neg}, {store}",
        "Popped to {store} for the weekly stuff, came to {amount}.",
        "Grocery run ({store}) {amount:k}, {items:w} in the bags",
    ),
    "blood_pressure": (
        "bp {bp:sp}, hr {pulse:u}",
        "Cuffed up at 7ish: {bp:mm}, pulse {pulse:n}.",
        "{bp} • {pulse} • seated",
        "AM reading: {bp:over}, heart {pulse:long}[ (2nd go)| (after a rest)|].",
        "Sys {bp:sys} / Dia {bp:dia} / Pulse {pulse:n}",
        "Checked BP before coffee: {bp}. Pulse {pulse}.",
        "{bp:mm} ({pulse} pulse) [— left arm|— cuff felt tight|— feet flat on floor]",
        "pressure {bp:over}; pulse {pulse:u}",
        "Monitor said {bp:sp} and {pulse:n} bpm.",
        "Daily BP: {bp}, {pulse:long}",
    ),
    "glucose": (
        "fasting bg {glucose}",
        "Sugar this morning: {glucose:u}[ (fasting)| (before brekkie)| (pre-food)]",
        "{glucose:n} on the meter, fasting.",
        "Fasting sugars — {glucose:long}",
        "AM finger stick → {glucose}",
        "Woke, tested: {glucose:approx}. [Fingers cold.|Strip box nearly empty.|Meter was slow.]",
        "bg log {glucose:u}",
        "Fasting glucose reading of {glucose} today.",
        "Tested before eating — {glucose:n} {glucose:unit}",
        "{glucose} fbg (nothing eaten yet)",
    ),
    "heart_rate": (
        "rhr {hr} / hrv {hrv} via {device}",
        "{device:cap} says resting HR was {hr:u} overnight, HRV {hrv:n}.",
        "resting HR → {hr:long} ({device})",
        "HR {hr:n} • HRV {hrv} • {device}",
        "From {device} on waking: RHR {hr}, HRV {hrv:u}[, synced late|, strap was loose|].",
        "{hr} at rest, going by {device}",
        "Checked {device}: resting {hr:n}, variability {hrv:n}ms",
        "Resting pulse ({device}): {hr:u}",
        "{device:cap} overnight → {hr} resting [· hrv {hrv}|· hrv {hrv:u}|]",
        "Woke up, looked at {device}: {hr:n} bpm resting, HRV {hrv}.",
    ),
    "commute": (
        "in via {line} // {dur:m}",
        "Commute → {dur:hmin} on {line}[ (standing room only)| (quiet carriage)| (wet)]",
        "Got in via {line}: {dur:minutes}.",
        "{dur:words} on {line} this morning",
        "to work — {line} — {dur:hsp}",
        "Took {line} again; {dur:min} door-to-desk.",
        "{line:cap}: {dur:tilde} to the office",
        "Journey in ({line}) clocked {dur:mins}. [Read my book.|Caught up on emails.|Rain.]",
        "work commute {dur:hm} via {line}",
        "Made it in on {line}, {dur:hlong}.",
    ),
    "medication_dose": (
        "{med} {dose} ✓",
        "took my {med}, {dose:u}",
        "AM meds: {med:cap} {dose:long}",
        "{dose} {med}, with food[ and a glass of juice| and toast|]",
        "Med log • {med} • {dose:n}{dose:unit}",
        "Swallowed {dose:u} of {med} post-brekkie.",
        "{med:cap} dose taken ({dose})",
        "Daily {med}: {dose:n} {dose:unit}[, reminder set for tomorrow|, blister pack "
        "nearly done|]",
        "Had the {med} at breakfast — {dose}.",
        "{dose} — {med} — taken on time",
    ),
    "deployment": (
        "{service} {version} out in {region}, {dur:m}",
        "Deploy: {service}@{version} / {region} / {dur:hmin}",
        "Pushed {version} of {service} to {region}, {dur:minutes} end to end[, no "
        "rollbacks|, canary looked fine|].",
        "{region}: {service} → {version:n} ({dur:hsp})",
        "rollout {service} {version} {region} took {dur:tilde}",
        "Shipped {service} ({version}) to {region} in {dur:words}.",
        "Release done • {service} • {version} • {region} • {dur:hm}",
        "{dur:mins} for the {service} {version} deploy to {region}. [Paired with "
        "ops.|Slack was quiet.|Tagged the release.]",
        "Prod deploy {service}/{region} v{version:n}, {dur:clock}",
        "{service} went live in {region} at {version}; pipeline time {dur:min}.",
    ),
    "oncall_page": (
        "oncall wk done: {pages} ({source}), ack ~{ack:m}",
        "{pages:w} this week, all from {source}; average ack {ack:minutes}.",
        "Pager: {source} x{pages:n} | ack {ack:hm}",
        "Rotation summary: {source} paged {pages:n}x, mean ack {ack:mins}[. Wrote it "
        "up.|. One at 3am.|]",
        "{source}: {pages} this shift, {ack:tilde} to ack",
        "Handover notes: {pages:n} alerts off {source}, ack avg {ack:min}.",
        "This rota I got {pages:w} from {source} (ack {ack:words} avg)",
        "on-call ✓ {pages} / {source} / {ack:hmin}",
        "Pages for the week: {pages:n}, source {source}, time-to-ack {ack:hsp}. [Shared "
        "with the team.|Runbook tweaked.|Coffee budget blown.]",
        "{source} set the pager off {pages:n} times; acked in {ack:mins} on avg.",
    ),
    "invoice": (
        "inv {inv} sent to {client}: {hours}, {amount}",
        "Billed {client}: {hours:n} hrs @ usual rate = {amount:code}",
        "{client} invoice ({inv:hash}) → {amount:round}, {hours:long}",
        "Monthly bill to {client} out: {amount:codeafter} for {hours:u}[, PDF "
        "attached|, via their portal|].",
        "{hours:approx} logged for {client} → invoiced {amount}",
        "Invoice {inv} | {client} | {hours} | {amount:bare}",
        "Sent {client} no. {inv:n} for {amount:k}. [Terms 30 days.|Chased the last one too.|]",
        "{client:cap}: {hours:round} of work this month, invoiced {amount}.",
        "Raised {inv} for {client}, {amount} ({hours} billed)",
        "Invoiced {client} today, {hours:n} hours, total {amount}.",
    ),
    "sensor_log": (
        "{sensor} {temp}, {hum} RH",
        "{sensor:cap} sensor @ 6 → {temp:u} / {hum:n}% / batt {batt}",
        "Temp in the {sensor}: {temp:approx}; humidity {hum}[; battery {batt}|].",
        "{sensor} readings: temp {temp}, hum {hum}, bat {batt:n}%",
        "Early log: {sensor} at {temp:long}, {hum} humidity.",
        "{temp} • {hum} • {sensor}",
        "Sensor ({sensor}) {temp:round}[, hub online|, app synced|, readings in]",
        "{sensor:cap}: t={temp}, rh={hum}",
        "Overnight low in the {sensor} {temp:u}, humidity {hum:n}%.",
        "{sensor} env check {temp} ({hum} hum, {batt} batt)",
    ),
    "phone_bill": (
        "{carrier} bill {amount}, {data} data",
        "Mobile bill → {amount:code} ({carrier}), used {data:u}",
        "phone: {carrier} {amount:round}",
        "{carrier:cap} debited {amount:codeafter} this month[; data {data:long}|].",
        "{data:n}GB used, {amount:approx} owed, {carrier}",
        "Paid the mobile ({carrier}): {amount:bare}. [Same plan as ever.|Roaming pack not used.|]",
        "{amount} to {carrier} for phone + {data} data",
        "Cell plan, {carrier}: {amount:neg}",
        "Got the {carrier} e-bill, {amount}, data used {data:round}.",
        "{carrier} | {amount:k} | {data}",
    ),
    "gym": (
        "lifted at {gym} ✓ {dur:m}, top squat {lift}",
        "{dur:hsp} at {gym} — deadlift {lift:u} [for a triple|for 5|for a single]",
        "Lifting @ {gym}: {dur:minutes}, heaviest {lift:long}",
        "{gym:cap} session, {dur:hmin}[, legs|, push day|, pull day].",
        "Trained at {gym} for {dur:words}; bench got to {lift}.",
        "{gym} • {dur:hm} • {lift:n}{lift:unit} top set",
        "Workout done ({gym}), {dur:tilde}",
        "Squats at {gym}, worked to {lift}. Whole thing took {dur:mins}.",
        "{dur:min} in {gym} today. [Packed.|Empty.|Aircon broken.]",
        "Hit {gym}: {dur:hlong}, OHP {lift:u}",
    ),
    "fuel": (
        "fuel {station}: {litres}, {amount}",
        "Filled up at {station}: {litres:n}{litres:unit} × {price} = {amount:code}",
        "{amount:round} of petrol at {station} ({litres:approx})",
        "Tank topped up, {station}, {litres:long}[, windscreen cleaned too|, tyres checked|].",
        "{station:cap} → {litres:u} @ {price}/{litres:unit}",
        "Refuelled at {station}: {amount:codeafter}, {litres}.",
        "{litres} in the car ({station}), {amount:neg}",
        "Fill-up log | {station} | {litres:round} | {amount:bare}",
        "Stopped at {station} for fuel. {litres}, {amount}. [Two cars ahead of me.|Bought a "
        "snack too.|]",
        "{amount:approx} on fuel at {station}, {price} per {litres:unit}",
    ),
    "child_pickup": (
        "got {child} from {place} @ {time:pm}",
        "{place} pickup ✓ {child} out at {time:24}",
        "School run, home leg: {child}, {place}, {time:dot}.",
        "{child} collected {time:ampm} at {place}[, muddy knees|, ravenous|, full of news]",
        "{time:hhmm} {place} → {child}",
        "Picked up {child} at {place}, {time}-ish.",
        "Was at {place} for {child} by {time:fr}.",
        "{child:cap} out of {place} at {time:pm}. [Went via the park.|Straight home for "
        "tea.|Chatted to the teacher.]",
        "pickup: {child} / {place} / {time:24}",
        "Collected {child} ({place}) at {time:pm}.",
    ),
    "cleaning_service": (
        "{cleaner} came, {hours:h}, paid {amount}",
        "Cleaner ✓ {cleaner} — {hours:hmin} — {amount:code}",
        "{cleaner} did {hours:words} today; {amount:round} sent via the banking app.",
        "House clean by {cleaner}: {hours:hsp}, {amount:bare}[ (cash)| (card)| (transfer)]",
        "{amount:codeafter} to {cleaner} for {hours:hours}",
        "{cleaner:cap} here {hours:hm}[, did the fridge too|, fresh sheets on|, hoovered "
        "the stairs]",
        "Paid {cleaner} {amount:approx} for {hours:hlong} of cleaning.",
        "cleaning • {cleaner} • {hours:range} • {amount}",
        "{hours:hrs} from {cleaner} today. {amount} owed and paid.",
        "2-weekly clean ✓ {cleaner}, {hours:clock}, {amount:neg}",
    ),
    "subscription": (
        "{service} renewed, {amount}",
        "{service} {plan} sub: {amount:code}",
        "{service} ({plan}) took its monthly {amount:round}",
        "{amount:codeafter} → {service}[ ({plan})|]",
        "Card hit by {service} for {amount:approx}. [Still using it.|Must cancel "
        "sometime.|Family uses it more than me.]",
        "subs: {service} {amount:bare}",
        "{service:cap} billed {amount} ({plan} plan).",
        "{amount:neg} {service}",
        "{plan} on {service} renews, {amount} gone.",
        "Paid for {service} again this month, {amount:k}.",
    ),
    "water_intake": (
        "water {water} today (~{glasses:n} glasses)",
        "Drank {glasses:w} of water, about {water:alt}.",
        "💧 {water:u} today",
        "Total fluids {water:long}[ incl. herbal tea| not counting coffee|]",
        "{glasses} of water before lights out",
        "Water tracker → {water:approx}",
        "Hydration: {water:round} ({glasses:n} glasses)",
        "App shows {water:alt} of water for the day.",
        "Got through {water} of water today. [Warm day.|Lots of stairs.|Desk bottle helped.]",
        "Day's water • {glasses:w} • {water:u}",
    ),
    "dog_walk": (
        "{dog} walk ✓ {route} {dur:m}",
        "Took {dog} round {route}: {dist:u}, {dur:hmin}.",
        "{route:cap} with {dog}: {dur:minutes}[, lots of squirrels|, rolled in "
        "something|, met the collie].",
        "walkies • {dog} • {route} • {dist}",
        "{dur:words} out on {route} with {dog}.",
        "{dog}'s morning stroll on {route}: {dur:hsp}, {dist:long}",
        "Dog out, {route}, {dur:tilde}. [{dog} filthy after.|Frosty grass.|Quiet.]",
        "{dist:approx} with {dog} around {route}",
        "AM walk — {dog} — {route} — {dur:hm}",
        "{dog} and I did {route} ({dur:mins})",
    ),
    "cloud_bill": (
        "{host} invoice for {project}: {amount}, storage {storage}",
        "cloud spend → {host} {amount:code} ({project})",
        "{project:cap} hosting bill from {host} = {amount:round}[, {storage:u} stored|]",
        "Paid {host} {amount:codeafter} for {project}.",
        "{host} • {project} • {amount:bare} • {storage:n}GB",
        "Monthly {host} bill ({project}) {amount:approx}. [Receipt saved.|Set an "
        "alert.|Forwarded for tax.]",
        "{amount:neg} to {host}, {project}",
        "Hosting for {project} on {host} came to {amount}.",
        "{host} charged {amount:k}, {project}, {storage:round} used",
        "{project} on {host}: {amount}",
    ),
    "tutoring": (
        "{subject} with {tutor}, {dur:m}, {fee}",
        "{tutor} did {subject} today, {dur:hmin}[, lots of practice|, went over "
        "mistakes|, worksheet for next time].",
        "Tutor ({tutor}) {subject} {dur:hsp}, paid {fee:code}",
        "{dur:words} of {subject} with {tutor}.",
        "Lesson ✓ {tutor} • {subject} • {dur:mins}",
        "Paid {tutor} {fee:round} for {subject} ({dur:minutes}).",
        "{subject:cap} session: {tutor}, {dur:hm}, {fee:approx}",
        "{tutor} came for {subject}, stayed {dur:tilde}. [Kids focused.|Bit of a "
        "struggle.|Good effort.]",
        "Weekly {subject} ({tutor}) ran {dur:hlong}",
        "{fee:codeafter} to {tutor}: {subject}, {dur:clock}",
    ),
}

QUESTIONS: dict[str, tuple[str, ...]] = {
    "rent": (
        "What's a fair way to split bills with a flatmate?",
        "Can you help me budget for moving house next year?",
        "How do deposit protection schemes work for tenants?",
        "What questions should I ask before signing a tenancy?",
    ),
    "sleep": (
        "What's a decent wind-down routine for the evening?",
        "Is it bad to scroll in bed before dropping off?",
        "Can you recommend a white noise app?",
        "How cool should a bedroom be at night?",
    ),
    "yoga": (
        "What poses help with a stiff lower back?",
        "Could you put together a ten-minute morning stretch?",
        "How do I get more flexible in my hips?",
        "Which clothes work best for a heated studio?",
    ),
    "call_home": (
        "What are nice things to post to elderly relatives?",
        "Any ideas for keeping in touch with family across time zones?",
        "How can I get my folks to try a smartphone?",
        "Can you suggest some questions to ask grandparents about their youth?",
    ),
    "electricity_bill": (
        "How can I cut standby power around the house?",
        "Are heat pumps worth it in an older home?",
        "Which lightbulbs are the most efficient these days?",
        "Is a heated airer cheaper to run than a tumble dryer?",
    ),
    "pharmacy_refill": (
        "What belongs in a basic home first-aid kit?",
        "Can I take paracetamol and ibuprofen together?",
        "How should I pack medicines for a flight?",
        "What's a good way to keep track of expiry dates in the bathroom cabinet?",
    ),
    "run": (
        "What's a sensible plan to build up to a 10k?",
        "How can I stop my knees aching on downhills?",
        "What should I eat the evening before a race?",
        "Is it okay to jog every day?",
    ),
    "coffee_friend": (
        "What's a thoughtful thank-you gift for a good mate?",
        "Can you recommend some cosy films for a night in with friends?",
        "How do I make a proper cappuccino at home?",
        "Any ideas for seeing mates that don't involve eating out?",
    ),
    "weigh_in": (
        "What's a filling breakfast that isn't too heavy?",
        "How much should I be eating on a training day?",
        "Can you suggest a week of simple packed lunches?",
        "Is it better to eat three meals or several small ones?",
    ),
    "groceries": (
        "What can I make with leftover rice and a few eggs?",
        "How do I keep herbs fresh for longer?",
        "Could you write me a list of store-cupboard staples?",
        "What's a quick pasta sauce that freezes well?",
    ),
    "blood_pressure": (
        "Are there herbs that help keep the heart healthy?",
        "How much walking is good for cardiovascular health?",
        "What's a low-salt soup recipe I could try?",
        "How does stress affect the body over time?",
    ),
    "glucose": (
        "What's a good lunch that won't leave me sleepy?",
        "Which fruits are lower in sugar?",
        "Could you suggest a dessert with no added sugar?",
        "How does fibre help with steady energy?",
    ),
    "heart_rate": (
        "How do I know if I'm overtraining?",
        "Is a smartwatch accurate enough for tracking fitness?",
        "What are zone 2 workouts and why do people do them?",
        "Can you explain what a deload week is?",
    ),
    "commute": (
        "What are some good audiobooks for travel time?",
        "How do I stay productive on a train?",
        "Can you suggest a compact bag for carrying a laptop?",
        "Any tips for dealing with crowds at rush hour?",
    ),
    "medication_dose": (
        "How do I remember to take something every single day?",
        "Should supplements be taken with food?",
        "What's the best way to talk to a pharmacist about side effects?",
        "Can you suggest an app for logging symptoms?",
    ),
    "deployment": (
        "What's the difference between blue-green and canary releases?",
        "How should we version an internal API?",
        "Can you suggest a template for release notes?",
        "What are good practices for secrets in CI?",
    ),
    "oncall_page": (
        "How should an escalation policy be structured?",
        "What makes a good alert threshold?",
        "Any tips for handing over a shift cleanly?",
        "How do I say no to extra work when I'm already stretched?",
    ),
    "invoice": (
        "How do I work out a day rate as a contractor?",
        "What expenses can a freelancer usually claim?",
        "How should I word a contract clause about late fees?",
        "What's a tidy way to track hours across projects?",
    ),
    "sensor_log": (
        "What temperature is best for storing wine?",
        "How do I stop mould in a cold room?",
        "Which smart home hubs work without the cloud?",
        "Can you explain dew point in simple terms?",
    ),
    "phone_bill": (
        "How do I check whether my phone is unlocked?",
        "What's a sensible screen time limit for me?",
        "Are SIM-only deals worth it?",
        "How can I make my mobile last another couple of years?",
    ),
    "gym": (
        "What's a good beginner programme for strength?",
        "How many rest days a week should I take?",
        "Can you suggest mobility drills for tight hips?",
        "Should I use a lifting belt?",
    ),
    "fuel": (
        "How often should tyre pressure be checked?",
        "What should I keep in the car for winter?",
        "Can you explain how a hybrid engine works?",
        "Any tips for a long road trip with kids?",
    ),
    "child_pickup": (
        "What are fun things to do with kids on a rainy afternoon?",
        "How can I help a child settle after a busy day?",
        "Could you suggest some lunchbox ideas?",
        "How do I encourage reading at home?",
    ),
    "cleaning_service": (
        "What gets coffee rings off a wooden table?",
        "What's a simple weekly chore chart for a household?",
        "Which houseplants are easy to keep alive?",
        "How can I declutter a spare room quickly?",
    ),
    "subscription": (
        "Could you recommend a few podcasts about history?",
        "What are some good audiobook platforms?",
        "How do I stop free trials turning into charges?",
        "Can you suggest a film for a family evening?",
    ),
    "water_intake": (
        "What are some caffeine-free warm drinks?",
        "How can I make a fruit-infused jug for the fridge?",
        "Is sparkling mineral better for you than still?",
        "What's a good bottle for cycling?",
    ),
    "dog_walk": (
        "How do I stop a dog pulling on the lead?",
        "What are safe treats for dogs?",
        "How often should I bathe a dog?",
        "Can you suggest brain games for an energetic pup?",
    ),
    "cloud_bill": (
        "How do I set up a static site cheaply?",
        "What's a good way to monitor uptime for a small website?",
        "Should I use a VPS or a managed platform for a hobby app?",
        "How do I move a domain to another registrar?",
    ),
    "tutoring": (
        "How can I help my child with exam nerves?",
        "What's a good revision timetable for a teenager?",
        "Could you recommend some books for learning a language?",
        "How do I make practice at home less of a battle?",
    ),
}

CONTENT_NOTES: dict[str, tuple[str, ...]] = {
    "rent": (
        "the letting agent says the owner wants to sell the flat",
        "a damp specialist is coming to look at the bedroom wall",
        "I got written notice that the tenancy ends in two months",
        "the building's lift has been condemned until further notice",
    ),
    "sleep": (
        "I've been prescribed a CPAP machine after the sleep study",
        "the baby has started sleeping through in her own room",
        "builders began drilling next door at seven",
        "I moved into the spare room because of a cold",
    ),
    "yoga": (
        "the teacher announced she's emigrating in the new year",
        "I pulled a hamstring in a forward fold",
        "they've brought in a class pass app and scrapped paper cards",
        "I'm going to start assisting at the beginners' course",
    ),
    "call_home": (
        "Mum's been told she needs a hip replacement",
        "my brother is getting divorced",
        "they've adopted a rescue greyhound",
        "the family home flooded in last week's storm",
    ),
    "electricity_bill": (
        "we had solar panels fitted on the roof",
        "the supplier has gone bust and our account is being moved",
        "an engineer found a fault in the fuse box",
        "we bought an electric car and charge it at home",
    ),
    "pharmacy_refill": (
        "the pharmacist flagged an interaction with my new antibiotic",
        "my GP switched me to a different brand after a reaction",
        "they've started offering home delivery for repeat prescriptions",
        "the prescription now needs a review before the next issue",
    ),
    "run": (
        "I went over on my ankle at the stile",
        "a new running club has started meeting at the park gates",
        "I signed up for a marathon in the spring",
        "the path is shut for bridge repairs from next week",
    ),
    "coffee_friend": (
        "they told me they're pregnant",
        "they've split up with their partner",
        "they got offered a job in Singapore",
        "the owners are selling up and the place may close",
    ),
    "weigh_in": (
        "I've been referred to a dietitian by the surgery",
        "I gave up sugar in drinks this week",
        "I've started a couch-to-5k plan",
        "the doctor wants me to lose weight before surgery",
    ),
    "groceries": (
        "the store is being refitted and half the aisles are shut",
        "I've switched to buying everything plant-based",
        "they've brought in scan-as-you-shop handsets",
        "my loyalty card was cancelled by mistake",
    ),
    "blood_pressure": (
        "the surgery wants me to wear a 24-hour monitor next week",
        "I've been told to cut back on liquorice",
        "the pharmacist doubled my ramipril",
        "I found out my dad had a stroke at my age",
    ),
    "glucose": (
        "the consultant is adding a weekly injection",
        "I've been diagnosed with gestational diabetes",
        "I switched to a low-carb diet on the nurse's advice",
        "I had a hypo at work yesterday afternoon",
    ),
    "heart_rate": (
        "the cardiologist has ordered an echocardiogram",
        "I started beta blockers this week",
        "I'm recovering from a bad bout of flu",
        "I've taken up open-water dips in the lake",
    ),
    "commute": (
        "the line will be closed for engineering works over the summer",
        "my team is relocating to a new building in the docks",
        "I've been given a parking space at work",
        "the company started a cycle-to-work scheme and I've signed up",
    ),
    "medication_dose": (
        "the specialist wants blood tests every three months",
        "I've been told to avoid grapefruit",
        "the surgery changed me to a slow-release version",
        "I noticed some dizziness when standing up",
    ),
    "deployment": (
        "we're freezing releases for the holiday period",
        "the team adopted trunk-based development this sprint",
        "an auditor is reviewing our change process",
        "the service is being split into two repos",
    ),
    "oncall_page": (
        "we've hired a dedicated SRE to own the alerts",
        "a postmortem found the root cause in a third-party DNS provider",
        "management is introducing on-call pay from next quarter",
        "I've been asked to lead the incident review",
    ),
    "invoice": (
        "the client has put all new work on hold",
        "they want ten percent knocked off future work",
        "I registered for VAT so the invoices look different now",
        "their accounts contact changed and I had to resend everything",
    ),
    "sensor_log": (
        "I replaced the battery pack with a mains adapter",
        "the sensor got knocked off the wall by the cat",
        "a new radiator was installed in there",
        "I added a leak detector beside it",
    ),
    "phone_bill": (
        "I reported my phone stolen and got a replacement SIM",
        "the carrier is merging with another network",
        "I switched to an eSIM on a new handset",
        "I've added my son to the family plan",
    ),
    "gym": (
        "my personal trainer is leaving the gym",
        "the place is going 24-hour from next month",
        "I tore a callus on my palm",
        "I entered an indoor rowing challenge",
    ),
    "fuel": (
        "the car failed its MOT on an emissions test",
        "I'm selling the car at the end of the month",
        "a stone chipped the windscreen on the motorway",
        "the tyre pressure light keeps coming on",
    ),
    "child_pickup": (
        "the school is closing early next week for teacher training",
        "a new crossing patrol lady started at the gate",
        "the class has a trip to the zoo on Friday",
        "they've been picked for the school play",
    ),
    "cleaning_service": (
        "they're retiring at the end of the year",
        "they brought a new trainee along",
        "they found a leak under the kitchen sink",
        "they've asked to switch to mornings from now on",
    ),
    "subscription": (
        "they've launched a cheaper student tier",
        "the app was removed from the TV's app store",
        "my account got hacked and I changed the password",
        "they're bundling it with a phone contract now",
    ),
    "water_intake": (
        "the kettle broke and I've been living on bottled stuff",
        "the nurse wants me to record fluids for my kidneys",
        "I got one of those jugs with a carbon cartridge",
        "the office water cooler has been removed",
    ),
    "dog_walk": (
        "the vet wants to weigh the dog again in a month",
        "a new off-lead area has opened by the river",
        "the dog got stung on the nose by a wasp",
        "we hired a walker for the days I'm in the office",
    ),
    "cloud_bill": (
        "the host emailed about a price rise from next quarter",
        "I enabled automated nightly snapshots",
        "a traffic spike came from a post going viral",
        "I'm planning to move everything to a cheaper provider",
    ),
    "tutoring": (
        "the tutor is going on maternity leave",
        "the school flagged a possible learning difficulty",
        "we've booked a mock exam for next month",
        "they're moving lessons to a local library room",
    ),
}

MISC: tuple[str, ...] = (
    "Finally fixed the [wobbly table leg|sticky drawer|squeaky hinge] with [a bit of "
    "glue|some WD-40|a wedge of card].",
    "[Aunt Mo|My old flatmate|Rosa from work] is [getting married|moving to "
    "Bristol|starting a bakery] — [exciting!|who knew|good for her].",
    "Started a [1000-piece jigsaw|cross-stitch|model railway] [of a lighthouse|on the "
    "dining table|with the kids].",
    "Book club pick: [Anna Karenina|a thriller set in Oslo|a memoir by a chef]. "
    "[Not sure about it.|Already hooked.|Halfway in.]",
    "The [clocks went forward|clocks went back|heating came on] and I'm all [out of "
    "sync|confused|muddled].",
    "Note: [nan's|Kit's|Pat's] birthday is [next month|in June|soon]. Get a card.",
    "Visited [the botanic gardens|a castle ruin|an old mill] — [gorgeous|windy|full of tourists].",
    "[Fox|Badger|Deer] spotted [in the lane|at the end of the road|by the bins] "
    "[at dusk|late on|this evening].",
    "Bought [seed potatoes|a new trowel|a bag of compost] at the garden centre.",
    "Jotting down: [paint colour for the hall is 'Pebble'|shelf bracket size M6|the "
    "locksmith's number is on the fridge].",
    "Cinema: [the new Pixar one|an arthouse thing|a re-release of Jaws] — [loved it|meh|fell "
    "asleep halfway].",
    "[Sam|Grandma|My nephew] taught me [a card trick|how to knit|a new word game].",
    "Knitting [a scarf|a hat|socks] for [winter|a friend|the charity stall]; [on row "
    "40|dropped a stitch|nearly done].",
    "Went to a [car boot sale|vintage fair|makers' market] and came home with [a teapot|an "
    "old map|a wicker basket].",
    "Birthday party for [Ollie|Nina|the neighbour's boy] — [bouncy castle|magician|pizza] "
    "went down a storm.",
    "The [kitchen tap|bathroom light|loft hatch] is [dripping|flickering|stuck] again. Must sort.",
    "Museum trip: [dinosaurs|Egyptian stuff|old locomotives] with [the family|a friend|my cousin].",
    "Attempted [macarons|croissants|a soufflé]; [disaster|edible|surprisingly good].",
    "[Stargazing last night — saw Jupiter|Moth trapping at the weekend — dozens "
    "in the box|Fossil hunting on holiday — found an ammonite].",
    "Idea for a present: [a silk scarf|a fountain pen|a star map] for [Dee|the "
    "neighbour|my godmother].",
    "Got [a library card|a fishing licence|a national trust pass] at long last.",
    "Heard [a cuckoo|an owl|woodpeckers] [in the woods|from the garden|across the field].",
    "Rearranged the [bookshelves by colour|spice rack|sock drawer], very satisfying.",
    "[Ivy|Mark|The Okafors] invited us for [a barbecue|Sunday lunch|board games] "
    "[soon|later this month|at Easter].",
    "[Bike|Lawnmower|Sewing machine] needs a [service|once-over|spare part] before "
    "[summer|next month|spring].",
    "Quiz night tally: [came third|won a bottle of wine|came last but laughed a lot].",
    "Re-read [Pride and Prejudice|The Hobbit|an old Agatha Christie] on a whim.",
    "Painted [the shed|a garden chair|the front door] [sage green|navy|a cheerful yellow].",
    "Learnt that [octopuses have three hearts|honey never spoils|bananas are "
    "berries], fun fact of the day.",
    "A [hot air balloon|vintage plane|flock of geese] flew [right over the "
    "house|past the window|low over the hill].",
    "Tidied the [loft|under-stairs cupboard|garage shelves] and found [old "
    "postcards|a tennis racket|my first mobile].",
    "Thinking of [a weekend in Edinburgh|a walking holiday|a trip to see the "
    "northern lights] [next year|in the autumn|some day].",
    "Made a [birthday card|photo album|scrapbook] for [Lily|my sister|an old teacher].",
    "[Fog|Hail|Thunder] [for an hour|around tea time|in the night] — "
    "[eerie|kids loved it|very dramatic].",
    "Local [fête|carnival|food festival] [this weekend|next Saturday|later in the month]; "
    "[might go|said I'd help|tickets bought].",
)
