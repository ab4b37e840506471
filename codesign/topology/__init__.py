"""Stage 1: wearable-robot topologies and their actuator pairs (thesis 5.2.1-5.2.2).

- :mod:`codesign.topology.catalog` - the records (``Joint``, ``Topology``, ``Catalog``) and
  ``catalog.json`` I/O (``load_catalog``, ``save_catalog``).
"""

from codesign.topology.catalog import (
    HUMAN_JOINTS,
    HUMAN_LINKS,
    Catalog,
    CatalogSettings,
    Joint,
    Topology,
    load_catalog,
    save_catalog,
)

__all__ = [
    "HUMAN_JOINTS",
    "HUMAN_LINKS",
    "Catalog",
    "CatalogSettings",
    "Joint",
    "Topology",
    "load_catalog",
    "save_catalog",
]
