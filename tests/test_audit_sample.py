"""The audit's strata (:func:`pingce.audits.sample.strata_of`): a judge's point masses apart,
equal scores never split, at most the strata asked for, numbered in score order."""

from __future__ import annotations

import numpy as np
import pytest

from pingce.audits.sample import draw, strata_of


def test_point_masses_are_strata_of_their_own_and_equal_scores_are_never_split() -> None:
    rng = np.random.default_rng(0)
    unsure = rng.uniform(0.2, 0.8, 600).round(2)  # ties within the quantile bins too
    scores = np.concatenate([np.zeros(300), np.full(500, 0.99), unsure, [1.0, 1.0]])
    codes, bounds = strata_of(scores, 5)
    assert codes.max() + 1 == bounds.shape[0] <= 5
    for value in np.unique(scores):  # a score's records share one stratum
        assert np.unique(codes[scores == value]).size == 1
    for value in (0.0, 0.99, 1.0):  # each point mass alone in its stratum
        h = int(codes[scores == value][0])
        assert set(scores[codes == h].tolist()) == {value}
    assert (np.diff(bounds[:, 0]) > 0).all()  # in order of their scores
    for h in range(bounds.shape[0]):
        assert bounds[h].tolist() == [scores[codes == h].min(), scores[codes == h].max()]


def test_with_few_strata_the_largest_masses_are_kept_and_the_rest_shares_one() -> None:
    scores = np.concatenate([np.zeros(50), np.full(300, 0.99), np.linspace(0.1, 0.9, 100)])
    codes, bounds = strata_of(scores, 2)
    assert bounds.tolist() == [[0.0, 0.9], [0.99, 0.99]]
    codes, _ = strata_of(np.full(10, 0.5), 3)
    assert (codes == 0).all()


def test_a_neyman_draw_labels_each_stratum_in_proportion_to_its_judge_s_doubt() -> None:
    """Two point masses the judge is sure of (0.01 and 0.99) and uncertain scores: a sure record
    is drawn with a probability proportional to sqrt(0.01 x 0.99) (clipped at 0.005, not 0.05),
    an uncertain one to its stratum's sqrt(mean p(1 - p))."""
    rng = np.random.default_rng(1)
    scores = np.concatenate([np.full(4_000, 0.01), np.full(4_000, 0.99), rng.random(2_000)])
    drawn = draw([np.array([s]) for s in scores], 400, strata=4)
    assert drawn.quotas.sum() == 400 and drawn.sizes.size == 4
    rates = drawn.quotas / drawn.sizes
    sure = int(drawn.codes[0])
    for h in range(4):
        p = scores[drawn.codes == h]
        spread = np.sqrt(np.mean(p * (1 - p)))
        assert rates[h] / rates[sure] == pytest.approx(spread / np.sqrt(0.0099), rel=0.02)
