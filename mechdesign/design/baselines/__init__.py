"""What a design is compared with.

k-RR, calibrated k-RR, the optimal ε-LDP and inner designs (``compare``)
and the LDP frequency oracles with matrices and published variances (``ldp_oracles``).
"""
