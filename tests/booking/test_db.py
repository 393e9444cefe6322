from todeval.benchmarks.booking.db import MAX_ROWS, load_database


def test_filters_are_anded_and_lower_cased() -> None:
    db = load_database("test")
    res = db.query("restaurant", {"area": "CENTRE", "food": "Italian"})
    assert res.total > 0
    assert all(r["area"] == "centre" and r["food"] == "italian" for r in res.rows)


def test_at_most_five_rows_with_total() -> None:
    db = load_database("test")
    res = db.query("restaurant", {"area": "centre"})
    assert res.total > MAX_ROWS
    assert len(res.rows) == MAX_ROWS
    small = db.query("restaurant", {"name": "pizza hut city centre"})
    assert small.total == 1 and len(small.rows) == 1


def test_dontcare_and_empty_values_are_ignored() -> None:
    db = load_database("test")
    everything = db.query("hotel", {}).total
    assert db.query("hotel", {"area": "dontcare", "pricerange": ""}).total == everything
    assert db.query("hotel", {"area": "don't care"}).total == everything


def test_star_operators() -> None:
    db = load_database("test")
    ge4 = db.select("hotel", [])
    n_ge4 = sum(1 for r in ge4 if r["stars"] >= "4")
    assert db.query("hotel", {"stars": {"operator": ">=", "value": "4"}}).total == n_ge4
    n_lt2 = sum(1 for r in ge4 if r["stars"] < "2")
    assert db.query("hotel", {"stars": {"operator": "<", "value": "2"}}).total == n_lt2
    assert db.query("hotel", {"stars": {"operator": "=", "value": "4"}}).total == sum(
        1 for r in ge4 if r["stars"] == "4"
    )


def test_time_operators() -> None:
    db = load_database("test")
    q = {"departure": "cambridge", "destination": "ely", "day": "sunday"}
    late = db.query("train", {**q, "leaveat": {"operator": ">=", "value": "20:00"}})
    assert late.total > 0 and all(r["leaveat"] >= "20:00" for r in late.rows)
    early = db.query("train", {**q, "arriveby": {"operator": "<=", "value": "08:00"}})
    assert early.total > 0 and all(r["arriveby"] <= "08:00" for r in early.rows)


def test_values_are_bound_not_interpolated() -> None:
    db = load_database("test")
    assert db.query("restaurant", {"name": "x' OR '1'='1"}).total == 0
    assert db.query("restaurant", {"food": '"; DROP TABLE restaurant; --'}).total == 0
    assert db.query("restaurant", {}).total == 110


def test_unknown_columns_are_ignored_and_train_ids_upper_cased() -> None:
    db = load_database("test")
    assert db.query("restaurant", {"colour": "red"}).total == 110
    res = db.query("train", {"trainid": "tr7075"})
    assert res.total >= 1 and all(r["trainid"] == "TR7075" for r in res.rows)


def test_synthetic_db_is_searched_alone_and_normalised() -> None:
    db = load_database("synthetic")
    hotels = db.rows("hotel")
    assert len(hotels) == 68
    assert {r["parking"] for r in hotels} <= {"yes", "no"}
    assert "guest house" not in {r["type"] for r in hotels}
