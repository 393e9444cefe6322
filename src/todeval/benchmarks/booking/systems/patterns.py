"""Regular expressions the rule system's language understanding is built from.

All patterns run on normalised text (:func:`~.text.normalise_text`: lower case, no apostrophes).
They are grouped by job: domain cues, slot words for "don't care", requests, dialogue acts,
train time cues, station cues and what the *system* asked (for reading corpus system turns).
"""

from __future__ import annotations

import re

RESTAURANT, HOTEL, TRAIN = "restaurant", "hotel", "train"
DOMAINS = (RESTAURANT, HOTEL, TRAIN)

DOMAIN_CUES: dict[str, re.Pattern[str]] = {
    RESTAURANT: re.compile(
        r"\b(?:restaurants?|restuarants?|resturants?|restaraunts?|restaurnt|restraunts?|"
        r"place to (?:eat|dine)|somewhere to (?:eat|dine)|food|eat|eating|dine|dining|dinner|"
        r"lunch|brunch|supper|tables?|cuisine|meals?|eatery|bite to eat)\b"
    ),
    HOTEL: re.compile(
        r"\b(?:hotels?|guesthouses?|guest houses?|place to stay|somewhere to stay|where to stay|"
        r"places to stay|accommodations?|accomodations?|lodgings?|"
        r"(?:a|the|book|double|single|family|twin|hotel|my|our) rooms?|stay|staying|nights?|"
        r"check in|checking in|motel|dungeons?|wormholes?)\b"
    ),
    TRAIN: re.compile(
        r"\b(?:trains?|tickets?|rail|railway|station|journey|travell?ing|travel|commute|"
        r"depart|departing|departure|leaving from)\b"
    ),
}

# Train cues that are ordinary verbs ("I'm travelling alone"): not a cue for the party size.
TRAVEL_WORD = re.compile(r"travell?ing|travel|journey|commute")

# Words naming a slot, for "any area", "the price doesn't matter", "no preference on stars".
SLOT_WORDS: dict[str, str] = {
    "area": r"areas?|location|part of (?:town|the city)|side of (?:town|the city)|neighbou?rhood|"
    r"region|part of cambridge",
    "pricerange": r"price ?ranges?|prices?|pricing|cost|budget|price point",
    "food": r"food|cuisine|type of (?:food|cuisine|restaurant)|kind of (?:food|cuisine)",
    "stars": r"stars?|star ratings?|ratings?",
    "type": r"(?:type|kind|sort|category) of (?:hotel|accommodations?|lodging|place|stay|room)|"
    r"hotel type|accommodation type|type",
    "internet": r"internet|wifi",
    "parking": r"parking",
    "leaveat": r"departure time|departure hour|leaving time|leave time|time i leave|when i leave|"
    r"departure|time of departure|time (?:it|the train|that it|that the train) (?:leaves|departs|"
    r"sets off)|when (?:it|the train) (?:leaves|departs)|time to leave|time i depart",
    "arriveby": r"arrival time|arrival hour|time i arrive|when i arrive|arrival|time of arrival|"
    r"time (?:it|the train|that it|that the train) (?:arrives|gets in|gets there)|when (?:it|the "
    r"train) (?:arrives|gets in|gets there)|time i get there",
    "day": r"day",
}
SLOT_DOMAINS: dict[str, tuple[str, ...]] = {
    "area": (RESTAURANT, HOTEL),
    "pricerange": (RESTAURANT, HOTEL),
    "food": (RESTAURANT,),
    "name": (RESTAURANT, HOTEL),
    "stars": (HOTEL,),
    "type": (HOTEL,),
    "internet": (HOTEL,),
    "parking": (HOTEL,),
    "stay": (HOTEL,),
    "time": (RESTAURANT,),
    "day": (RESTAURANT, HOTEL, TRAIN),
    "people": (RESTAURANT, HOTEL, TRAIN),
    "departure": (TRAIN,),
    "destination": (TRAIN,),
    "leaveat": (TRAIN,),
    "arriveby": (TRAIN,),
}
INFORMABLE_FOR_DONTCARE = ("area", "pricerange", "food", "stars", "type", "internet", "parking",
                           "leaveat", "arriveby")  # fmt: skip

