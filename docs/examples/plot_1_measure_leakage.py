"""
Measure the leakage of k-RR on Adult's race attribute
=====================================================

k-ary randomized response (k-RR) at ε = 1 is 1-LDP. Under pointwise maximal leakage the data matter: we
compute its PML with respect to the estimated distribution of Adult's ``race`` attribute, and its exact
worst case over the uncertainty ball that holds with probability 1 − δ ([E] eq. 37).
"""

import matplotlib.pyplot as plt
import numpy as np

from mechdesign import (
             L1Ball,
             Prior,
             capacity,
             epsilon_min,
             load_adult,
             plot_mechanism,
             radius_for_delta,
             randomized_response,
)

# %%
# The estimate: ``value_counts()`` keeps the category names as labels.
race = load_adult(["race"])["race"]
prior = Prior.from_counts(race.value_counts())
print(prior)

# %%
# k-RR at ε = 1, with the same labels.
rr = randomized_response(prior.size, 1.0, labels=prior.labels)
plot_mechanism(rr, title="k-RR, ε = 1 (1-LDP)")
plt.show()

# %%
# PML with respect to the estimate, then the exact capacity over the ball of radius β*(δ) for several δ:
# the mechanism is (ε′, δ)-PML with ε′ = capacity. Both stay below the LDP level 1.
print(f"ε_min at the estimate: {epsilon_min(rr, prior):.4f} nats")
deltas = np.logspace(-12, -1, 12)
eps_prime = [capacity(rr, L1Ball(prior, min(radius_for_delta(d, prior.samples, prior.size), 2.0)))
             for d in deltas]
fig, ax = plt.subplots(figsize=(5, 3.2), layout="constrained")
ax.semilogx(deltas, eps_prime, marker="o", markerfacecolor="none", label=r"exact $\varepsilon'(\delta)$")
ax.axhline(1.0, color="k", linestyle="--", linewidth=0.8, label="LDP level (ε = 1)")
ax.set_xlabel(r"failure probability $\delta$")
ax.set_ylabel("PML over the ball (nats)")
ax.set_title("k-RR on Adult race, m = 48,842")
ax.legend(frameon=False)
plt.show()
