"""The estimation engine.

A-, D- and L-optimal (decodable) designs — an interior point master over the lift
vectors, pricing by enumeration or by the count oracle, and a certified lower bound (issues 11 and 18).
"""

from mechdesign.design.estimation.engine import CRITERIA, caratheodory_reduce, design_estimation, lower_bound

__all__ = ["CRITERIA", "caratheodory_reduce", "design_estimation", "lower_bound"]