_NEG = r"(?:doesnt|does not|dont|do not|wont|will not|didnt|does ?nt)"
DONTCARE_SLOT_PATTERNS: tuple[str, ...] = (
    r"\b(?:any|whatever|whichever|any old|all)\s+(?:kind of\s+|type of\s+|sort of\s+)?(?P<s>{w})\b"
    r"(?!\s+(?:is|are)\s+(?:ok|okay|fine)\b(?=\s+(?:but|if)))",
    r"\b(?P<s>{w})\s+(?:really\s+|actually\s+)?" + _NEG + r"\s+(?:really\s+)?(?:matter|concern)",
    r"\b(?P<s>{w})\s+(?:is|are|isnt|arent)\s+(?:not\s+)?(?:really\s+)?(?:not\s+)?"
    r"(?:important|a concern|an issue|relevant|a priority|a big deal)\b(?<!is important)"
    r"(?<!are important)",
    r"\b" + _NEG + r"\s+(?:really\s+|particularly\s+)?(?:care|mind|worry)\s+(?:about|for|on|"
    r"regarding|what|which|where|too much about)?\s*(?:the\s+|a\s+|its\s+|their\s+)?"
    r"(?:(?:price|star|food)\s+)?(?P<s>{w})\b",
    r"\b"
    + _NEG
    + r"\s+(?:really\s+)?(?:have|got)\s+(?:a|any)\s+(?:particular\s+|specific\s+|real\s+)?"
    r"(?:preference|preferences)\s+(?:for|on|about|regarding|as to|in|with|of)\s+"
    r"(?:the\s+|a\s+|which\s+|what\s+)?(?:(?:price|star)\s+)?(?P<s>{w})\b",
    r"\bno\s+(?:particular\s+|specific\s+|real\s+)?(?:preference|preferences)\s+(?:for|on|about|"
    r"regarding|as to|in|with|of)\s+(?:the\s+|a\s+)?(?:(?:price|star)\s+)?(?P<s>{w})\b",
    r"\b(?P<s>{w})\s*(?:-|:|,)?\s*(?:no preference|doesnt matter|dont care|not important|any)\b",
    r"\b(?P<s>{w})\s+(?:is|are)\s+(?:flexible|open|negotiable|up to you|your call|not a concern)\b",
    r"\b(?:im|i am|were|we are)\s+(?:pretty\s+|quite\s+|very\s+)?(?:flexible|open)\s+(?:on|about|"
    r"with|regarding|as to)\s+(?:the\s+)?(?P<s>{w})\b",
    r"\bnot\s+(?:picky|fussy|particular)\s+(?:about|on|with)\s+(?:the\s+)?(?P<s>{w})\b",
    r"\b(?:unsure|not sure)\s+(?:about|of)\s+(?:the\s+)?(?P<s>{w})\b",
)
GENERIC_DONTCARE = re.compile(
    r"\b(?:doesnt (?:really )?matter|does not (?:really )?matter|doesn ?t matter|dont care|"
    r"do not care|no preferences?|not important|any (?:is|are|would be|will be) (?:fine|ok|okay|"
    r"good)|anything (?:is|would be|will be) fine|either (?:is|one is|would be|will be|one would"
    r" be) (?:fine|ok|okay|good)|either (?:one|way)|any (?:of them|one|will do)|surprise me|"
    r"(?:thats |its )?up to you|your (?:choice|pick|call)|you (?:choose|pick|decide)|"
    r"dont mind|do not mind|not picky|im flexible|i am flexible|whatever you (?:recommend|"
    r"suggest|think|like|prefer)|no particular|any is fine|not really|doesnt really matter)\b"
)
ANYWHERE = re.compile(
    r"\b(?:anywhere|any where|wherever|any ?place (?:suits|is fine|works|will do)|(?:dont|do not)"
    r" (?:care|mind) where|(?:doesnt|does not) matter where)\b"
)

