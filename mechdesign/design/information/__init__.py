"""The information engine.

Sub-linear utilities (mutual information, f-informations, guessing probability)
as an LP over the polytope's vertices, by column generation — HiGHS master, knapsack pricing with a proven
bound, proximal stabilisation ([E] §V; reference/scale-pricing.md).
"""
