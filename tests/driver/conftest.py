import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "driver"))

from gpudbg_fakes import fake, kernels, real  # noqa: E402,F401
