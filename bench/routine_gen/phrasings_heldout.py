"""Heldout split: entry families, questions, content notes and misc memories.

Same layout and conventions as phrasings_tune.py. Keep this wording out of every other file:
the detector's developer may read the tune module only. This split's wording was written
without looking at the detector.
"""

FAMILIES: dict[str, tuple[str, ...]] = {
    "rent": (
        "Rent's done for this month. {payee} got {amount}.",
        "Standing rent payment to {payee} cleared: {amount:code}.",
        "{amount:codeafter} paid over to {payee} for rent.",
        "Sorted rent with {payee} ({amount:round}).",
        "Note: paying {payee} {amount} for the flat this month.",
    ),
    "sleep": (
        "Total sleep {sleep:hm}, asleep by {bed:pm}.",
        "Clocked {sleep:hours} of sleep overnight.",
        "Woke up after {sleep:words} of sleep.",
        "Bedtime {bed:24} / sleep {sleep:hm}",
        "My sleep app has last night at {sleep:hours}.",
    ),
    "yoga": (
        "Attended {style} at {studio} (teacher: {teacher}), {dur:min}.",
        "{teacher} took us through {dur:minutes} of {style} at {studio}.",
        "{dur:hm} on the mat at {studio} with {teacher}.",
        "Weekly yoga done — {studio}, {teacher}, {dur:mins}.",
        "Tonight's class at {studio} ran {dur:min}; {teacher} taught {style}.",
    ),
    "call_home": (
        "On the phone with {person} for {dur:min} tonight.",
        "{dur:minutes} chatting with {person}.",
        "Caught up with {person} by phone ({dur:hm}).",
        "Call to {person} lasted {dur:mins}.",
        "Evening call — {person} — {dur:words}.",
    ),
    "electricity_bill": (
        "{provider} took {amount} by direct debit for last month's power.",
        "This month's electricity: {kwh:long} and {amount:code}, billed by {provider}.",
        "Got the power bill. {provider}, {amount}.",
        "{kwh:u} → {amount} ({provider} elec)",
        "Electricity costs came to {amount:round} this month with {provider}.",
    ),
    "pharmacy_refill": (
        "{copay} for the {med} at {pharmacy} today.",
        "Went by {pharmacy} for the monthly {med}; paid {copay}.",
        "Med pickup: {med} / {pharmacy} / {copay:code}.",
        "The {med} refill is sorted ({pharmacy}, {copay}).",
        "Stopped at {pharmacy} for a fresh supply of {med} — {copay:round}.",
    ),
    "run": (
        "Out on {route} for {dist} ({time:hms}).",
        "{dist:long} along {route} — time {time:hms}.",
        "Strava: {dist:u}, {time:hms}, {route}.",
        "Today's run took {time:mins}: {dist} on {route}.",
        "Jogged {route}, {dist}, {time:hms}.",
    ),
    "coffee_friend": (
        "Sat with {friend} at {cafe} for {dur:min} over coffee.",
        "Coffee date with {friend} at {cafe} ran {dur:mins}; I paid {spent}.",
        "Weekly coffee at {cafe} ({friend}), {dur:hm}.",
        "Two cappuccinos at {cafe} with {friend}, {dur:minutes} in total.",
        "{cafe}, {friend}, {dur:words}.",
    ),
    "weigh_in": (
        "Weekly weight check came out at {weight}.",
        "Body weight {weight:long}, fat {fat}.",
        "{weight:u} at the weekly weigh-in.",
        "The scale read {weight} after breakfast.",
        "Weigh-in logged ({weight}).",
    ),
    "groceries": (
        "Grocery receipt from {store} says {amount}.",
        "Bought {items:w} at {store}, paid {amount}.",
        "{store:cap} groceries = {amount}",
        "Stocked up at {store} this week for {amount:round}.",
        "The weekly grocery trip ({store}) came to {amount:code}.",
    ),
    "blood_pressure": (
        "Systolic {bp:sys}, diastolic {bp:dia}, pulse {pulse:n}.",
        "Today's BP: {bp:over}.",
        "Logged a {bp} reading this morning.",
        "{bp:mm} on the home monitor.",
        "Pressure came out {bp} with a pulse of {pulse:n}.",
    ),
    "glucose": (
        "Blood glucose on waking, {glucose}.",
        "Meter says {glucose} this morning.",
        "{glucose:n} on the glucometer before eating.",
        "Pre-breakfast sugar level: {glucose}.",
        "Did the fasting check: {glucose}.",
    ),
    "heart_rate": (
        "According to {device}, resting HR is {hr} today.",
        "{hr:n} bpm resting overnight ({device}); HRV {hrv}.",
        "Resting pulse {hr}, read off {device}.",
        "{device:cap} logged {hr} as my resting rate.",
        "HR at rest: {hr} — source {device}.",
    ),
    "commute": (
        "{dur:min} on {line} to get in today.",
        "Travelled to work by {line} ({dur:hm}).",
        "Door to desk via {line}: {dur:mins}.",
        "Work commute logged, {line}, {dur:minutes}.",
        "Reached the office on {line} — {dur:words} all told.",
    ),
    "medication_dose": (
        "Today's {med} dose was {dose}.",
        "{dose} of {med} down.",
        "Pill taken: {med} {dose:u}.",
        "Medication check: {med} ({dose}) taken at breakfast.",
        "Took the daily {med}, {dose:long}.",
    ),
    "deployment": (
        "Production rollout: {service} {version}, {region}, {dur:min}.",
        "{service} is now on {version} in {region} (deploy took {dur:mins}).",
        "Cut {version} for {service} and deployed it to {region} in {dur:hm}.",
        "CD pipeline finished {service} {version} to {region}: {dur:m}.",
        "Another {service} deploy ({version}) to {region}, {dur:words}.",
    ),
    "oncall_page": (
        "{source} woke me up {pages:n} times during this on-call week.",
        "Rotation handoff notes: {pages} from {source}, ack time ~{ack:m}.",
        "Got {pages} over the on-call week, the alerts coming from {source}.",
        "Incidents this shift: {pages:n} ({source}).",
        "Pager tally for the week — {pages:w}, {source}.",
    ),
    "invoice": (
        "{client} has been invoiced {amount} ({inv}).",
        "This month's billing for {client}: {hours} at my usual rate, {amount:code}.",
        "Sent {client} the {amount:k} invoice.",
        "Issued invoice no. {inv:n} to {client} — {amount}.",
        "Put {hours:long} on the {client} invoice; it comes to {amount}.",
    ),
    "sensor_log": (
        "{sensor:cap} thermometer reads {temp} with {hum} humidity.",
        "Logged the {sensor} climate: {temp:n} degrees, {hum:n} percent.",
        "6am {sensor} check → {temp}, RH {hum}.",
        "Humidity {hum} and temperature {temp} in the {sensor}.",
        "The {sensor} sensor reported {temp} (battery {batt}).",
    ),
    "phone_bill": (
        "{carrier} took {amount} for the phone.",
        "Monthly mobile charge, {carrier}: {amount:code} ({data} used).",
        "My phone bill came to {amount} ({carrier}).",
        "{data:u} of data and a {amount} bill from {carrier}.",
        "Settled the {carrier} mobile bill, {amount:round}.",
    ),
    "gym": (
        "{dur:min} session at {gym}, bench {lift}.",
        "Put in {dur:minutes} at {gym}.",
        "Strength day at {gym}: {dur:hm}, {lift:u} squat.",
        "Gym ({gym}) for {dur:words}.",
        "{gym:cap} workout logged — {dur:mins}.",
    ),
    "fuel": (
        "{litres} into the tank at {station}, cost {amount}.",
        "Fuel stop, {station}: {amount:code} ({litres:u}).",
        "Car filled at {station} — {litres:long} at {price} per {litres:unit}.",
        "Pump receipt from {station}: {litres}, {amount}.",
        "Gassed up at {station}, {amount:round}, {litres}.",
    ),
    "child_pickup": (
        "{child} is home; collected from {place} at {time:24}.",
        "Did the {place} run for {child}, {time:pm}.",
        "{child}'s pickup from {place} was at {time}.",
        "Met {child} at the gate of {place} at {time:dot}.",
        "Pickup log: {place}, {child}, {time:hhmm}.",
    ),
    "cleaning_service": (
        "Had {cleaner} in for {hours:hours} today ({amount}).",
        "{hours:hm} clean from {cleaner}, {amount:code} paid.",
        "Our cleaner {cleaner} came by: {hours:words}, {amount}.",
        "Settled up with {cleaner} after the clean — {amount} for {hours:hrs}.",
        "Clean done by {cleaner}. Time {hours:hmin}, cost {amount:round}.",
    ),
    "subscription": (
        "{service} {plan} auto-renewed for {amount}.",
        "Another month of {service}, {amount:code}.",
        "Bank shows {amount} to {service} ({plan}).",
        "Renewal: {service} / {plan} / {amount}.",
        "The {service} plan ({plan}) took {amount} off my card.",
    ),
    "water_intake": (
        "{water} of water logged.",
        "Drank {glasses:w} of water, {water} in all.",
        "Hydration for the day came to {water:alt}.",
        "Water count: {water:u}.",
        "Had {water} of water across the day.",
    ),
}

