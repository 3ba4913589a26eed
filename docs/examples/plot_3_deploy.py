"""
Deploy: save, verify, privatize and decode
==========================================

A design becomes a certified mechanism file; a deployment loads it (the guarantee is recomputed from the
matrix), privatizes records with a cryptographically secure generator, and an analyst decodes the
frequencies. Here on Adult's ``relationship`` attribute (6 categories); the CLI does the same with
``mechdesign privatize`` / ``mechdesign decode`` on a CSV file such as ``examples/people.csv``.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from mechdesign import (
    DesignProblem,
    Prior,
    Privatizer,
    estimate_frequencies,
    load_adult,
    read_mechanism_file,
    solve,
    verify_mechanism_file,
)
from mechdesign.deploy.analysis import count_outputs

# %%
# Design on the full Adult estimate with the χ² utility (its optima keep categories apart
# better than mutual information does, so the frequencies stay identifiable), then save the
# certified file and verify it.
prior = Prior.from_counts(load_adult(["relationship"])["relationship"].value_counts())
problem = DesignProblem.from_delta(prior, 2.0, 1e-6, utility="chi_squared", name="relationship")
result = solve(problem, baselines=False)
print(result)
path = result.save(Path(tempfile.mkdtemp()) / "relationship.mech.json")
check = verify_mechanism_file(path)
print(f"holds: {check.holds}; stated ε = {check.epsilon}, recomputed {check.achieved:.15g}")

# %%
# Load (verified), privatize a column of people (secure generator: no seed), count the outputs. The
# privatizer takes the loaded file: it re-checks the guarantee on the sampled matrix and keeps the file's
# release policy (a memoized file would need a memo key and user ids).
people = load_adult(["relationship", "sex"]).sample(5000, random_state=1)
loaded = read_mechanism_file(path)
sampler = Privatizer(loaded)
print(f"sampled matrix: ε = {sampler.sampled_epsilon:.15g}")
private = sampler.privatize(people["relationship"])
print(private.head())

# %%
# Decode: EM estimate of the input frequencies against the truth.
estimate = estimate_frequencies(loaded.mechanism, count_outputs(private, loaded.mechanism), "em")
truth = people["relationship"].value_counts(normalize=True).reindex(loaded.mechanism.inputs, fill_value=0.0)
x = np.arange(len(truth))
fig, ax = plt.subplots(figsize=(6, 3.2), layout="constrained")
ax.bar(x - 0.2, truth.to_numpy(), width=0.4, label="true", hatch="//", fill=False)
ax.bar(x + 0.2, estimate.frequencies, width=0.4, label="decoded (EM)")
ax.set_xticks(x, loaded.mechanism.inputs, rotation=20, ha="right")
ax.set_ylabel("frequency")
ax.legend(frameon=False)
plt.show()
