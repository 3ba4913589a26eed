"""``mechdesign memo-key KEY``: write a new memoization key (32 random bytes as 64 hexadecimal characters).

A deployment that privatizes the same people again and again keeps one such key and passes it to ``privatize
--memo-key KEY --user-column ID``: the same (user, value) then always gets the same output
(:mod:`mechdesign.deploy.sampling._memo`). The key is a secret, written with mode 0600; replacing it draws new outputs
for everyone, which is a new release, so an existing file is refused unless ``--force``.
"""

from __future__ import annotations

import argparse
import sys

from mechdesign.cli._io import add_force_argument, print_json

COMMAND = ("memo-key",)
HELP = "write a new memoization key for privatize --memo-key (32 random bytes, 64 hex characters, mode 0600)"
EXAMPLE = "mechdesign memo-key deployment.key"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign memo-key`` to ``parser``."""
    parser.add_argument("key", metavar="KEY", help="the key file to write (refused if it exists)")
    add_force_argument(parser, "the key file")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _refuse_or_warn(key: str, force: bool) -> None:
    """A signed mechanism file at ``key``: refused without ``--force``, replaced with a warning with it.

    The rule of every writer's ``--force`` (:func:`mechdesign._files.refuse_replacing`). Other existing files are
    refused by :func:`~mechdesign.deploy.sampling.generate_memo_key` without ``--force``.
    """
    from pathlib import Path

    from mechdesign._files import refuse_replacing

    if not Path(key).exists() or refuse_replacing(key, True, name="key", hint="--force") is None:
        return
    if not force:
        raise ValueError(f"key must not exist (it is a signed mechanism file, not a memoization key; use --force to "
                         f"replace it), got key={key!r}")
    print(f"mechdesign: warning: replacing the signed mechanism file {key} with a memoization key (the file and its "
          "signature are gone)", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign memo-key`` on the parsed ``args``; return the exit code."""
    from mechdesign.deploy.sampling._memo import generate_memo_key, read_memo_key
    from mechdesign.mechfile._policy import key_id

    _refuse_or_warn(args.key, args.force)
    path = generate_memo_key(args.key, force=args.force)
    identifier = key_id(read_memo_key(path))
    if args.json:
        print_json({"key": str(path), "bytes": 32, "mode": "0600", "id": identifier})
    else:
        print(f"{path}: new memoization key, id {identifier} (32 random bytes; keep it secret, and keep it: a new "
              "key is a new release for everyone; design --memo-key binds a file to it)")
    return 0