# Requests for venue or train attributes.
REQUESTS: dict[str, re.Pattern[str]] = {
    "phone": re.compile(
        r"\b(?:phone|telephone|contact number|phone ?numbers?|(?<!reference )(?<!confirmation )"
        r"(?<!booking )(?<!train )(?<!ref )(?:their|its|the) numbers?(?! of))\b"
    ),
    "address": re.compile(r"\b(?:address(?:es)?|street address|where (?:is it|it is) located)\b"),
    "postcode": re.compile(r"\b(?:post ?codes?|postal codes?|zip ?codes?|zip)\b"),
    "price": re.compile(
        r"\b(?:ticket prices?|price of (?:the |a )?(?:ticket|train|fare|trip)|fares?|how much|"
        r"costs?|prices?)\b(?!\s*ranges?)(?!\s+(?:point|is not|isnt|doesnt|does not|range|matters?|"
        r"wise))"
    ),
    "duration": re.compile(
        r"\b(?:duration|travel ?time|journey time|trip time|ride time|how long|length of the "
        r"(?:trip|journey|ride)|total time|travelling time|traveling time)\b"
    ),
    "reference": re.compile(
        r"\b(?:reference|ref|confirmation (?:number|code|no)|booking (?:number|code)|"
        r"reservation (?:number|code))\b"
    ),
    "trainid": re.compile(
        r"\b(?:train (?:id|ids|number|no)|trainid|which train|id of the train)\b"
    ),
    "arriveby": re.compile(
        r"\b(?:arrival time|time (?:does it|will it|it will|would it) arrive|when (?:does|will|"
        r"would) (?:it|the train|that train|that) (?:arrive|get in)|arrive what time)\b"
    ),
    "leaveat": re.compile(
        r"\b(?:departure time|time (?:does it|will it|it will|would it) (?:leave|depart)|when "
        r"(?:does|will|would) (?:it|the train|that train|that) (?:leave|depart))\b"
    ),
}
REQUEST_DOMAINS: dict[str, tuple[str, ...]] = {
    "phone": (RESTAURANT, HOTEL),
    "address": (RESTAURANT, HOTEL),
    "postcode": (RESTAURANT, HOTEL),
    "price": (TRAIN,),
    "duration": (TRAIN,),
    "trainid": (TRAIN,),
    "arriveby": (TRAIN,),
    "leaveat": (TRAIN,),
    "reference": DOMAINS,
}
PRICE_NOT_REQUEST = re.compile(
    r"(?:cheap|moderate|moderately|expensive|reasonable|low|high|same|any|mid|medium|"
    r"average|in the|budget|lower|higher|similar|a|what)\s*$"
)

ACTS: dict[str, re.Pattern[str]] = {
    "affirm": re.compile(
        r"^\W*(?:yes|yeah|yea|yep|yup|sure|ok|okay|alright|all right|sounds (?:good|great|"
        r"perfect|fine|lovely)|that (?:sounds|works|would be (?:great|fine|good|perfect|lovely)|"
        r"will be (?:great|fine|good|perfect)|will do|is fine|one (?:is fine|works|sounds|please|"
        r"will do|is perfect|is good)|one\s*[.!]*$)|perfect|great|"
        r"please do|go ahead|absolutely|definitely|of course|correct|fine|excellent|"
        r"wonderful|awesome|lovely|yes please)\b"
    ),
    "negate": re.compile(r"^\W*(?:no|nope|nah|not really|not yet|no thanks?|no thank you)\b"),
    "thank": re.compile(r"\b(?:thanks?|thank you|thankyou|cheers|appreciate|grateful)\b"),
    "bye": re.compile(
        r"\b(?:bye|goodbye|good bye|farewell|have a (?:nice|good|great|wonderful) (?:day|"
        r"evening|night|one)|(?:thats|that is|that will be|that would be|this is) (?:all|it|"
        r"everything)|nothing (?:else|more)|all (?:set|i need|i needed)|no more|thats about it|"
        r"i am all set|im all set|im done|i am done|that should be all|all for now)\b"
    ),
    "book": re.compile(
        r"\b(?:book|books|booked|booking|reserve|reserved|reservation|reservations|get me (?:a|"
        r"the|some)? ?(?:table|room|tickets?|seats?)|make it for|purchase|buy)\b"
    ),
    "alternative": re.compile(
        r"\b(?:another (?:one|option|place|hotel|restaurant|train|guesthouse|venue|choice)|"
        r"(?:a |some )?different (?:one|place|hotel|restaurant|train|option|venue|guesthouse)|"
        r"something else|other options?|any others|other ones|anything else (?:available|"
        r"similar|like that)|(?:an|any) ?other (?:one|place|hotel|restaurant|train|guesthouse))\b"
    ),
}

