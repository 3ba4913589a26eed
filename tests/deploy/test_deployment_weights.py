"""Deployment.input_counts with weights (issue 62): distinct values and their counts, as an engine's grouped count
gives them (mechdesign.spark's data check), count as the records themselves do."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from mechdesign.deploy import load
from tests.deploy import deploy_fixtures as fx


@pytest.mark.parametrize("kind", ["dense", "structured", "record"])
def test_weighted_counts_of_the_distinct_values_equal_the_records_counts(tmp_path, kind):
    deployment = load(fx.write(kind, tmp_path))
    table = fx.data_table(kind, 500)
    columns = fx.columns(kind)
    grouped = table.group_by(columns).aggregate([([], "count_all")])
    distinct = pa.table({name: grouped.column(name) for name in columns})
    weighted = deployment.input_counts(deployment.encode(distinct, columns), grouped.column("count_all").to_numpy())
    assert weighted.dtype == np.int64
    assert np.array_equal(weighted, deployment.input_counts(deployment.encode(table, columns)))
