"""Soft count constraints over the citation tags (--constraints): the templates of the non-local
count terms (docs/file-format.md "Non-local terms"; Vilnis et al., AISTATS 2015, section 8.1),
of the kinds Anzaroot et al. (2014) use, single tag counts and differences of two tags' counts.
Each is read off the training labels as a rule that holds there in most citations; pdsp train
weighs them on the dev set, so a rule that holds in 70% of them can still earn a weight. A
measure is a tag's number of tokens or, with BIO states (--bio), its number of segments; with
U_s the expected value of measure s on a citation, and a template violated where a . U + b > 0
(smoothed hinge):

- at most c_s of measure s, c_s the 99th percentile of its value over the training citations
  that have it (a = the measure's row, b = -c_s);
- at least one of measure s, for the measures present in at least 70% of the training
  citations (a = minus its row, b = 1);
- at most r_st times as much of measure s as of t, for the measures t present in at least 80%
  of the training citations that have s, r_st the 99th percentile of the ratio over those that
  have both, rounded up to a tenth, where r_st <= 2 (a = row s - r_st row t, b = 0): where s
  is, t is too, in proportion (person-first and person-last, journal and volume).

A template is kept when it is in play (its measure, or its first measure, present) in at least
10 dev citations; at most a fifth of the dev citations' number of templates are kept, those in
play in the most dev citations first (ties in the order above), so that the dev set can weigh each.

The shares 70% and 80% gave the lowest dev loss (-log Q after 50 psi epochs) of those measured
at this cap (90/95, 80/85, 70/75, 70/80, 60/70, 50/60; docs/benchmarks.md): looser rules let in
implications such as "a journal comes with pages", looser still crowd out the strong ones.
"""
import numpy as np

from pdsp import NonlocalTerms

UPPER_PERCENTILE = 99
PRESENT_SHARE = 0.7
ORDER_SHARE = 0.8
LEAST_SUPPORT = 10
MOST_RATIO = 2.0
DEV_PER_TEMPLATE = 5


def measures(tags, bio):
    """[measures x states]: the rows a template's counts are made of. Per tag its tokens and,
    with BIO states (2k: a segment's first token, 2k + 1: the others), its segments."""
    per_tag = 2 if bio else 1
    rows = []
    for k in range(tags):
        tokens = np.zeros(per_tag * tags)
        tokens[per_tag * k:per_tag * (k + 1)] = 1.0
        rows.append(tokens)
        if bio:
            rows.append(np.eye(2 * tags)[2 * k])
    return np.array(rows)


def measured(labels, rows):
    """[citations x measures] each citation's value of each measure."""
    states = rows.shape[1]
    return np.array([np.bincount(np.asarray(l), minlength=states) for l in labels],
                    dtype=float) @ rows.T


def candidate_templates(train, rows):
    """[(a, b, measure whose presence puts it in play)] from the training measures."""
    candidates = []
    present = train > 0
    count = rows.shape[0]
    for m in range(count):
        if present[:, m].sum() >= LEAST_SUPPORT:
            bound = np.ceil(np.percentile(train[present[:, m], m], UPPER_PERCENTILE))
            candidates.append((rows[m], -bound, m))
    for m in range(count):
        if present[:, m].mean() >= PRESENT_SHARE:
            candidates.append((-rows[m], 1.0, None))
    for m in range(count):
        having = present[:, m]
        if having.sum() < LEAST_SUPPORT:
            continue
        for k in range(count):
            if k == m or np.mean(present[having, k]) < ORDER_SHARE:
                continue
            both = having & present[:, k]
            ratio = np.percentile(train[both, m] / train[both, k], UPPER_PERCENTILE)
            ratio = np.ceil(ratio * 10 - 1e-9) / 10
            if ratio <= MOST_RATIO:
                candidates.append((rows[m] - ratio * rows[k], 0.0, m))
    return candidates


def count_constraints(train_labels, dev_labels, tags, bio):
    """The NonlocalTerms of the kept templates, one instance of each on every example."""
    rows = measures(tags, bio)
    train, dev = measured(train_labels, rows), measured(dev_labels, rows)
    scored = []
    for order, (a, b, measure) in enumerate(candidate_templates(train, rows)):
        in_play = len(dev) if measure is None else int((dev[:, measure] > 0).sum())
        if in_play >= LEAST_SUPPORT:
            scored.append((-in_play, order, a, b))
    kept = sorted(scored, key=lambda entry: entry[:2])[:max(1, len(dev) // DEV_PER_TEMPLATE)]
    kept.sort(key=lambda entry: entry[1])
    return NonlocalTerms(num_states=rows.shape[1], a=np.array([a for _, _, a, _ in kept]),
                         b=[b for _, _, _, b in kept], shape=[0] * len(kept),
                         every_example=list(range(len(kept))))