# "I'll book it myself later", "I will sort out the booking elsewhere": no booking request.
NOT_BOOK = re.compile(
    r"\b(?:book(?:ing)?|reserve|sort (?:it|this|that) out)\b[^.!?]{0,20}\b(?:myself|later|"
    r"elsewhere|another way|some other way|online|on my own)\b|\b(?:dont|do not|wont|will not|"
    r"no need to|not) (?:book|reserve|make (?:a|the) (?:booking|reservation))\b"
)

# Train time cues: the last one before a time decides leaveat vs arriveby. Where a leave cue and
# an arrive cue overlap ("no earlier than" holds "earlier than"), the longer one counts.
LEAVE_CUE = re.compile(
    r"\b(?:leave|leaves|leaving|depart|departs|departing|departure|go|goes|going|get going|"
    r"after|later than|no earlier than|not earlier than|no sooner than|not before|not leaving "
    r"before|not leave before|starting at|starting from|set off|sets off|setting off|head out|"
    r"heading out|pick up|from|earliest|at the earliest|any ?time after|sometime after|"
    r"some ?time after|onwards? from|beginning at|no earlier|at or after)\b"
)
ARRIVE_CUE = re.compile(
    r"\b(?:arrive|arrives|arriving|arrival|get there|gets there|getting there|get in|gets in|"
    r"gets? (?:me|us) (?:there|in|into|to)|getting (?:me|us) (?:there|in|into|to)|"
    r"getting in|get into|get to|gets to|getting to|be there|be in|reach|reaches|reaching|by|"
    r"before|no later than|not later than|not after|until|till|prior to|earlier than|latest|"
    r"there at|in \w+ at|in \w+ by|at or before|at the latest|no later)\b"
)
LEAVE_SUFFIX = re.compile(
    r"^\s*(?:or later|or after|onwards|or so onwards|at the earliest|or thereafter|and later)\b"
)
ARRIVE_SUFFIX = re.compile(r"^\s*(?:or earlier|or before|at the latest|latest|or sooner)\b")

# Station cues: what stands right before (or after) a station name.
DEPARTURE_BEFORE = re.compile(
    r"(?:\bfrom|\bleaving|\bleave|\bleaves|\bdepart|\bdeparts|\bdeparting|\bdeparture|"
    r"\bdeparture (?:station|point|location|city|place)|\bout of|\bstarting|\bstart|\bstarting in|"
    r"\bcoming from|\bdeparting from|\bleaving from|\bdepartures?(?: from)?|\bboard|\bboarding)"
    r"(?:\s+(?:is|will be|would be|should be|at|in|from|of|station|point))?(?:\s+the)?\s*$"
)
DESTINATION_BEFORE = re.compile(
    r"(?:\bto|\binto|\btowards?|\bfor|\breach|\barrive|\barrives|\barriving|\barrival|"
    r"\bget to|\bgo to|\bgoing to|\bgoing|\bheaded|\bheading|\bbound for|\bdestination|"
    r"\btravell?ing to|\bin|\bend up in|\bgets? in|\bback to|\bvisit|\bvisiting|\bget into|"
    r"\bgo into)(?:\s+(?:is|will be|would be|should be|at|in|to|for|into|station|point|of))?"
    r"(?:\s+the)?\s*$"
)

