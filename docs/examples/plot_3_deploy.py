"""
Deploy: save, verify, privatize and decode
==========================================

A design becomes a certified mechanism file; a deployment loads it (the guarantee is recomputed from the
matrix), privatizes records with a cryptographically secure generator, and an analyst decodes the
frequencies. Here on 2,000 synthetic records with Adult's race frequencies (``examples/people.csv``).
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

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
from mechdesign.deploy.decode import count_outputs

# %%
# Design on the full Adult estimate with the χ² utility (its optima keep categories apart
# better than mutual information does), then save the certified file.
prior = Prior.from_counts(load_adult(["race"])["race"].value_counts())
result = solve(DesignProblem.from_delta(prior, 2.0, 1e-6, utility="chi_squared"), baselines=False)
folder = Path(tempfile.mkdtemp())
path = result.save(folder / "race.mech.json")
print(verify_mechanism_file(path))

# %%
# Load (verified), privatize a column of people (secure generator: no seed), count the outputs.
here = Path.cwd()
root = next(p for p in (here, *here.parents) if (p / "examples" / "people.csv").is_file())
people = pd.read_csv(root / "examples" / "people.csv")
loaded = read_mechanism_file(path)
sampler = Privatizer(loaded.mechanism)
sampler.check(loaded.guarantee)
private = sampler.privatize(people["race"])
print(private.head())

# %%
# Decode: EM estimate of the input frequencies against the truth.
estimate = estimate_frequencies(loaded.mechanism, count_outputs(private, loaded.mechanism), "em")
truth = people["race"].value_counts(normalize=True).reindex(loaded.mechanism.inputs, fill_value=0.0)
x = np.arange(len(truth))
fig, ax = plt.subplots(figsize=(6, 3.2), layout="constrained")
ax.bar(x - 0.2, truth.to_numpy(), width=0.4, label="true", hatch="//", fill=False)
ax.bar(x + 0.2, estimate.frequencies, width=0.4, label="decoded (EM)")
ax.set_xticks(x, loaded.mechanism.inputs, rotation=20, ha="right")
ax.set_ylabel("frequency")
ax.legend(frameon=False)
plt.show()
