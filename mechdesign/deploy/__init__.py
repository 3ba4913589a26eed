"""Deployment in three parts: the file and its guarantee, sampling, analysis.

``file`` (the mechanism file and its guarantee), ``sampling`` (privatizing records) and ``analysis`` (decoding,
assessment and the data check), over the shared table reader ``_io``.

Imports point down only: ``sampling`` may use ``analysis`` (the data check before a release is committed) and
``file``; ``analysis`` uses ``file``; ``file`` uses neither.
"""