# What a (corpus) system turn asks for.
SYSTEM_ASKS: dict[str, re.Pattern[str]] = {
    "people": re.compile(
        r"\b(?:how many (?:people|guests|persons|tickets|seats|in your (?:party|group)|will be|"
        r"are in|of you|travell?ers|passengers)|for how many|party size|number of (?:people|"
        r"guests|tickets|persons|travell?ers|passengers)|how many.{0,25}(?:tickets|people|seats)|"
        r"size of (?:your|the) (?:party|group)|"
        r"how large|how big)\b"
    ),
    "day": re.compile(
        r"\b(?:what day|which day|what date|which date|day (?:would|will|do) you|when (?:would|"
        r"will|do) you (?:like to )?(?:arrive|check in|be arriving|stay|need|like|want|dine|"
        r"come|travel|leave|go)|arrival (?:day|date)|what night|which night|day of (?:the week|"
        r"travel|arrival|your)|starting (?:on )?what|day and time|day you)\b"
    ),
    "time": re.compile(
        r"\b(?:what time|which time|time (?:would|will|do) you|a time|the time|time for|"
        r"what hour|day and time|and time)\b"
    ),
    "stay": re.compile(
        r"\b(?:how many (?:nights|days)|how long (?:will|would|do|are|is) (?:you|your)|length "
        r"of (?:your |the )?stay|number of (?:nights|days)|nights? will you|how long)\b"
    ),
    "area": re.compile(
        r"\b(?:what area|which area|area of town|part of town|side of town|part of the city|"
        r"where in (?:town|the city|cambridge)|area (?:would|do|are) you|an area|the area|"
        r"which part|what part|particular area|preferred area|any area|location|"
        r"(?:north|south|east|west|centre|center)\s*,?\s*(?:or|,)\s*(?:the\s+)?"
        r"(?:north|south|east|west|centre|center))\b"
    ),
    "pricerange": re.compile(
        r"\b(?:price ?range|price point|how much (?:would|do|are) you|budget|price preference|"
        r"pricerange|what price|prices)\b"
    ),
    "food": re.compile(
        r"\b(?:type of (?:food|cuisine)|kind of (?:food|cuisine)|what (?:food|cuisine)|cuisine|"
        r"type of restaurant|kind of restaurant|food type|food preference|sort of food)\b"
    ),
    "stars": re.compile(r"\b(?:star rating|how many stars|stars?|rating)\b"),
    "type": re.compile(
        r"\b(?:hotel or (?:a )?guest ?house|guest ?house or (?:a )?hotel|type of (?:hotel|"
        r"accommodation|lodging|place)|kind of (?:hotel|accommodation|lodging|place))\b"
    ),
    "internet": re.compile(r"\b(?:internet|wifi)\b"),
    "parking": re.compile(r"\bparking\b"),
    "departure": re.compile(
        r"\b(?:where (?:will you be|are you|would you be|would you like to|do you want to|do "
        r"you) (?:departing|leaving|travell?ing from|coming from|depart|leave|be departing|"
        r"be leaving|going from)|departure (?:station|point|location|city|site)|departing "
        r"from|leaving from|where from|from where|where.{0,30} from\?|what station)\b"
    ),
    "destination": re.compile(
        r"\b(?:where (?:will you be|are you|would you|would you like to|do you want to|do "
        r"you) (?:going|heading|travell?ing to|headed|be going|go|travel|arriving)|destination|"
        r"where to|going to\?|travell?ing to\?|where.{0,40} to\?|where are you headed)\b"
    ),
    "leaveat": re.compile(
        r"\b(?:(?:what|which) time .{0,40}(?:leave|depart|departure)|when .{0,30}(?:leave|"
        r"depart)|departure time|leave after|depart after|leaving time|time.{0,20}to leave)\b"
    ),
    "arriveby": re.compile(
        r"\b(?:(?:what|which) time .{0,40}(?:arrive|arrival|be there|get there)|when .{0,30}"
        r"(?:arrive|be there|get there)|arrival time|arrive by|be there by)\b"
    ),
}
QUESTIONISH = re.compile(r"\?|\b(?:would you|do you|could you|can you|what|which|how|when|where)\b")

NEGATED_BEFORE = re.compile(
    r"(?:\bnot|\bno longer|\binstead of|\brather than|\bother than|\bexcept|\bbesides|"
    r"\bdont want|\bdo not want|\bdont like|\bdont need|\bdo not need|\bcant do|\bcannot do|"
    r"\bnot in|\bnot on|\bnot for|\bnot at|\bnot the|\bnot a|\bnot an|\bnothing|\bwithout)"
    r"(?:\s+(?:the|a|an|in|on|at|for|be|really|any|in the|to be|have|serve|serving|"
    r"necessarily|want|any more|stay|staying|stay in|stay at|like|be in))*\s*$"
)

SENTENCE_BREAK = re.compile(r"[!?;]+(?=\s|$)|(?<!\.m)(?<![ap]\.m)(?<!\d)\.(?=\s|$)|\n")
