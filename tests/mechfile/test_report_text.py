"""text_buffer: the texts of many structured reports in Arrow's string layout equal PlacementFamily.text one by one.

Oracle: ``family.text(t, family.value(t, groups))`` (Python integers) for each report; reports over types of one to
four decimal digits, every hex width, and seeds of two digit groups (a value above 2³²).
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest

from mechdesign.deploy.sampling import SymmetricPrivatizer
from mechdesign.mechfile import PlacementFamily, seed_limbs, text_buffer

from symmetric_fixtures import SMALL_COUNTS, random_mechanism

WIDE_COUNTS = [c for i in range(6) for c in [1000 - i] * 2] + [c for i in range(3) for c in [500 - i] * 3] + \
    [300] * 5 + [200] * 7 + [100] * 23 + [50] * 251


@pytest.mark.parametrize(("counts", "types"), [(SMALL_COUNTS, 12), (WIDE_COUNTS, 1100)])
def test_text_buffer_equals_the_one_report_rule(counts, types):
    m = random_mechanism(counts, 1, types=min(types, 40))
    if types > 40:  # types numbered up to four decimal digits: repeat the types (the texts only read the family)
        reps = -(-types // m.types)
        family = PlacementFamily(m.cells, np.tile(m.high_counts, (reps, 1)), np.tile(m.low_counts, (reps, 1)))
    else:
        family = SymmetricPrivatizer(m).family
    rng = np.random.default_rng(5)
    t = rng.integers(0, family.types, 3000)
    radix = family.group_radix[t]
    groups = (rng.random(radix.shape) * radix).astype(np.uint64)  # uniform below each group's radix product
    groups[:5] = radix[:5] - np.uint64(1)  # the largest seeds
    groups[5:10] = 0
    offsets, data = text_buffer(family, t, groups)
    blob = data.tobytes().decode("ascii")
    got = [blob[a:b] for a, b in itertools.pairwise(offsets.tolist())]
    want = [family.text(int(tt), family.value(int(tt), g)) for tt, g in zip(t, groups, strict=True)]
    assert got == want
    column = pa.Array.from_buffers(pa.string(), t.size, [None, pa.py_buffer(offsets.astype(np.int32)),
                                                         pa.py_buffer(data)])
    assert column.to_pylist() == want
    limbs = seed_limbs(family, t[:50], groups[:50], 4)
    assert [sum(int(limbs[i, r]) << (32 * i) for i in range(4)) for r in range(50)] == \
        [family.value(int(tt), g) for tt, g in zip(t[:50], groups[:50], strict=True)]
