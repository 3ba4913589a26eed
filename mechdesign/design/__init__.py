"""The design engine: problem → vertex LP → solve → certify ([E] §V)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mechdesign._exports import attach
from mechdesign.design._solvers import SOLVERS  # a leaf module: the CLI parser lists them without heavy imports

# --- public names: the name -> private module map (mechdesign._exports.attach loads each on first use) ---
_WHERE = {"Certificate": "_certificate", "Design": "_result", "DesignProblem": "_problem", "DesignResult": "_result",
          "Engine": "_engines", "EngineResult": "_engines", "EstimationMSE": "_utility", "KEYS": "_problemfile",
          "Start": "_engines", "UTILITY_KINDS": "_utility", "Utility": "_utility", "certify": "_certificate",
          "certify_result": "_engines", "choose": "_engines", "clean_matrix": "_certificate",
          "covering_ball": "_covering", "design_dense": "_solver", "epsilon_prime_of": "_problem",
          "finish_seconds": "_certificate",
          "krr_start": "_engines", "load_problem": "_problemfile", "lp_optimum": "_solver", "plan_method": "_solver",
          "repair": "_certificate", "solve": "_solver", "trivial_bound": "_engines"}
__all__ = ["KEYS", "SOLVERS", "UTILITY_KINDS", "Certificate", "Design", "DesignProblem", "DesignResult", "Engine",
           "EngineResult", "EstimationMSE", "Start", "Utility", "certify", "certify_result", "choose",
           "clean_matrix", "covering_ball", "design_dense", "epsilon_prime_of", "finish_seconds", "krr_start",
           "load_problem", "lp_optimum", "plan_method", "repair", "solve", "trivial_bound"]

if TYPE_CHECKING:
    from mechdesign.design._certificate import Certificate, certify, clean_matrix, finish_seconds, repair
    from mechdesign.design._covering import covering_ball
    from mechdesign.design._engines import Engine, EngineResult, Start, certify_result, choose, krr_start, trivial_bound
    from mechdesign.design._problem import DesignProblem, epsilon_prime_of
    from mechdesign.design._problemfile import KEYS, load_problem
    from mechdesign.design._result import Design, DesignResult
    from mechdesign.design._solver import design_dense, lp_optimum, plan_method, solve
    from mechdesign.design._utility import UTILITY_KINDS, EstimationMSE, Utility

__getattr__, __dir__ = attach(__name__, _WHERE, __all__)