QUESTIONS: dict[str, tuple[str, ...]] = {
    "rent": (
        "Is there a good way to budget for rent and bills together?",
        "Can you help me plan my spending until the next payday?",
    ),
    "sleep": (
        "How should I plan tomorrow so I'm not exhausted?",
        "What's a good caffeine cut-off time for better sleep?",
    ),
    "yoga": (
        "How can I make my hips less stiff this week?",
        "Could you suggest a short breathing exercise to do before yoga?",
    ),
    "call_home": (
        "Can you help me plan a visit home next month?",
        "Any ideas for making family phone chats less one-sided?",
    ),
    "electricity_bill": (
        "How can I lower my electricity costs this winter?",
        "Could you give me some tips for keeping the house warm cheaply?",
    ),
    "pharmacy_refill": (
        "What's the best way to store medicines at home?",
        "How early should I order a refill before I run out?",
    ),
    "run": (
        "How do I avoid shin splints when I run more?",
        "Could you suggest a warm-up routine for before I head out?",
    ),
    "coffee_friend": (
        "How do I make a good coffee at home?",
        "Can you suggest a quiet spot in town for a long chat?",
    ),
    "weigh_in": (
        "How do I stop snacking in the evenings?",
        "What's a sensible target weight for my height?",
    ),
    "groceries": (
        "How can I make my grocery budget stretch further?",
        "Any ideas for packed lunches for the week?",
    ),
    "blood_pressure": (
        "Could you suggest ways to relax after work?",
        "Which foods are good for keeping pressure in check?",
    ),
    "glucose": (
        "Could you plan a week of dinners that are easy on carbs?",
        "What snacks keep my sugar level steady when I'm out?",
    ),
    "heart_rate": (
        "Could you explain what zone 2 training is?",
        "Does caffeine affect my resting pulse much?",
    ),
    "commute": (
        "Could you help me plan my day in the office tomorrow?",
        "What's a good audiobook for the ride in?",
    ),
    "medication_dose": (
        "Can I have grapefruit juice with breakfast?",
        "How should I plan my medication for a week away?",
    ),
    "deployment": (
        "Could you suggest a checklist for a Friday deploy?",
        "What's a good way to announce downtime to customers?",
    ),
    "oncall_page": (
        "How should I plan my week around the rota?",
        "What are good ways to cut down on alerts?",
    ),
    "invoice": (
        "Could you draft a polite payment-terms note to go with an invoice?",
        "How much should I set aside for tax each month?",
    ),
    "sensor_log": (
        "What's a comfortable temperature to keep the house at?",
        "Could you help me plan the garden for spring?",
    ),
    "phone_bill": (
        "How much mobile data does video calling use?",
        "Could you help me compare plans for my next contract?",
    ),
    "gym": (
        "Could you suggest a stretching routine for after the gym?",
        "How many sets should I do per muscle each week?",
    ),
    "fuel": (
        "Is it worth going electric for my next car?",
        "Could you plan a day out within an hour's drive?",
    ),
    "child_pickup": (
        "What are good rainy-day activities for children?",
        "Any tips for making the school pickup less hectic?",
    ),
    "cleaning_service": (
        "How often should I wash the bedding?",
        "What should I do before the cleaner comes?",
    ),
    "subscription": (
        "Is it worth moving to a cheaper plan on any of my streaming services?",
        "Which of my regular costs should I look at cutting first?",
    ),
    "water_intake": (
        "How do I stop getting headaches at work?",
        "How much water should I aim for on a hot day?",
    ),
}

