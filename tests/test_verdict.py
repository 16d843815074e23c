"""The one statistical rule of the reproductions (ecnlab.reproduce.verdict)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from ecnlab.reproduce import verdict as V


def frame(values: dict[str, list[float]]) -> dict[str, pd.DataFrame]:
    """One part "p", one configuration label "cfg", seeds 1..n."""
    rows = [
        {"seed": i + 1, "cfg": cfg, "x": x} for cfg, xs in values.items() for i, x in enumerate(xs)
    ]
    return {"p": pd.DataFrame(rows)}


A = V.measure("p", "x", cfg="a")
B = V.measure("p", "x", cfg="b")


def test_t_interval_matches_the_textbook() -> None:
    # mean 2, sd 1, n 3: t(0.975, 2) = 4.3027
    mean, lo, hi = V.t_interval([1.0, 2.0, 3.0], 0.95)
    assert mean == 2.0
    assert hi - mean == pytest.approx(4.302653 / math.sqrt(3), rel=1e-5)
    assert lo == pytest.approx(2 * mean - hi)
    assert V.t_interval([5.0], 0.95)[1:] == (-math.inf, math.inf)
    assert V.t_interval([4.0, 4.0, 4.0], 0.95) == (4.0, 4.0, 4.0)


def test_regions() -> None:
    assert V.above(0).contains(0.1, 5) and not V.above(0).contains(0.0, 5)
    assert V.above(0).excludes(-3, 0) and not V.above(0).excludes(-3, 0.1)
    band = V.between(2, 4)
    assert band.contains(2.5, 3.5) and not band.contains(1.9, 3)
    assert band.excludes(4, 5) and band.excludes(-1, 2) and not band.excludes(3.9, 5)
    assert V.near(0, 1) == V.between(-1, 1)
    with pytest.raises(ValueError):
        V.between(3, 3)
    with pytest.raises(ValueError):
        V.near(0, 0)


def test_decide_holds_reversed_unresolved() -> None:
    assert V.decide({1: 1.0, 2: 1.2, 3: 0.9}, V.above(0)).verdict == "holds"
    assert V.decide({1: -1.0, 2: -1.2, 3: -0.9}, V.above(0)).verdict == "reversed"
    assert V.decide({1: 1.0, 2: -1.0, 3: 0.1}, V.above(0)).verdict == "unresolved"
    assert V.decide({1: 1.0}, V.above(0)).verdict == "unresolved"  # one seed decides nothing
    out = V.decide({1: 1.0, 2: math.nan, 3: 1.1, 4: 0.9}, V.above(0))
    assert out.n_seeds == 3 and 2 in out.dropped  # a missing value is reported, not hidden


def test_a_paired_difference_pairs_by_seed_and_reports_missing_seeds() -> None:
    f = frame({"a": [10.0, 20.0, 30.0], "b": [9.0, 19.0, 29.5]})
    assert (A - B).values(f) == {1: 1.0, 2: 1.0, 3: 0.5}
    # The seeds differ a lot, the paired differences little: the ordering holds.
    assert V.decide((A - B).values(f), V.above(0)).verdict == "holds"
    # b lacks seed 3: it shows as NaN in the difference.
    g = {"p": f["p"][~((f["p"]["cfg"] == "b") & (f["p"]["seed"] == 3))]}
    d = (A - B).values(g)
    assert d[1] == 1.0 and math.isnan(d[3])
    assert ((A - 1.0) * 2).values(f) == {1: 18.0, 2: 38.0, 3: 58.0}
    assert (A / B).log10().values(f)[1] == pytest.approx(math.log10(10 / 9))
    s = V.spread({"a": A, "b": B}, "best minus worst").values(f)
    assert s == {1: 1.0, 2: 1.0, 3: 0.5}


def test_measure_refuses_an_ambiguous_selection() -> None:
    f = frame({"a": [1.0, 2.0], "b": [1.0, 2.0]})
    with pytest.raises(ValueError, match="several runs per seed"):
        V.measure("p", "x").values(f)
    with pytest.raises(KeyError, match="no column 'nope'"):
        V.measure("p", "x", nope=1).values(f)
    with pytest.raises(KeyError, match="no measures of part 'q'"):
        V.measure("q", "x").values(f)


def _spec(tests: V.Test | dict[str, V.Test]) -> V.ClaimSpec:
    return V.ClaimSpec(
        id="c",
        statement="s",
        quote="q",
        location="l",
        paper=1.0,
        tests=tests,
        justification="j",
    )


@pytest.mark.parametrize("effect", [True, False])
def test_a_claim_holds_with_the_effect_and_not_without(effect: bool) -> None:
    rng = np.random.default_rng(7)
    base = rng.normal(50, 5, 5)  # seeds differ; each seed's configurations share traffic
    gap = 4.0 if effect else 0.0
    f = frame({"a": list(base + gap + rng.normal(0, 0.5, 5)), "b": list(base)})
    rec = _spec(V.Test(A - B, V.above(0))).evaluate(f)
    assert (rec["verdict"] == "holds") == effect
    assert rec["n_seeds"] == 5 and rec["confidence"] == V.CONFIDENCE
    assert rec["interval"][0] < rec["ours"] < rec["interval"][1]


def test_a_close_claim_is_an_equivalence_test() -> None:
    close = frame({"a": [10.0, 11.0, 12.0, 13.0], "b": [10.2, 10.9, 12.1, 13.1]})
    apart = frame({"a": [10.0, 11.0, 12.0, 13.0], "b": [14.0, 15.2, 15.8, 17.1]})
    test = V.Test(A - B, V.near(0, 1.0))
    assert _spec(test).evaluate(close)["verdict"] == "holds"
    assert _spec(test).evaluate(apart)["verdict"] == "reversed"


def test_a_claim_of_several_tests_needs_them_all() -> None:
    f = frame({"a": [3.0, 3.1, 2.9], "b": [1.0, 1.1, 0.9]})
    up = V.Test(A - B, V.above(0))
    down = V.Test(B - A, V.above(0))
    assert _spec({"x": up, "y": up}).evaluate(f)["verdict"] == "holds"
    rec = _spec({"x": up, "y": down}).evaluate(f)
    assert rec["verdict"] == "reversed"
    assert set(rec["interval"]) == {"x", "y"} and len(rec["tests"]) == 2
    assert _spec(up).parts == frozenset({"p"})


def test_a_magnitude_claim_on_a_ratio_band() -> None:
    f = frame({"a": [9.0, 8.5, 9.8, 9.1], "b": [1.0, 1.0, 1.05, 0.95]})
    band = V.Test((A / B).log10(), V.between(math.log10(5), math.log10(16)))
    assert _spec(band).evaluate(f)["verdict"] == "holds"
    small = frame({"a": [2.0, 2.2, 1.9, 2.1], "b": [1.0, 1.0, 1.05, 0.95]})
    assert _spec(band).evaluate(small)["verdict"] == "reversed"


def test_origin_is_checked() -> None:
    with pytest.raises(ValueError, match="origin"):
        V.ClaimSpec("c", "s", "q", "l", None, V.Test(A, V.above(0)), "j", origin="mine")
