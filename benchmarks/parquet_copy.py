"""The floor of a whole process through Parquet (issue 44 item 2): pyarrow alone copies a file, nothing privatized.

The file is read as ``mechdesign privatize`` reads it (the privatized ``--column`` as dictionary indices, batches of
2²⁰ records, pyarrow's decoding threads off) and written with the writer options that privatize chooses for it
(:func:`mechdesign.deploy.sampling._arrow._encodings`: the kept columns' dictionaries and encodings, statistics on
the kept columns only); no start-up of mechdesign's CLI, no file check, no sampling. The CPU time of this process
(``bench_speed_peers.py --large``) is what reading and writing the table costs whatever privatizes it.

Run: ``python benchmarks/parquet_copy.py DATA OUT --column race`` (``pip install mechdesign[parquet]``).
"""

from __future__ import annotations

import argparse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("out")
    parser.add_argument("--column", required=True)
    args = parser.parse_args()
    import pyarrow.parquet as pq

    from mechdesign.deploy.sampling._arrow import _encodings

    source = pq.ParquetFile(args.data, read_dictionary=[args.column])
    options = {"write_statistics": [c.path for c in source.schema if c.path != args.column],
               **_encodings(source, [args.column])}
    with pq.ParquetWriter(args.out, source.schema_arrow, **options) as writer:
        for batch in source.iter_batches(batch_size=1 << 20, use_threads=False):
            writer.write_batch(batch)


if __name__ == "__main__":
    main()
