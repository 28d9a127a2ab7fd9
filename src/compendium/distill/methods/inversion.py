"""The dd_inversion family's registry: SRe2L, DWA, RDED and G-VBSM (one line each), and the arms of DWA's
Table 3 ladder, each a registered method run with overrides of its configuration."""

from __future__ import annotations

from compendium.distill.methods.base import registry
from compendium.distill.methods.dwa import DWA
from compendium.distill.methods.gvbsm import GVBSM
from compendium.distill.methods.rded import RDED
from compendium.distill.methods.sre2l import SRe2L

METHODS = registry(SRe2L(), DWA(), RDED(), GVBSM())


def ladder(values: dict) -> dict[str, tuple[str, dict]]:
    """DWA Table 3's arms between C (SRe2L) and G (DWA): arm -> (the method whose configuration and recovery it
    takes, the overrides). D starts SRe2L from real images, E adds DWA's decoupled variance weight
    (``dwa_r_var``), F is DWA with a random instead of the directed weight adjustment."""
    return {
        "D: real init": ("sre2l", {"method": "sre2l+real", "init": "real"}),
        "E: + decoupled var": (
            "sre2l",
            {"method": "sre2l+real+rvar", "init": "real", "r_var": float(values["dwa_r_var"])},
        ),
        "F: + random adjust": ("dwa", {"method": "dwa-random", "weight_adjust": "random"}),
    }


#: Arm B of DWA Table 3: the real images the recovery starts from, unchanged (no iteration).
REAL_INIT_ARM = ("sre2l", {"method": "real init", "init": "real", "iterations": 0})
