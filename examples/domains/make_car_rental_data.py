"""Writes cars.csv and parking.csv of the car-rental example pack (made up here, seeded).

``python examples/domains/make_car_rental_data.py`` rewrites them in
``src/todeval/data/domains/car-rental/`` (they are committed; this script says how they were
made and remakes them byte for byte).
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

PACK = Path(__file__).resolve().parents[2] / "src" / "todeval" / "data" / "domains" / "car-rental"

BRANCHES = ["airport", "centre", "station", "north", "south"]
CATEGORIES = {
    "economy": (4, 5, "cheap"),
    "compact": (5, 5, "cheap"),
    "midsize": (5, 5, "moderate"),
    "estate": (5, 5, "moderate"),
    "suv": (5, 7, "moderate"),
    "van": (8, 9, "expensive"),
    "luxury": (4, 5, "expensive"),
}
MAKES = {
    "economy": ["fiat panda", "kia picanto", "toyota aygo"],
    "compact": ["ford focus", "vw golf", "renault clio"],
    "midsize": ["skoda octavia", "toyota corolla", "mazda 3"],
    "estate": ["skoda superb estate", "volvo v60", "ford mondeo estate"],
    "suv": ["nissan qashqai", "kia sportage", "hyundai tucson"],
    "van": ["ford transit", "vw transporter", "mercedes vito"],
    "luxury": ["bmw 5 series", "mercedes e class", "audi a6"],
}
PRICE = {"cheap": (25, 40), "moderate": (41, 65), "expensive": (66, 120)}
FUELS = ["petrol", "diesel", "hybrid", "electric"]


def cars(rng: random.Random) -> list[dict[str, str]]:
    rows = []
    for i in range(240):
        category = rng.choice(list(CATEGORIES))
        low, high, pricerange = CATEGORIES[category]
        branch = BRANCHES[i % len(BRANCHES)]
        rows.append(
            {
                "carid": f"CR{1000 + i * 7 + rng.randrange(7)}",
                "model": rng.choice(MAKES[category]),
                "category": category,
                "transmission": rng.choice(["manual", "automatic", "automatic"]),
                "fuel": rng.choice(FUELS),
                "seats": str(rng.randint(low, high)),
                "branch": branch,
                "pricerange": pricerange,
                "price": f"{rng.randint(*PRICE[pricerange])} pounds per day",
                "phone": f"01223{rng.randrange(100000, 999999)}",
            }
        )
    return rows


def parking(rng: random.Random) -> list[dict[str, str]]:
    rows = []
    names = ["park", "court", "yard", "square", "lane", "place"]
    streets = [
        "mill",
        "castle",
        "river",
        "market",
        "king",
        "queen",
        "bridge",
        "church",
        "hills",
        "station",
        "park",
        "green",
        "trumpington",
        "newmarket",
        "regent",
        "victoria",
    ]
    used = set()
    for i in range(90):
        while True:
            name = f"{rng.choice(streets)} {rng.choice(names)} car park"
            if name not in used:
                used.add(name)
                break
        area = BRANCHES[i % len(BRANCHES)]
        covered = rng.choice(["yes", "no"])
        charging = rng.choice(["yes", "no", "no"])
        rows.append(
            {
                "name": name,
                "area": area,
                "covered": covered,
                "charging": charging,
                "pricerange": rng.choice(["cheap", "moderate", "expensive"]),
                "price": f"{rng.randint(4, 30)} pounds per day",
                "address": f"{rng.randint(1, 99)} {rng.choice(streets)} street",
            }
        )
    return rows


def write(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    rng = random.Random(20261206)
    write(PACK / "cars.csv", cars(rng))
    write(PACK / "parking.csv", parking(rng))
