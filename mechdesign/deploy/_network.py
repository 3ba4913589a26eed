"""Where a secret may travel unencrypted: one rule for "this machine", for Spark's and Dask's key guards."""

from __future__ import annotations

import ipaddress

__all__ = ["on_this_machine"]


def on_this_machine(host: str) -> bool:
    """Whether ``host`` is this machine's loopback (a message to it never crosses a network).

    ``localhost``, 127.0.0.0/8 or ::1, bracketed or not; any other name or address is another machine.
    """
    try:
        return host == "localhost" or ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a name other than localhost
        return False
