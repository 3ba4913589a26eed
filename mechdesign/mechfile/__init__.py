"""The file and its guarantee: the mechanism file format, its canonical bytes, signatures and keys, record files."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mechdesign._exports import attach

# --- public names: the name -> private module map (mechdesign._exports.attach loads each on first use) ---
_WHERE = {"DesignOutcome": "_save", "FileSections": "_save", "GROUP_LIMIT": "_placement", "GUARANTEE_SLACK": "_format",
          "MAX_DEPTH": "_format", "MechanismFile": "_column", "ParsedFile": "_format", "PlacementFamily": "_placement",
          "RecordFile": "_record", "Verification": "_format", "achieved_epsilon": "_column", "best_codes": "_rice",
          "binary_buffer": "_report_binary", "binary_widths": "_report_binary", "canonical_bytes": "_format",
          "canonical_digest": "_symmetric_check", "canonical_json": "_canonical",
          "canonical_json_reference": "_canonical", "dense_mechanism": "_symmetric_export", "export_matrix": "_column",
          "generate_key_pair": "_signature", "is_record_file": "_record", "key_id": "_policy",
          "legacy_json": "_canonical", "load_public_key": "_keys", "matrix_texts": "_canonical",
          "nesting_depth": "_format", "normalize_release": "_policy", "pack_counts": "_packed", "pack_rice": "_rice",
          "parse_file": "_format", "pretty_json": "_format", "primitive_root": "_placement",
          "raw_public_bytes": "_keys", "read_mechanism_file": "_column", "read_record_file": "_record",
          "read_symmetric_file": "_symmetric", "record_epsilon": "_record", "rice_parameters": "_rice", "save": "_save",
          "schema": "_format", "seed_limbs": "_report_seed", "sign_mechanism_file": "_signature",
          "stated_release": "_policy", "text_buffer": "_report_text", "type_capacities": "_symmetric_check",
          "unpack_counts": "_packed", "unpack_rice": "_rice", "verify_mechanism_file": "_column",
          "verify_record_file": "_record", "verify_symmetric_file": "_symmetric", "write_mechanism_file": "_column",
          "write_record_file": "_record_write", "write_symmetric_file": "_symmetric"}
__all__ = ["GROUP_LIMIT", "GUARANTEE_SLACK", "MAX_DEPTH", "DesignOutcome", "FileSections", "MechanismFile",
           "ParsedFile", "PlacementFamily", "RecordFile", "Verification", "achieved_epsilon", "best_codes",
           "binary_buffer", "binary_widths", "canonical_bytes", "canonical_digest", "canonical_json",
           "canonical_json_reference", "dense_mechanism", "export_matrix", "generate_key_pair", "is_record_file",
           "key_id", "legacy_json", "load_public_key", "matrix_texts", "nesting_depth", "normalize_release",
           "pack_counts", "pack_rice", "parse_file", "pretty_json", "primitive_root", "raw_public_bytes",
           "read_mechanism_file", "read_record_file", "read_symmetric_file", "record_epsilon", "rice_parameters",
           "save", "schema", "seed_limbs", "sign_mechanism_file", "stated_release", "text_buffer", "type_capacities",
           "unpack_counts", "unpack_rice", "verify_mechanism_file", "verify_record_file", "verify_symmetric_file",
           "write_mechanism_file", "write_record_file", "write_symmetric_file"]

if TYPE_CHECKING:
    from mechdesign.mechfile._canonical import canonical_json, canonical_json_reference, legacy_json, matrix_texts
    from mechdesign.mechfile._column import (
        MechanismFile,
        achieved_epsilon,
        export_matrix,
        read_mechanism_file,
        verify_mechanism_file,
        write_mechanism_file,
    )
    from mechdesign.mechfile._format import (
        GUARANTEE_SLACK,
        MAX_DEPTH,
        ParsedFile,
        Verification,
        canonical_bytes,
        nesting_depth,
        parse_file,
        pretty_json,
        schema,
    )
    from mechdesign.mechfile._keys import load_public_key, raw_public_bytes
    from mechdesign.mechfile._packed import pack_counts, unpack_counts
    from mechdesign.mechfile._placement import GROUP_LIMIT, PlacementFamily, primitive_root
    from mechdesign.mechfile._policy import key_id, normalize_release, stated_release
    from mechdesign.mechfile._record import (
        RecordFile,
        is_record_file,
        read_record_file,
        record_epsilon,
        verify_record_file,
    )
    from mechdesign.mechfile._record_write import write_record_file
    from mechdesign.mechfile._report_binary import binary_buffer, binary_widths
    from mechdesign.mechfile._report_seed import seed_limbs
    from mechdesign.mechfile._report_text import text_buffer
    from mechdesign.mechfile._rice import best_codes, pack_rice, rice_parameters, unpack_rice
    from mechdesign.mechfile._save import DesignOutcome, FileSections, save
    from mechdesign.mechfile._signature import generate_key_pair, sign_mechanism_file
    from mechdesign.mechfile._symmetric import read_symmetric_file, verify_symmetric_file, write_symmetric_file
    from mechdesign.mechfile._symmetric_check import canonical_digest, type_capacities
    from mechdesign.mechfile._symmetric_export import dense_mechanism

__getattr__, __dir__ = attach(__name__, _WHERE, __all__)
