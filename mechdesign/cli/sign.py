"""``mechdesign sign FILE --key KEY``: sign a mechanism file with Ed25519; ``--generate-key KEY`` makes a key pair.

The file's ``sha256`` detects accidents, not attackers (anyone who edits the file recomputes it); a signature
checked against a public key obtained out of band (``verify --public-key``, ``privatize --public-key``) does.
A record file (several attributes) is signed the same way, over its whole canonical content (attributes,
alphabets, factors or joint matrix, and the record-level guarantee with its joint prior), after its
record-level guarantee is recomputed.
"""

from __future__ import annotations

import argparse

from mechdesign.cli._io import print_json

COMMAND = ("sign",)
HELP = ("sign a mechanism file or record file (Ed25519 over its canonical content), or generate a key pair with "
        "--generate-key")
EXAMPLE = ("mechdesign sign --generate-key key.pem",
           "mechdesign sign designs/adult-race-estimation.mech.json --key key.pem")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign sign`` to ``parser``."""
    parser.add_argument("file", metavar="FILE", nargs="?",
                        help="mechanism file or record file to sign (verified first, rewritten atomically)")
    parser.add_argument("--key", metavar="KEY.pem", help="Ed25519 private key (PEM, unencrypted)")
    parser.add_argument("--generate-key", metavar="KEY.pem",
                        help="write a new private key here (mode 0600) and its public key to KEY.pem.pub")
    parser.add_argument("--force", action="store_true",
                        help="replace an existing signature (default: refuse to re-sign a signed file)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign sign`` on the parsed ``args``; return the exit code.

    0 on success; failures are raised, and :func:`mechdesign.cli.main` maps them to exit codes.
    """
    from mechdesign.mechfile._signature import generate_key_pair, sign_mechanism_file

    if args.generate_key is not None:
        if args.file is not None or args.key is not None:
            raise ValueError("generate_key must be used alone (no FILE, no --key), got generate_key="
                             + repr(args.generate_key))
        private, public = generate_key_pair(args.generate_key)
        if args.json:
            print_json({"private_key": str(private), "public_key": str(public)})
        else:
            print(f"wrote {private} (private, mode 0600) and {public} (public: share it with verifiers)")
        return 0
    if args.file is None or args.key is None:
        raise ValueError(f"key must be given with FILE (sign FILE --key KEY), got key={args.key!r}")
    target = sign_mechanism_file(args.file, args.key, replace=args.force)
    if args.json:
        print_json({"file": str(target), "algorithm": "ed25519"})
    else:
        print(f"signed {target} (ed25519)")
    return 0
