"""Mutation testing of the guarantee modules: the share of operator, constant and comparison mutants the tests kill.

A small AST mutator (no mutmut or cosmic-ray: neither is a dependency, and both rewrite the tree in place): in the
functions that compute or check a guarantee (``TARGETS``) every binary and augmented operator is swapped (+ ↔ −,
× ↔ ÷), every comparison flipped or loosened (< ↔ <=, > ↔ >=, == ↔ !=), every numeric constant moved (0 ↔ 1,
c → c + 1 for integers, 2c for floats), unary minus dropped, ``and`` ↔ ``or``, and min ↔ max in every spelling
(``min``/``max``, ``np.minimum``/``np.maximum``, ``np.argmin``/``np.argmax``, ``.min()``/``.max()``). Docstrings are
left alone. Each mutant is written into a copy of the repository (``ast.unparse``: comments go, code stays) and the
module's targeted tests run there (``pytest -x``, Hypothesis seed 0, a timeout per mutant); a test failure or a
timeout kills it. Survivors are listed with their line, so each can be read: equivalent (no behaviour change), a
cost-only change, or a missing test. Those read are classified in :data:`CLASSIFIED` (written with each row); the
JSON header states the killed share with and without the equivalent ones.

    OMP_NUM_THREADS=1 python benchmarks/bench_mutation.py --sample 40 --name mutation

``--sample k`` draws k mutants per module (seeded) when there are more. Writes benchmarks/results/<name>.{json,csv}
(one row per mutant) with the killed share per module in the JSON header. Each finished mutant is also appended to
benchmarks/results/<name>.jsonl as it ends, with a hash of the module's source: the same command run again continues
an interrupted run (mutants already in the journal for the same source are not run again, and a run with all of
them there only rewrites the results, with :data:`CLASSIFIED` as it is now). ``--fresh`` starts a new journal.
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _common import RESULTS, write_results

ROOT = Path(__file__).resolve().parents[1]

#: module → (functions to mutate, the targeted tests). Functions: those on the guarantee's path (cost heuristics,
#: such as core.record_capacity._levels_pay, only change how long a result takes, never the result: left out).
#: Tests: the module's own, the exact oracles, the cases the mutation runs found (*_found_cases.py), and where a
#: module's statement is tested elsewhere that file too (record files' release policies: test_release_policy.py).
TARGETS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "mechdesign/core/_leakage.py": (
        ("pml", "epsilon_min", "ldp_epsilon", "impossible_output", "ldp_level", "_capacity_columns", "capacity",
         "certified_capacity"),
        ("tests/core/test_leakage.py", "tests/core/test_exact_oracles.py", "tests/core/test_exact_found_cases.py")),
    "mechdesign/core/_uncertainty.py": (
        ("_greedy", "min_linear", "_mass_below", "log_min_linear", "_log_min_linear", "_remaining_mass",
         "_log_term_errors", "_two_sum"),
        ("tests/core/test_uncertainty.py", "tests/core/test_exact_oracles.py", "tests/core/test_exact_found_cases.py")),
    "mechdesign/core/_repeated.py": (
        ("_merged_logs", "_exact", "report_leakage", "release_leakage", "account_spread", "_trivial", "_round_down",
         "_count_blocks", "_multiset_blocks", "_finish", "_expand"),
        ("tests/core/test_releases.py", "tests/core/test_exact_oracles.py", "tests/core/test_exact_found_cases.py")),
    "mechdesign/core/_record_capacity.py": (
        ("product_capacity", "_exact_ratios", "_exact_phase"),
        ("tests/records/test_record_capacity.py", "tests/records/test_record_exact.py",
         "tests/records/test_record_found_cases.py")),
    "mechdesign/mechfile/_column.py": (
        ("achieved_epsilon", "release_achieved", "release_spread", "_round_toward_privacy", "_load"),
        ("tests/mechfile/test_column_file.py", "tests/mechfile/test_release_policy.py",
         "tests/mechfile/test_conformance.py", "tests/mechfile/test_file_found_cases.py")),
    "mechdesign/mechfile/_record.py": (
        ("record_epsilon", "record_release_achieved", "_load", "record_verification"),
        ("tests/mechfile/test_record_file.py", "tests/mechfile/test_conformance.py",
         "tests/mechfile/test_file_found_cases.py", "tests/mechfile/test_release_policy.py")),
    "mechdesign/mechfile/_policy.py": (
        ("stated_release", "refuse_overstated"),
        ("tests/mechfile/test_release_policy.py", "tests/mechfile/test_conformance.py",
         "tests/mechfile/test_file_found_cases.py")),
}

#: Survivors of the full run read and classified (benchmarks/results/mutation_full.md): (module, index) → (kind, why).
#: Only an "equivalent" one (no behaviour change, argued in one line) leaves the denominator of the adjusted killed
#: share; "cost-only" (time or memory, never a result), "tolerance" (a result that moves only within a documented
#: tolerance or toward privacy) and "missing test" (a change the tests did not see; the why names the test added
#: since, which kills it in results/snapshots/mutation_full_after) stay counted as survivors of the run. Indices are
#: those of the module as of this table.
CLASSIFIED: dict[tuple[str, int], tuple[str, str]] = {
    ("mechdesign/core/_leakage.py", 43): (
        "equivalent", "np.zeros(1) for no used column: unreachable, every caller passes a row-stochastic matrix "
        "(as_mechanism; a product of two in two_layer/_joint), which has a used column"),
    ("mechdesign/core/_leakage.py", 50): (
        "equivalent", "1 + 9u rounds to 1 + 8u (9u is a tie between the floats 1 + 8u and 1 + 10u; ties go to even)"),
    ("mechdesign/core/_leakage.py", 56): (
        "missing test", "the refusal's message names M instead of N; killed by "
        "test_a_ball_of_another_dimension_is_refused_with_the_number_of_rows"),
    ("mechdesign/core/_leakage.py", 59): (
        "missing test", "certified_capacity rounded over M terms instead of N (a smaller margin, still above "
        "capacity); killed by test_the_certified_capacity_rounds_over_the_inputs"),
    ("mechdesign/core/_uncertainty.py", 4): (
        "missing test", "slack 2(K + 2)u² instead of (K + 2)²u²: the masses' residue too small (in principle g "
        "above its bound); killed by test_the_doubtful_masses_residue_weighs_the_smallest_entry_once_more"),
    ("mechdesign/core/_uncertainty.py", 7): (
        "tolerance", "a mass exactly −slack from the budget counted doubtful: more residue, toward privacy, only on "
        "an exact equality (none found among 600 constructed cases)"),
    ("mechdesign/core/_uncertainty.py", 8): (
        "tolerance", "a mass exactly p_k + slack counted doubtful: more residue, toward privacy, only on an exact "
        "equality"),
    ("mechdesign/core/_uncertainty.py", 9): (
        "equivalent", "value >= 0 vs > 0: at value == 0 both branches give budget (0 + budget is exact)"),
    ("mechdesign/core/_uncertainty.py", 10): (
        "missing test", "moved = value − budget (0 after clipping) when the K = N coordinates carry less than β/2 "
        "(float masses summing below 1, β = 2): min_linear's floor hides it, but log g is −∞ both ways, an upper "
        "bound below the exact value (a T-release lower end of +∞); killed by "
        "test_log_g_brackets_the_whole_mass_moved_when_the_floats_sum_below_one"),
    ("mechdesign/core/_uncertainty.py", 13): (
        "missing test", "slack (K − 2)²u² (0 at K = 2): as 4; killed by the same test"),
    ("mechdesign/core/_uncertainty.py", 14): (
        "missing test", "slack (K + 2)³u² (more margin); killed by the same test"),
    ("mechdesign/core/_uncertainty.py", 19): (
        "missing test", "slack (K + 3)²u² (more margin); killed by the same test (second case)"),
    ("mechdesign/core/_uncertainty.py", 45): (
        "missing test", "all N coordinates sorted instead of K₀ (cost only); killed by "
        "test_the_greedy_sorts_the_fewest_coordinates_that_carry_the_budget"),
    ("mechdesign/core/_uncertainty.py", 46): (
        "cost-only", "K = 1 takes the argpartition/argsort path instead of argmax: the same largest entry"),
    ("mechdesign/core/_uncertainty.py", 47): (
        "cost-only", "4K = N takes argpartition instead of argsort: the same K largest, in the same order"),
    ("mechdesign/core/_uncertainty.py", 51): (
        "equivalent", "max(k0, 0) vs max(k0, 1): k0 = searchsorted(...) + 1 >= 1"),
    ("mechdesign/core/_uncertainty.py", 52): (
        "cost-only", "4 / K < N: argpartition for almost every K (the same K largest, in order)"),
    ("mechdesign/core/_uncertainty.py", 54): (
        "missing test", "K₀'s budget divided by 1 + 2(N + 1)u: one coordinate short when the float cumulative sum "
        "overstates (the greedy stops short: g above exact in principle); killed by "
        "test_the_sorted_coordinates_carry_the_budget_when_the_float_sum_overstates_it"),
    ("mechdesign/core/_uncertainty.py", 56): (
        "cost-only", "5K < N instead of 4K < N for the partial sort: the same K largest, in order"),
    ("mechdesign/core/_uncertainty.py", 59): (
        "missing test", "K₀'s budget lowered by 2(N + 1)u: as 54; killed by the same test"),
    ("mechdesign/core/_uncertainty.py", 61): (
        "missing test", "the partial sort selects the K₀ smallest entries: g up to 6.9 % above the exact worst case "
        "(a capacity understated); killed by test_the_partial_sort_takes_the_largest_entries_in_decreasing_order"),
    ("mechdesign/core/_uncertainty.py", 62): (
        "missing test", "a partition one place off (kth = K + 1): misses one of the K₀ largest in ~2 % of columns "
        "at K₀ ≈ 100 (g within its margin where measured); killed by the same test (N = 900)"),
    ("mechdesign/core/_uncertainty.py", 63): (
        "missing test", "the K₀ selected sorted in increasing order: g up to 2.3 % above exact; killed by the same "
        "test"),
    ("mechdesign/core/_uncertainty.py", 64): (
        "missing test", "the selected entries reordered along the wrong axis; killed by the same test"),
    ("mechdesign/core/_uncertainty.py", 67): (
        "missing test", "K₀'s margin 2(N + 1)/u: every coordinate sorted (cost only); killed by "
        "test_the_greedy_sorts_the_fewest_coordinates_that_carry_the_budget"),
    ("mechdesign/core/_uncertainty.py", 68): (
        "equivalent", "argpartition at kth = K instead of K − 1: the first K positions hold the K largest either "
        "way (positions < kth are the kth smallest of −c); 4K < N keeps kth in range"),
    ("mechdesign/core/_uncertainty.py", 69): (
        "missing test", "argpartition along the wrong axis; killed by "
        "test_the_partial_sort_takes_the_largest_entries_in_decreasing_order"),
    ("mechdesign/core/_uncertainty.py", 70): (
        "missing test", "the selected entries sorted along the wrong axis; killed by the same test"),
    ("mechdesign/core/_uncertainty.py", 72): (
        "missing test", "K₀'s margin 2/(N + 1)u: below an ulp of β/2, one coordinate short as in 54; killed by "
        "test_the_sorted_coordinates_carry_the_budget_when_the_float_sum_overstates_it"),
    ("mechdesign/core/_uncertainty.py", 73): (
        "missing test", "K₀'s margin 3(N + 1)u (one more coordinate at the edge, cost only); killed by "
        "test_the_greedy_sorts_the_fewest_coordinates_that_carry_the_budget (β/2 a few ulps below a sum)"),
    ("mechdesign/core/_uncertainty.py", 74): (
        "missing test", "K₀'s margin 2(N − 1)u, still above the cumulative sum's (K − 1)u error; killed by the same "
        "test"),
    ("mechdesign/core/_uncertainty.py", 75): (
        "missing test", "the selected entries gathered along the wrong axis; killed by "
        "test_the_partial_sort_takes_the_largest_entries_in_decreasing_order"),
    ("mechdesign/core/_uncertainty.py", 76): (
        "missing test", "K₀'s margin 2Nu (as 74); killed by "
        "test_the_greedy_sorts_the_fewest_coordinates_that_carry_the_budget"),
    ("mechdesign/core/_uncertainty.py", 88): (
        "missing test", "the residue's min-c part subtracted (residue too small); killed by "
        "test_the_doubtful_masses_residue_weighs_the_smallest_entry_once_more"),
    ("mechdesign/core/_uncertainty.py", 102): (
        "tolerance", "the underflow margin (2N − 4)·2^-1074: the result still below the exact g where measured; "
        "killed since by test_underflowing_products_are_subtracted_as_documented"),
    ("mechdesign/core/_uncertainty.py", 104): (
        "missing test", "the residue over (Σ partial − 1) min c; killed by "
        "test_the_doubtful_masses_residue_weighs_the_smallest_entry_once_more"),
    ("mechdesign/core/_uncertainty.py", 106): (
        "missing test", "the underflow margin (2/N + 4) units; killed by the same test"),
    ("mechdesign/core/_uncertainty.py", 107): (
        "missing test", "the underflow margin (2N + 5) units (more); killed by the same test"),
    ("mechdesign/core/_uncertainty.py", 112): (
        "tolerance", "the residue without the moved mass's min c: one unit higher where it shows, 7.6 ulps below "
        "the exact g (1,188 of 9,552 constructed cases, none above); killed since by "
        "test_the_doubtful_masses_residue_weighs_the_smallest_entry_once_more"),
    ("mechdesign/core/_uncertainty.py", 115): (
        "missing test", "the underflow margin (3N + 4) units (more); killed by the same test"),
    ("mechdesign/core/_uncertainty.py", 118): (
        "missing test", "the relative margin (N + 11)u (more); killed by the same test"),
    ("mechdesign/core/_uncertainty.py", 123): (
        "missing test", "the input check joined by and: NaN and +inf accepted; killed by "
        "test_log_min_linear_refuses_columns_it_cannot_bound"),
    ("mechdesign/core/_uncertainty.py", 133): (
        "equivalent", "peak 1 instead of 0 where Q* is empty: those columns return −inf regardless"),
    ("mechdesign/core/_uncertainty.py", 134): (
        "equivalent", "direction <= 0 vs < 0: direction is ±1"),
    ("mechdesign/core/_uncertainty.py", 135): (
        "missing test", "the doubtful entry weighed by e^(a − max a + peak): a residue too small; killed by "
        "test_log_g_lowers_the_doubtful_mass_by_its_documented_residue"),
    ("mechdesign/core/_uncertainty.py", 137): (
        "tolerance", "the log path's residue with its min-c part subtracted: that part is at most (K + 2)²u²(K + "
        "1)·N of g (Σ Q* = 1 keeps e^(a_min − max a − peak) ≤ N), far below an ulp of it"),
    ("mechdesign/core/_uncertainty.py", 148): (
        "equivalent", "direction < 1 vs < 0: direction is ±1"),
    ("mechdesign/core/_uncertainty.py", 151): (
        "tolerance", "the doubtful entry's weight capped at e^1400 instead of e^700: only beyond 700 nats, where "
        "e^1400 overflows and the bound becomes ±inf (toward privacy both ways)"),
    ("mechdesign/core/_uncertainty.py", 153): (
        "tolerance", "the min-c weight e^(a_min − max a + peak): as 137, below an ulp of g"),
    ("mechdesign/core/_uncertainty.py", 154): (
        "tolerance", "the min-c weight capped at e^1400: as 151"),
    ("mechdesign/core/_uncertainty.py", 157): (
        "missing test", "the residue added to g when rounding down; killed by "
        "test_log_g_lowers_the_doubtful_mass_by_its_documented_residue"),
    ("mechdesign/core/_uncertainty.py", 164): (
        "missing test", "no doubtful entry when rounding down (remain > 1); killed by the same test"),
    ("mechdesign/core/_uncertainty.py", 165): (
        "tolerance", "the min-c part over Σ partial − 1: as 137"),
    ("mechdesign/core/_uncertainty.py", 170): (
        "missing test", "log g clipped at 0 (g < 1 when one term dominates); killed by "
        "test_log_g_is_rounded_down_by_its_documented_bound (third case)"),
    ("mechdesign/core/_uncertainty.py", 178): (
        "tolerance", "the min-c part over Σ partial: as 137"),
    ("mechdesign/core/_repeated.py", 0): (
        "missing test", "proportional columns compared unscaled: fewer merged (cost only); killed by "
        "test_proportional_outputs_merge_and_outputs_never_emitted_drop"),
    ("mechdesign/core/_repeated.py", 2): (
        "missing test", "never-emitted columns kept (0/0); killed by the same test"),
    ("mechdesign/core/_repeated.py", 3): (
        "missing test", "never-emitted columns mapped onto direction 1: the worst vector can name them; killed by "
        "the same test"),
    ("mechdesign/core/_repeated.py", 8): (
        "missing test", "never-emitted columns mapped onto direction 0: as 3; killed by the same test"),
    ("mechdesign/core/_repeated.py", 12): (
        "missing test", "sets that fit a block recursed on their first output (cost only); killed by "
        "test_an_enumeration_that_fits_a_block_is_one_block"),
    ("mechdesign/core/_repeated.py", 13): (
        "missing test", "a zero entry counted as one nat of float-error scale (more margin); killed by "
        "test_the_account_is_the_documented_rounding_of_its_count_vectors (a zero)"),
    ("mechdesign/core/_repeated.py", 18): (
        "equivalent", "< vs <= 2^17: C(t + m − 1, t) = 2^17 needs m = 2 and t = 2^17 − 1 (Sylvester: no other "
        "binomial with both parts ≥ 2 is a power of 2), i.e. M ≥ T ≥ 2^17, never enumerated; t = 1 is taken before"),
    ("mechdesign/core/_repeated.py", 24): (
        "equivalent", "t == 0 instead of t == 1: a single output level still fits unless M − first > 2^17, where T "
        "≥ 2 has more than 8.6·10⁹ count vectors and no enumeration runs"),
    ("mechdesign/core/_repeated.py", 27): (
        "cost-only", "the fit test on m + first outputs: deeper recursion (smaller blocks), the same vectors"),
    ("mechdesign/core/_repeated.py", 29): (
        "missing test", "the prefix's float-error scale subtracted (the margin 2(M + 2)u·s short when the prefix "
        "carries most of it: in principle epsilon below L_T); killed by test_every_block_row_is_its_count_vector"),
    ("mechdesign/core/_repeated.py", 31): (
        "missing test", "levels extended from a tuple's first output instead of its last (wrong tuples for T ≥ 3 in "
        "one block); killed by the same test"),
    ("mechdesign/core/_repeated.py", 41): (
        "missing test", "M = 1 (a second layer of one direction) sent through the split: _compositions(·, 0) "
        "recurses without end; killed by test_reports_through_a_constant_second_layer_leak_nothing"),
    ("mechdesign/core/_repeated.py", 43): (
        "missing test", "the split ⌈M/3⌉ + rest instead of ⌈M/2⌉ (cost only, larger tails); killed by "
        "test_every_block_row_is_its_count_vector"),
    ("mechdesign/core/_repeated.py", 46): (
        "missing test", "the split ⌊M/2⌋ + rest (cost only); killed by the same test"),
    ("mechdesign/core/_repeated.py", 51): (
        "missing test", "blocks of block-size × tail rows (memory only); killed by the same test"),
    ("mechdesign/core/_repeated.py", 61): (
        "missing test", "head rows per block from the tail's width (memory only); killed by the same test"),
    ("mechdesign/core/_repeated.py", 84): (
        "equivalent", "best_scale starts at 1 instead of 0: read only after the first best row sets it"),
    ("mechdesign/core/_repeated.py", 97): (
        "equivalent", "up >= best_up vs >: on a tie it stores the same value"),
    ("mechdesign/core/_repeated.py", 98): (
        "missing test", "a later count vector of equal value replaces the worst (both valid; the order is "
        "documented as deterministic); killed by test_a_tie_names_the_first_count_vector_enumerated"),
    ("mechdesign/core/_repeated.py", 99): (
        "missing test", "the lower end's error margin divided by s instead of multiplied: lower above its "
        "documented bound (in principle above L_T); killed by "
        "test_the_account_is_the_documented_rounding_of_its_count_vectors"),
    ("mechdesign/core/_repeated.py", 106): (
        "missing test", "a block holding a count vector no input emits skipped whole (its other vectors never "
        "evaluated: epsilon below L_T or none); killed by "
        "test_count_vectors_no_input_emits_are_left_out_and_the_rest_evaluated"),
    ("mechdesign/core/_repeated.py", 108): (
        "tolerance", "a row whose floor bound plus margins equals the best exactly is skipped: its value is at most "
        "the bound, inside the margins (an exact float equality)"),
    ("mechdesign/core/_repeated.py", 112): (
        "equivalent", "the initial worst vector's length: returned only when no vector was evaluated, where the "
        "callers name none (release_leakage: low = −inf; report_leakage always evaluates)"),
    ("mechdesign/core/_repeated.py", 118): (
        "missing test", "a block left with exactly one released vector (beside unreleasable ones) skipped: that "
        "vector never evaluated (epsilon below L_T if it is the worst); killed by "
        "test_count_vectors_no_input_emits_are_left_out_and_the_rest_evaluated (T = 4)"),
    ("mechdesign/core/_repeated.py", 123): (
        "missing test", "the worst vector taken by argmin of the block's values (lower from the least leaky vector: "
        "valid but far below); killed by test_the_account_is_the_documented_rounding_of_its_count_vectors"),
    ("mechdesign/core/_repeated.py", 124): (
        "missing test", "the lower end's error 2/(M + 2)u·s: lower above its documented bound; killed by the same "
        "test"),
    ("mechdesign/core/_repeated.py", 128): (
        "tolerance", "the skip filter's float-error term subtracted instead of added: the 1e-9 (1 + |bound|) margin "
        "still exceeds the 2·2(M + 2)u·s it then lacks (≈ 1e-13 at s = 100) except within that of a tie"),
    ("mechdesign/core/_repeated.py", 129): (
        "missing test", "the skip filter's margin 1e-9 / (1 + |bound|): a vector within 1e-9 (1 + |bound|) of the "
        "best skipped above 1 nat; killed by test_the_skip_filter_skips_and_evaluates_what_it_must"),
    ("mechdesign/core/_repeated.py", 135): (
        "missing test", "the lower end's error over M − 2 terms: lower above its documented bound; killed by "
        "test_the_account_is_the_documented_rounding_of_its_count_vectors"),
    ("mechdesign/core/_repeated.py", 138): (
        "tolerance", "the skip filter's float-error term 2(M + 2)u / s: as 128, the 1e-9 margin covers it"),
    ("mechdesign/core/_repeated.py", 139): (
        "missing test", "the skip filter's margin 2e-9 (1 + |bound|): more vectors evaluated (cost only); killed by "
        "test_the_skip_filter_skips_and_evaluates_what_it_must"),
    ("mechdesign/core/_repeated.py", 143): (
        "missing test", "the lower end's error over M + 3 terms (more margin); killed by "
        "test_the_account_is_the_documented_rounding_of_its_count_vectors"),
    ("mechdesign/core/_repeated.py", 150): (
        "tolerance", "the skip filter's float-error term 2/(M + 2)u·s: as 128, the 1e-9 margin covers it"),
    ("mechdesign/core/_repeated.py", 151): (
        "tolerance", "the skip filter's float-error term 3(M + 2)u·s (more): ≈ 1e-14 beside the 1e-9 margin"),
    ("mechdesign/core/_repeated.py", 152): (
        "tolerance", "the skip filter's float-error term 2(M − 2)u·s: as 128"),
    ("mechdesign/core/_repeated.py", 153): (
        "tolerance", "the skip filter's float-error term 2(M + 3)u·s (more): as 151"),
    ("mechdesign/core/_repeated.py", 155): (
        "missing test", "report_leakage's ball check needing both faults (a wrong dimension or a list let through); "
        "killed by test_report_leakage_refuses_a_ball_it_cannot_use"),
    ("mechdesign/core/_repeated.py", 159): (
        "equivalent", "the fewer-reports search starts at T + 1 instead of T − 1: C(T + 1 + M − 1, ·) and C(T + M − "
        "1, ·) are both beyond the limit in that branch, so it steps down to the same T′"),
    ("mechdesign/core/_repeated.py", 163): (
        "missing test", "the report account's lower end max(lower, epsilon): lower above L_T (a stated bound "
        "false); killed by test_the_report_account_brackets_the_exact_leakage"),
    ("mechdesign/core/_repeated.py", 167): (
        "tolerance", "the report enumeration's term budget counted as M₁² instead of N·M₁: where it switches to the "
        "permanent bound moves (another valid bracket), no bound changes; killed since by "
        "test_the_report_enumeration_admits_exactly_its_limits"),
    ("mechdesign/core/_repeated.py", 168): (
        "tolerance", "the term budget counted as N²: as 167; killed since by the same test"),
    ("mechdesign/core/_repeated.py", 169): (
        "missing test", "count >= max_vectors: exactly the documented largest enumeration refused (the permanent "
        "bound, a valid wider bracket); killed by test_the_report_enumeration_admits_exactly_its_limits"),
    ("mechdesign/core/_repeated.py", 170): (
        "missing test", "count·terms >= MAX_REPORT_TERMS: as 169; killed by the same test"),
    ("mechdesign/core/_repeated.py", 171): (
        "equivalent", "the fewer-reports search starts at T: C(T + M − 1, ·) is beyond the limit in that branch, so "
        "it steps down to the same T′"),
    ("mechdesign/core/_repeated.py", 172): (
        "equivalent", "fewer >= 0: at 0 the one count vector is within the limit (or low = 0 either way when even "
        "it is not), the same T′ and lower end"),
    ("mechdesign/core/_repeated.py", 174): (
        "missing test", "the fewer-reports lower end enumerates T′ = 0; killed by "
        "test_reports_beyond_the_enumeration_are_bracketed_by_fewer_and_the_permanent_answer"),
    ("mechdesign/core/_repeated.py", 175): (
        "missing test", "no T′ enumerates: the lower end 1 nat instead of 0 (above L_T when it is below 1); killed "
        "by the same test"),
    ("mechdesign/core/_repeated.py", 177): (
        "tolerance", "exact = (lifetime − lower < 1e-9 max(1, lifetime)): the flag at exact equality only"),
    ("mechdesign/core/_repeated.py", 181): (
        "missing test", "the fewer-reports search stops at T′ = 1 even when it does not enumerate (cost, and "
        "another valid lower end); killed by the same test"),
    ("mechdesign/core/_repeated.py", 183): (
        "missing test", "T′'s upper end taken as the lower one (above L_T when the account saturates); killed by "
        "test_reports_of_an_exact_answer_reach_the_permanent_bound_from_below"),
    ("mechdesign/core/_repeated.py", 185): (
        "tolerance", "the exact flag's threshold 1e-9 / max(1, lifetime): only whether a bracket narrower than 1e-9 "
        "nats is called exact"),
    ("mechdesign/core/_repeated.py", 188): (
        "tolerance", "the exact flag's threshold 2e-9: as 185"),
    ("mechdesign/core/_repeated.py", 189): (
        "missing test", "the refusal names N instead of M₁; killed by "
        "test_reports_of_another_height_are_refused_naming_the_permanent_outputs"),
    ("mechdesign/core/_repeated.py", 190): (
        "missing test", "the ball refusal names M₁ instead of N; killed by "
        "test_report_leakage_refuses_a_ball_it_cannot_use"),
    ("mechdesign/core/_repeated.py", 192): (
        "tolerance", "the exact flag's threshold 1e-9 min(1, lifetime): as 185"),
    ("mechdesign/core/_repeated.py", 193): (
        "tolerance", "the exact flag's threshold 1e-9 max(0, lifetime): as 185"),
    ("mechdesign/core/_repeated.py", 203): (
        "missing test", "T = 1 through the enumeration instead of capacity (another float of the same value); "
        "killed by test_one_release_is_the_capacity_as_the_file_states_it"),
    ("mechdesign/core/_repeated.py", 208): (
        "tolerance", "a trivial bound exactly equal to the target goes on to the relaxation (an equality)"),
    ("mechdesign/core/_repeated.py", 209): (
        "tolerance", "a trivial bound equal to the account replaces it: the same value, another method name"),
    ("mechdesign/core/_repeated.py", 213): (
        "missing test", "T = 1 reported as 0 releases; killed by "
        "test_one_release_is_the_capacity_as_the_file_states_it"),
    ("mechdesign/core/_repeated.py", 215): (
        "missing test", "auto enumerates only below max_vectors (the documented limit excluded); killed by "
        "test_auto_enumerates_exactly_max_vectors"),
    ("mechdesign/core/_repeated.py", 217): (
        "missing test", "the larger trivial bound stated (toward privacy, but above the target it was to prove); "
        "killed by test_a_trivial_bound_at_most_the_target_is_stated_with_a_lower_end_of_zero"),
    ("mechdesign/core/_repeated.py", 218): (
        "missing test", "the trivial-bound path's lower end 1 nat (above L_T below 1 nat); killed by the same test"),
    ("mechdesign/core/_repeated.py", 221): (
        "missing test", "identical rows tested against row 1 (IndexError at N = 1); killed by "
        "test_one_input_leaks_nothing_however_often"),
    ("mechdesign/core/_repeated.py", 223): (
        "tolerance", "the enumeration's time estimate < the deadline's remaining time instead of <= (an equality of "
        "floats in seconds)"),
    ("mechdesign/core/_repeated.py", 224): (
        "missing test", "the target shortcut needs every trivial bound at most the target (the relaxation runs "
        "instead: cost, another valid bracket); killed by "
        "test_a_trivial_bound_at_most_the_target_is_stated_with_a_lower_end_of_zero"),
    ("mechdesign/core/_repeated.py", 227): (
        "missing test", "the enumeration's progress passed only when none was given; killed by "
        "test_the_account_reports_its_progress"),
    ("mechdesign/core/_repeated.py", 229): (
        "missing test", "the relaxation's progress likewise; killed by the same test"),
    ("mechdesign/core/_repeated.py", 231): (
        "missing test", "the target shortcut's bound chosen by name (\"identity\" before \"ldp\"), possibly above the "
        "target; killed by test_a_trivial_bound_at_most_the_target_is_stated_with_a_lower_end_of_zero"),
    ("mechdesign/core/_repeated.py", 233): (
        "cost-only", "the enumeration's time estimate counts M instead of N (under a deadline, which method runs)"),
    ("mechdesign/core/_repeated.py", 234): (
        "missing test", "account_spread divided by max|log W|: a spread too small for a second reader to verify "
        "(documented as the bound); killed by test_the_account_spread_is_its_documented_bound"),
    ("mechdesign/core/_repeated.py", 235): (
        "missing test", "account_spread divided by T: as 234; killed by the same test"),
    ("mechdesign/core/_repeated.py", 236): (
        "missing test", "account_spread divided by u (huge); killed by the same test"),
    ("mechdesign/core/_repeated.py", 237): (
        "missing test", "account_spread with min|log W|: as 234; killed by the same test"),
    ("mechdesign/core/_repeated.py", 238): (
        "missing test", "account_spread over 2/(M + 2): as 234; killed by the same test"),
    ("mechdesign/core/_repeated.py", 239): (
        "missing test", "account_spread at least 2(M + 2)uT (max|log W| floored at 1; more); killed by "
        "test_the_account_spread_is_its_documented_bound"),
    ("mechdesign/core/_repeated.py", 240): (
        "missing test", "account_spread 3(M + 2)… (more); killed by the same test"),
    ("mechdesign/core/_repeated.py", 241): (
        "missing test", "account_spread over M − 2: as 234; killed by the same test"),
    ("mechdesign/core/_repeated.py", 242): (
        "missing test", "account_spread over M + 3 (more); killed by the same test"),
    ("mechdesign/core/_repeated.py", 243): (
        "missing test", "account_spread over N + 2 instead of M + 2; killed by the same test"),
    ("mechdesign/core/_repeated.py", 245): (
        "missing test", "the identity bound taken at min P̂ − β/2 = 0: log of 0 raises; killed by "
        "test_an_estimate_emptied_by_the_ball_has_no_identity_bound"),
    ("mechdesign/core/_repeated.py", 251): (
        "missing test", "T·ε_LDP rounded up over 3 terms (more); killed by "
        "test_a_trivial_bound_at_most_the_target_is_stated_with_a_lower_end_of_zero"),
    ("mechdesign/core/_repeated.py", 253): (
        "missing test", "the identity bound rounded over 5 terms (more); killed by "
        "test_the_identity_bound_is_rounded_up_as_documented"),
    ("mechdesign/core/_repeated.py", 254): (
        "missing test", "the identity bound's floor raised by 4u instead of lowered (in principle below −log min "
        "Q_x); killed by the same test"),
    ("mechdesign/core/_repeated.py", 255): (
        "missing test", "the floor times 1 + 4u: as 254; killed by the same test"),
    ("mechdesign/core/_repeated.py", 258): (
        "missing test", "the identity bound's floor lowered by 5u (more); killed by "
        "test_the_identity_bound_is_rounded_up_as_documented"),
    ("mechdesign/core/_repeated.py", 262): (
        "missing test", "_round_down by (|v| − 1)·16ε: a lower end above its documented rounding (below 1 nat it "
        "moves up); killed by test_the_account_is_the_documented_rounding_of_its_count_vectors"),
    ("mechdesign/core/_repeated.py", 263): (
        "missing test", "_round_down by 17ε (more); killed by the same test"),
    ("mechdesign/core/_repeated.py", 264): (
        "missing test", "_round_down by |v|·16ε (less); killed by the same test"),
    ("mechdesign/core/_record_capacity.py", 31): (
        "tolerance", "g >= 0 instead of > 0: at g = 0 log(top/0) = ∞ as before; differs only when ∏ max c_i "
        "underflows to 0 too (NaN instead of ∞), beyond any factor set the tests or files reach"),
    ("mechdesign/core/_record_capacity.py", 61): (
        "tolerance", "left >= round_up(best): on an exact tie the bound's output is named worst instead of the "
        "evaluated one; the same epsilon"),
    ("mechdesign/core/_record_capacity.py", 64): (
        "missing test", "widest = max(0, …): a cap below K + 1 entries gives blocks of none (more than 2·10⁶ "
        "observed letters); killed by test_the_exact_phase_doubles_its_blocks_up_to_the_entry_cap"),
    ("mechdesign/core/_record_capacity.py", 73): (
        "tolerance", "ratios >= best: a later output of equal ratio named worst; the same epsilon"),
    ("mechdesign/mechfile/_column.py", 3): (
        "missing test", "identical rows tested against row 1 (IndexError at N = 1); killed by "
        "test_one_input_achieves_zero"),
    ("mechdesign/mechfile/_column.py", 31): (
        "equivalent", "epsilon <= round_up(achieved) vs <: at equality the branch sets epsilon to the same value "
        "(the refusal cannot fire: achieved <= round_up(achieved + slack))"),
    ("mechdesign/mechfile/_column.py", 32): (
        "missing test", "the radius rule on M outputs instead of N inputs: a radius below β*(δ, m, N) written (the "
        "δ-guarantee false); killed by test_the_radius_rule_counts_the_inputs_not_the_outputs"),
    ("mechdesign/mechfile/_column.py", 37): (
        "tolerance", "the radius noise window open at β*(1 − RADIUS_RTOL): an exact equality"),
    ("mechdesign/mechfile/_column.py", 38): (
        "tolerance", "the window closed at the design radius: a radius already equal to it is set to itself"),
    ("mechdesign/mechfile/_column.py", 41): (
        "tolerance", "β* capped at 4 instead of 2: differs only for β* within RADIUS_RTOL above 2, where the ball "
        "is the whole simplex either way"),
    ("mechdesign/mechfile/_column.py", 43): (
        "tolerance", "achieved < round_up(epsilon + slack): refuses at exact equality only"),
    ("mechdesign/mechfile/_column.py", 45): (
        "missing test", "the refusal names the radius written when it was not raised; killed by "
        "test_an_epsilon_too_small_is_refused_naming_the_radius_only_when_it_was_raised"),
    ("mechdesign/mechfile/_column.py", 48): (
        "missing test", "the record-file hint only when both keys are present; killed by "
        "test_a_record_file_given_to_the_column_reader_is_named"),
    ("mechdesign/mechfile/_column.py", 79): (
        "missing test", "the reader requires samples > 1; killed by test_a_guarantee_from_one_sample_reads_back"),
    ("mechdesign/mechfile/_column.py", 80): (
        "missing test", "the reader admits samples = 2^63, reachable only in a hand-made file of format 1 (writers "
        "refuse above 2^53 − 1); killed by test_the_reader_refuses_sample_counts_from_2_to_the_63"),
    ("mechdesign/mechfile/_column.py", 83): (
        "missing test", "the reader admits samples up to 3^63, as 80; killed by the same test"),
    ("mechdesign/mechfile/_column.py", 84): (
        "missing test", "the reader admits samples up to 2^64, as 80; killed by the same test"),
    ("mechdesign/mechfile/_record.py", 4): (
        "missing test", "a joint mechanism's identical rows tested against row 1 (IndexError at one joint letter); "
        "killed by test_records_of_one_joint_letter_leak_nothing"),
    ("mechdesign/mechfile/_record.py", 6): (
        "missing test", "the factors' identical rows tested against row 1: as 4; killed by the same test"),
    ("mechdesign/mechfile/_record.py", 19): (
        "missing test", "the reader refuses ε below 1 nat; killed by "
        "test_record_files_read_back_below_one_nat_and_beyond_a_hundred_records"),
    ("mechdesign/mechfile/_record.py", 22): (
        "missing test", "a factor list of the wrong length accepted when it is a list (refused later by another "
        "rule); killed by test_a_hand_made_record_file_is_refused_by_the_rule_it_breaks"),
    ("mechdesign/mechfile/_record.py", 31): (
        "equivalent", "the reader admits samples = 2^53: unreachable, a record file's sha256 is taken over "
        "canonical JSON, which refuses integers of 2^53 and more before this check"),
    ("mechdesign/mechfile/_record.py", 35): (
        "missing test", "the reader admits samples = 0 (refused later by the table's sum); killed by "
        "test_a_hand_made_record_file_is_refused_by_the_rule_it_breaks"),
    ("mechdesign/mechfile/_record.py", 36): (
        "missing test", "the reader refuses 106 records or more; killed by "
        "test_record_files_read_back_below_one_nat_and_beyond_a_hundred_records"),
    ("mechdesign/mechfile/_record.py", 37): (
        "equivalent", "the reader admits samples up to 3^53: unreachable, as 31"),
    ("mechdesign/mechfile/_record.py", 38): (
        "equivalent", "the reader admits samples up to 2^54: unreachable, as 31"),
    ("mechdesign/mechfile/_record.py", 39): (
        "missing test", "record_verification recomputes only when a value is present (None compared otherwise); "
        "killed by test_a_record_verification_recomputes_a_sampled_design_as_sampled"),
    ("mechdesign/mechfile/_record.py", 45): (
        "missing test", "the recomputation takes a sampled design as a product and a product as sampled (another ε "
        "judged); killed by the same test"),
    ("mechdesign/mechfile/_policy.py", 2): (
        "equivalent", "stated == floor enters the branch only to set stated = floor again; the refusal test there "
        "cannot fire, since achieved <= floor <= round_up(stated + GUARANTEE_SLACK)"),
    ("mechdesign/mechfile/_policy.py", 7): (
        "tolerance", "achieved < round_up(stated + slack): a statement exactly at the edge of the noise window "
        "refused (an equality)"),
}

_SWAP_BIN = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Mult,
             ast.Pow: ast.Mult, ast.Mod: ast.FloorDiv}
_SWAP_CMP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
             ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
_SWAP_NAME = {"min": "max", "max": "min", "minimum": "maximum", "maximum": "minimum", "argmin": "argmax",
              "argmax": "argmin", "nanmax": "nanmin", "nanmin": "nanmax"}


@dataclass(frozen=True)
class Mutant:
    """One change: the n-th mutable site of a module and how it was changed."""

    module: str
    index: int
    line: int
    function: str
    change: str


def _docstring_ids(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def _moved(value: float) -> float:
    """0 ↔ 1 (of the same type), an integer plus one, a float doubled."""
    if value in (0, 1):
        return type(value)(1 - value)
    return value + 1 if isinstance(value, int) else 2 * value


def _changes(node: ast.AST) -> list[str]:
    """How a node can be mutated (descriptions; applied by :func:`_apply` in the same order)."""
    if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _SWAP_BIN:
        return [f"{type(node.op).__name__} -> {_SWAP_BIN[type(node.op)].__name__}"]
    if isinstance(node, ast.Compare):
        return [f"{type(op).__name__} -> {_SWAP_CMP[type(op)].__name__} (#{k})"
                for k, op in enumerate(node.ops) if type(op) in _SWAP_CMP]
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        value = node.value
        assert isinstance(value, (int, float))
        return [f"{value!r} -> {_moved(value)!r}"]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return ["drop unary minus"]
    if isinstance(node, ast.BoolOp):
        return [f"{type(node.op).__name__} -> {'Or' if isinstance(node.op, ast.And) else 'And'}"]
    if isinstance(node, ast.Name) and node.id in _SWAP_NAME and isinstance(node.ctx, ast.Load):
        return [f"{node.id} -> {_SWAP_NAME[node.id]}"]
    if isinstance(node, ast.Attribute) and node.attr in _SWAP_NAME:
        return [f".{node.attr} -> .{_SWAP_NAME[node.attr]}"]
    return []


def _apply(node: ast.AST, which: int) -> ast.AST:
    """The node with its ``which``-th change (see :func:`_changes`)."""
    node = copy.copy(node)
    if isinstance(node, (ast.BinOp, ast.AugAssign)):
        node.op = _SWAP_BIN[type(node.op)]()
    elif isinstance(node, ast.Compare):
        ops = list(node.ops)
        k = [i for i, op in enumerate(ops) if type(op) in _SWAP_CMP][which]
        ops[k] = _SWAP_CMP[type(ops[k])]()
        node.ops = ops
    elif isinstance(node, ast.Constant):
        value = node.value
        assert isinstance(value, (int, float))
        node.value = _moved(value)
    elif isinstance(node, ast.UnaryOp):
        return node.operand
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif isinstance(node, ast.Name):
        node.id = _SWAP_NAME[node.id]
    elif isinstance(node, ast.Attribute):
        node.attr = _SWAP_NAME[node.attr]
    return node


def _sites(tree: ast.Module, functions: tuple[str, ...]) -> list[tuple[ast.AST, str, int, str]]:
    """(node, function, which, change) for every mutation in the listed functions, in a fixed order."""
    skip = _docstring_ids(tree)
    out = []
    for top in ast.walk(tree):
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)) and top.name in functions:
            for node in ast.walk(top):
                if id(node) in skip or (isinstance(node, ast.Constant) and isinstance(node.value, bool)):
                    continue
                for which, change in enumerate(_changes(node)):
                    out.append((node, top.name, which, change))
    return out


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, which: int) -> None:
        self.target, self.which = target, which

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return _apply(node, self.which)
        return super().generic_visit(node)


def mutants(module: str) -> list[Mutant]:
    functions, _ = TARGETS[module]
    tree = ast.parse((ROOT / module).read_text())
    return [Mutant(module, k, getattr(node, "lineno", 0), name, change)
            for k, (node, name, _, change) in enumerate(_sites(tree, functions))]


def mutated_source(mutant: Mutant) -> str:
    functions, _ = TARGETS[mutant.module]
    tree = ast.parse((ROOT / mutant.module).read_text())
    node, _, which, _ = _sites(tree, functions)[mutant.index]
    return ast.unparse(ast.fix_missing_locations(_Replace(node, which).visit(tree)))


def _copy_repository(into: Path) -> Path:
    repo = into / "repo"
    ignore = shutil.ignore_patterns(".venv", ".git", "node_modules", "results", "__pycache__", "*.egg-info", "dist",
                                    "figures", "docs", "clients")
    shutil.copytree(ROOT, repo, ignore=ignore)
    return repo


def _run(repo: Path, tests: tuple[str, ...], timeout: float) -> tuple[str, float]:
    """('killed' | 'survived' | 'timeout', CPU seconds of the pytest process)."""
    tests = tuple(t for t in tests if (repo / t).exists())  # an older checkout may lack a newer test file
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    env.pop("HYPOTHESIS_PROFILE", None)
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--hypothesis-seed=0",
               *tests]
    process = subprocess.Popen(command, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    start = time.monotonic()
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            cpu = usage.ru_utime + usage.ru_stime
            return ("survived" if os.waitstatus_to_exitcode(status) == 0 else "killed"), cpu
        if time.monotonic() - start > timeout:
            process.kill()
            _, _, usage = os.wait4(process.pid, 0)
            return "timeout", usage.ru_utime + usage.ru_stime
        time.sleep(0.05)


def _journal(path: Path) -> dict[tuple[str, int, str], dict[str, object]]:
    """Finished mutants of an earlier run: (module, index, source hash) → row (a torn last line is dropped)."""
    done: dict[tuple[str, int, str], dict[str, object]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            done[(row["module"], int(row["index"]), row["source"])] = row
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=0, help="mutants per module at most (0: all)")
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--timeout", type=float, default=300.0, help="wall seconds per mutant")
    parser.add_argument("--modules", nargs="*", default=list(TARGETS), help="modules to mutate")
    parser.add_argument("--only", nargs="*", default=[], help="run only these mutants, as module:index")
    parser.add_argument("--name", default="mutation", help="results file stem")
    parser.add_argument("--fresh", action="store_true", help="ignore (and replace) the journal <name>.jsonl")
    args = parser.parse_args(argv)
    rows: list[dict[str, object]] = []
    summary: dict[str, dict[str, object]] = {}
    journal = RESULTS / f"{args.name}.jsonl"
    if args.fresh:
        journal.unlink(missing_ok=True)
    done = _journal(journal)
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()  # the tests run, for a journal continued later
    with tempfile.TemporaryDirectory(prefix="mutation-") as tmp:
        repo = _copy_repository(Path(tmp))
        probe = subprocess.run([sys.executable, "-c", "import mechdesign; print(mechdesign.__file__)"], cwd=repo,
                               capture_output=True, text=True, check=True).stdout.strip()
        if not probe.startswith(str(repo)):
            raise SystemExit(f"the copy does not shadow the installed package: {probe}")
        for module in args.modules:
            found = mutants(module)
            chosen = found
            only = {int(item.rsplit(":", 1)[1]) for item in args.only if item.rsplit(":", 1)[0] == module}
            if args.only:
                chosen = [m for m in found if m.index in only]
                if not chosen:
                    continue
            elif args.sample and len(found) > args.sample:
                chosen = sorted(random.Random(f"{args.seed}:{module}").sample(found, args.sample),
                                key=lambda m: m.index)
            original = (repo / module).read_text()
            source = hashlib.sha256(original.encode()).hexdigest()[:16]
            baseline_cpu = None
            if any((module, m.index, source) not in done for m in chosen):
                baseline, cpu = _run(repo, TARGETS[module][1], args.timeout)
                if baseline != "survived":
                    raise SystemExit(f"the targeted tests of {module} fail unmutated ({baseline})")
                baseline_cpu = round(cpu, 1)
            counts = {"killed": 0, "survived": 0, "timeout": 0}
            for mutant in chosen:
                earlier = done.get((module, mutant.index, source))
                if earlier is None:
                    (repo / module).write_text(mutated_source(mutant))
                    try:
                        outcome, cpu = _run(repo, TARGETS[module][1], args.timeout)
                    finally:
                        (repo / module).write_text(original)
                    earlier = {"outcome": outcome, "cpu_seconds": round(cpu, 2), "source": source,
                               "commit": commit, "load": round(os.getloadavg()[0], 2)}
                    with journal.open("a") as out:
                        out.write(json.dumps({"module": module, "index": mutant.index, **earlier}) + "\n")
                outcome = str(earlier["outcome"])
                counts[outcome] += 1
                kind, why = CLASSIFIED.get((module, mutant.index), ("", "")) if outcome == "survived" else ("", "")
                rows.append({"module": module, "index": mutant.index, "line": mutant.line,
                             "function": mutant.function, "change": mutant.change, "outcome": outcome,
                             "cpu_seconds": earlier["cpu_seconds"], "commit": earlier.get("commit", ""),
                             "load": earlier.get("load", ""), "class": kind, "why": why})
                print(rows[-1], flush=True)
            killed = counts["killed"] + counts["timeout"]
            equivalent = sum(row["module"] == module and row["class"] == "equivalent" for row in rows)
            cpus = sorted(float(str(row["cpu_seconds"])) for row in rows if row["module"] == module)
            summary[module] = {"mutants": len(found), "run": len(chosen), **counts, "equivalent": equivalent,
                               "median_cpu_seconds": cpus[len(cpus) // 2] if cpus else None,
                               "killed_share": round(killed / max(len(chosen), 1), 4),
                               "killed_share_without_equivalent": round(killed / max(len(chosen) - equivalent, 1), 4),
                               "tests": list(TARGETS[module][1]), "baseline_cpu_seconds": baseline_cpu}
            print(module, summary[module], flush=True)
    total = sum(int(str(s["run"])) for s in summary.values())
    killed = sum(int(str(s["killed"])) + int(str(s["timeout"])) for s in summary.values())
    equivalent = sum(int(str(s["equivalent"])) for s in summary.values())
    path = write_results(args.name, rows, summary=summary, killed_share=round(killed / max(total, 1), 4),
                         killed_share_without_equivalent=round(killed / max(total - equivalent, 1), 4),
                         sample=args.sample, seed=args.seed, only=args.only, load=os.getloadavg())
    print(f"killed {killed} of {total} ({killed / max(total, 1):.1%}; {equivalent} equivalent left out: "
          f"{killed / max(total - equivalent, 1):.1%}); wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
