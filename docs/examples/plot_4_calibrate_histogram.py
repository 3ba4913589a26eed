"""
Calibrate a Laplace histogram under PML
=======================================

If every record falls into every bin with probability at least α, the Laplace histogram with scale b is
ε-PML per record with ε = 2/b − log(1 − α + α e^{2/b}) ([H] Theorem 4, eq. 1); differential privacy charges
2/b. We calibrate the scale for several ε, estimate α from an independent sample, and release a histogram.
"""

import matplotlib.pyplot as plt
import numpy as np

from mechdesign import alpha_from_estimate, calibrate_histogram, laplace_histogram

# %%
# α from an independent sample of 20,000 records over 5 bins, valid with probability 1 − 1e-6.
sample_counts = [6100, 4900, 3800, 2900, 2300]
alpha = alpha_from_estimate(sample_counts, 1e-6)
print(f"alpha = {alpha:.4f}")

# %%
# The PML scale against the DP scale 2/ε.
epsilons = np.linspace(0.2, 2.0, 10)
pml = [calibrate_histogram(e, alpha, bins=5).scale for e in epsilons]
fig, ax = plt.subplots(figsize=(5, 3.2), layout="constrained")
ax.plot(epsilons, pml, marker="o", markerfacecolor="none", label=rf"PML, $\alpha = {alpha:.3f}$")
ax.plot(epsilons, 2 / epsilons, linestyle="--", marker="s", markerfacecolor="none", label=r"DP, $2/\varepsilon$")
ax.set_xlabel(r"$\varepsilon$ (nats)")
ax.set_ylabel("Laplace scale $b$")
ax.legend(frameon=False)
plt.show()

# %%
# Release one histogram at ε = 1 (secure generator by default; clipped at 0 and rounded).
calibration = calibrate_histogram(1.0, alpha, bins=5)
print(calibration.scale, laplace_histogram([120, 40, 35, 5, 0], calibration.scale))
