"""multi-freq-ldpy run on a table as its users would: read the file, privatize every record with the library's client,
write the file (the peer side of benchmarks/bench_speed_peers.py).

* **plain**: each value of ``--column`` is replaced by ``GRR_Client(value, k, ε)`` (k-ary randomized response,
  the library's ``pure_frequency_oracles.GRR``; a numba-jitted function, compiled on its first call in every process).
* **memoized** (``--memo-table``): L-GRR (Arcolezi et al. 2022, arXiv 2111.04636, the library's ``long_freq_est.L_GRR``)
  with its first round memoized, which the library leaves to the caller ("its clients keep no memo"): a table
  (user, value) → permanent value, kept in a pickle between runs, then the second round ``GRR_Client(permanent, k,
  ε₂)`` per report, with ε₂ from the library's own formula for (ε_perm, ε₁) (``L_GRR_Client``'s p₂, q₂).

The file is read and written with pandas (``read_csv`` / ``to_csv``, ``read_parquet`` / ``to_parquet``), the labels
are mapped to the codes 0 … k − 1 the client takes with a dict, and back with a list.

Run: ``python benchmarks/peer_privatize.py DATA OUT --column race --labels White,Black,... --epsilon 1``
[``--user-column id --memo-table memo.pkl --epsilon-report 1``] (``pip install mechdesign[bench]``).
"""

from __future__ import annotations

import argparse
import math
import os
import pickle


def second_round_epsilon(k: int, eps_perm: float, eps_1: float) -> float:
    """ε of L-GRR's second GRR round, as ``multi_freq_ldpy.long_freq_est.L_GRR.L_GRR_Client`` computes it."""
    p1 = math.exp(eps_perm) / (math.exp(eps_perm) + k - 1)
    q1 = (1 - p1) / (k - 1)
    e1 = math.exp(eps_1)
    p2 = (q1 - e1 * p1) / (-p1 * e1 + k * q1 * e1 - q1 * e1 - p1 * (k - 1) + q1)
    q2 = (1 - p2) / (k - 1)
    return math.log(p2 / q2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("out")
    parser.add_argument("--column", required=True)
    parser.add_argument("--labels", required=True, help="the attribute's categories, comma-separated")
    parser.add_argument("--epsilon", type=float, required=True, help="GRR's ε, or L-GRR's ε_perm with --memo-table")
    parser.add_argument("--user-column")
    parser.add_argument("--memo-table", help="pickle of the (user, value) → permanent value table (L-GRR)")
    parser.add_argument("--epsilon-report", type=float, help="L-GRR's ε₁ (one report)")
    args = parser.parse_args()

    import pandas as pd
    from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Client

    parquet = args.data.endswith(".parquet")
    frame = pd.read_parquet(args.data) if parquet else pd.read_csv(args.data)
    labels = args.labels.split(",")
    code = {label: i for i, label in enumerate(labels)}
    k = len(labels)
    if args.memo_table is None:
        frame[args.column] = [labels[GRR_Client(code[value], k, args.epsilon)] for value in frame[args.column]]
    else:
        table = {}
        if os.path.exists(args.memo_table):
            with open(args.memo_table, "rb") as handle:
                table = pickle.load(handle)
        eps_2 = second_round_epsilon(k, args.epsilon, args.epsilon_report)
        out = []
        for user, value in zip(frame[args.user_column].tolist(), frame[args.column].tolist(), strict=True):
            permanent = table.get((user, value))
            if permanent is None:
                permanent = table[(user, value)] = GRR_Client(code[value], k, args.epsilon)
            out.append(labels[GRR_Client(permanent, k, eps_2)])
        frame[args.column] = out
        with open(args.memo_table, "wb") as handle:
            pickle.dump(table, handle, protocol=pickle.HIGHEST_PROTOCOL)
    if parquet:
        frame.to_parquet(args.out, index=False)
    else:
        frame.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