CONTENT_NOTES: dict[str, tuple[str, ...]] = {
    "rent": (
        "I noticed my deposit is no longer listed on the tenancy portal",
        "the letting agent mentioned they're putting the house on the market",
    ),
    "sleep": (
        "my partner says I stopped breathing for a few seconds",
        "woke up with a pounding headache",
    ),
    "yoga": (
        "my left knee clicked painfully in pigeon pose",
        "they announced the class is moving to mornings",
    ),
    "call_home": (
        "they said the car was written off in a crash",
        "they've stopped going to the community centre",
    ),
    "electricity_bill": (
        "a note says my supply will be moved to a prepayment meter",
        "the bill has someone else's name on it",
    ),
    "pharmacy_refill": (
        "the box was half empty when I opened it",
        "they said my prescription has run out and needs renewing",
    ),
    "run": (
        "twisted my ankle on a tree root",
        "a dog chased me for a good hundred metres",
    ),
    "coffee_friend": (
        "they've been made redundant",
        "they mentioned they're expecting a baby",
    ),
    "weigh_in": (
        "my GP wants me to get a blood test",
        "I've had no appetite for days",
    ),
    "groceries": (
        "also bought a home COVID test",
        "I ran into my old boss at the checkout",
    ),
    "blood_pressure": (
        "chest felt tight while I was sitting there",
        "dizziness when I stood up afterwards",
    ),
    "glucose": (
        "my vision went blurry for a while",
        "noticed a cut on my foot that isn't healing",
    ),
    "heart_rate": (
        "woke up breathless around 4am",
        "I've started a course of beta blockers",
    ),
    "commute": (
        "a man collapsed on the platform and we waited for the paramedics",
        "the route is being closed for roadworks from next week",
    ),
    "medication_dose": (
        "I felt sick about an hour later",
        "the pharmacy swapped the brand without saying",
    ),
    "deployment": (
        "customers reported logins failing for a few minutes",
        "one node came back with a different kernel version",
    ),
    "oncall_page": (
        "we lost about an hour of orders during one outage",
        "the backup job has been silently failing for weeks",
    ),
    "invoice": (
        "they mentioned budget cuts next quarter",
        "their finance person asked me to re-issue it under a different company name",
    ),
    "sensor_log": (
        "the sensor reported a power cut around midnight",
        "a mouse set off the trap next to it",
    ),
    "phone_bill": (
        "a new line has been added to my account",
        "someone tried to port my number to another network",
    ),
    "gym": (
        "nearly passed out on the rowing machine",
        "saw a sign saying the pool is closing for good",
    ),
    "fuel": (
        "there's been a fuel smell in the car since",
        "the engine stalled twice on the way home",
    ),
    "child_pickup": (
        "they said another parent tried to collect them",
        "there was a letter about a change of headteacher",
    ),
    "cleaning_service": (
        "the spare key has been missing from the hook since the visit",
        "they asked to be paid in cash from now on",
    ),
    "subscription": (
        "the renewal used an old card I thought was cancelled",
        "my account was switched to an annual plan",
    ),
    "water_intake": (
        "my feet are swelling up in the evenings",
        "the water filter jug cracked",
    ),
}

