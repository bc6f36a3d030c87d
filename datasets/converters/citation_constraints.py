"""Soft count constraints over the citation tags (--constraints): the templates of the non-local
count terms (docs/file-format.md "Non-local terms"; Vilnis et al., AISTATS 2015, section 8.1),
of the kinds Anzaroot et al. (2014) use, single tag counts and differences of two tags' counts.
Each is read off the training labels as a rule that (nearly) always holds there; pdsp train
weighs them on the dev set. With U_s the expected number of a citation's tokens tagged s, and a
template violated where a . U + b > 0 (smoothed hinge):

- at most c_s tokens of tag s, c_s the 99th percentile of its count over the training citations
  that have it (a = e_s, b = -c_s);
- at least one token of tag s, for the tags of at least 90% of the training citations
  (a = -e_s, b = 1);
- at most r_st times as many tokens of s as of t, for the tags t present in at least 95% of
  the training citations that have s, r_st the 99th percentile of the ratio over those that
  have both, rounded up to a tenth, where r_st <= 2 (a = e_s - r_st e_t, b = 0): where s is, t
  is too, in proportion (person-first and person-last, journal and volume).

A template is kept when it is in play (its tag, or its first tag, present) in at least 10 dev
citations; at most a fifth of the dev citations' number of templates are kept, those in play in
the most dev citations first (ties in the order above), so that the dev set can weigh each.
"""
import numpy as np

from pdsp import NonlocalTerms

UPPER_PERCENTILE = 99
PRESENT_SHARE = 0.9
ORDER_SHARE = 0.95
LEAST_SUPPORT = 10
MOST_RATIO = 2.0


def tag_counts(labels, states):
    """[citations x states] each citation's number of tokens in each state."""
    return np.array([np.bincount(np.asarray(l), minlength=states) for l in labels], dtype=float)


def candidate_templates(train, states):
    """[(a, b, tag whose presence puts it in play)] from the training counts."""
    candidates = []
    present = train > 0
    for s in range(states):
        if present[:, s].sum() >= LEAST_SUPPORT:
            bound = np.ceil(np.percentile(train[present[:, s], s], UPPER_PERCENTILE))
            candidates.append((np.eye(states)[s], -bound, s))
    for s in range(states):
        if present[:, s].mean() >= PRESENT_SHARE:
            candidates.append((-np.eye(states)[s], 1.0, None))
    for s in range(states):
        having = present[:, s]
        if having.sum() < LEAST_SUPPORT:
            continue
        for t in range(states):
            if t == s or np.mean(present[having, t]) < ORDER_SHARE:
                continue
            both = having & present[:, t]
            ratio = np.percentile(train[both, s] / train[both, t], UPPER_PERCENTILE)
            ratio = np.ceil(ratio * 10 - 1e-9) / 10
            if ratio <= MOST_RATIO:
                candidates.append((np.eye(states)[s] - ratio * np.eye(states)[t], 0.0, s))
    return candidates


def count_constraints(train_labels, dev_labels, states):
    """The NonlocalTerms of the kept templates, one instance of each on every example."""
    train = tag_counts(train_labels, states)
    dev = tag_counts(dev_labels, states)
    scored = []
    for order, (a, b, tag) in enumerate(candidate_templates(train, states)):
        in_play = len(dev) if tag is None else int((dev[:, tag] > 0).sum())
        if in_play >= LEAST_SUPPORT:
            scored.append((-in_play, order, a, b))
    kept = sorted(scored, key=lambda entry: entry[:2])[:max(1, len(dev) // 5)]
    kept.sort(key=lambda entry: entry[1])
    return NonlocalTerms(num_states=states, a=np.array([a for _, _, a, _ in kept]),
                         b=[b for _, _, _, b in kept], shape=[0] * len(kept),
                         every_example=list(range(len(kept))))
