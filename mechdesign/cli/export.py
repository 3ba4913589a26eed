"""``mechdesign export FILE --dense --out OUT.mech.json``: the dense file equivalent to a structured file.

Every output (type, seed) of the structured file's placement family becomes a column (identical columns merged),
so every tool and client that reads dense files, and anyone's own check, can read a small structured design
(:mod:`mechdesign.mechfile._symmetric_export`). The dense file's guarantee is recomputed from its matrix when it
is written; a matrix of more than 10⁶ entries is refused in one line naming its size.
"""

from __future__ import annotations

import argparse

from mechdesign.cli._io import add_force_argument, print_json, read_mechanism_argument, refuse_existing

COMMAND = ("export",)
HELP = "write the dense mechanism file equivalent to a structured (symmetric) file, up to 10^6 matrix entries"
EXAMPLE = ("mechdesign design problems/adult-race-estimation.toml --method symmetric --out structured/",
           "mechdesign export structured/adult-race-estimation.mech.json --dense --out adult-race-dense.mech.json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign export`` to ``parser``."""
    parser.add_argument("file", metavar="FILE", help="structured mechanism file (verified on load); - reads stdin")
    parser.add_argument("--dense", action="store_true", required=True,
                        help="write the dense file (every output of the placement family a column)")
    parser.add_argument("--out", required=True, metavar="OUT", help="the dense mechanism file to write")
    add_force_argument(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign export`` on the parsed ``args``; return the exit code."""
    from mechdesign.mechfile._column import verify_mechanism_file
    from mechdesign.mechfile._symmetric import read_symmetric_file
    from mechdesign.mechfile._symmetric_export import export_dense

    refuse_existing(args.out, args.force)
    source = read_mechanism_argument(args.file)
    if source.content.get("kind") != "symmetric":
        raise ValueError(f"file must be a structured mechanism file (\"kind\": \"symmetric\"); a dense file is "
                         f"already dense, got file={args.file!r}")
    loaded = read_symmetric_file(source)
    path = export_dense(loaded, args.out)
    dense = verify_mechanism_file(path)
    shape = f"{loaded.mechanism.cells.size} inputs x {len(_outputs(path))} outputs"
    if args.json:
        print_json({"output": str(path), "inputs": loaded.mechanism.cells.size, "outputs": len(_outputs(path)),
                    "epsilon": dense.epsilon, "achieved": dense.achieved, "structured_achieved": loaded.achieved,
                    "holds": dense.holds})
    else:
        print(f"{path}: dense file of {args.file} ({shape}); pml epsilon {dense.epsilon!r} holds (dense capacity "
              f"recomputed {dense.achieved!r}; structured {loaded.achieved!r})")
    return 0 if dense.holds else 1


def _outputs(path: object) -> list[str]:
    import json
    from pathlib import Path

    return json.loads(Path(str(path)).read_text(encoding="utf-8"))["outputs"]