MISC: tuple[str, ...] = (
    "Finally hung the [mirror|pictures|shelf] in the hallway.",
    "Went [birdwatching|fossil hunting|rock pooling] on the coast.",
    "A parcel for the [neighbours|people upstairs] was left with us.",
    "Picked [blackberries|apples|elderflowers] along the lane.",
    "Caught the end of a [street festival|brass band concert|puppet show] in the square.",
    "My [cousin|old flatmate] sent photos from their trip to [Chile|Vietnam|Iceland].",
    "Rearranged the [living room|bedroom|study] furniture.",
    "Bought [a new kettle|a set of glasses|some cushions] for the flat.",
    "Joined a [book club|chess club|choir] that meets on Thursdays.",
    "Wrote down some ideas for a [short story|radio play|children's book].",
    "The [council|city] is repaving our street.",
    "Visited a [castle|botanical garden|science museum] with friends.",
    "Tried making [kimchi|a sourdough starter|marmalade].",
    "Swapped a few [plants|books|board games] with a colleague.",
    "Cleared out old [emails|photos|files] from my laptop.",
    "Watched the [football|tennis|rugby] on TV with friends.",
    "Found an old [diary|photo album|school report] in a box.",
    "Got a [new haircut|fringe trim|beard trim].",
    "Spent the afternoon [sketching in the park|at a vintage fair|browsing an antiques shop].",
    "Lent my [drill|ladder|tent] to the people next door.",
)
