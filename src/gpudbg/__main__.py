"""`python -m gpudbg`: the same entry point as the `gpudbg` console script."""
import sys

from gpudbg.cli.main import main

sys.exit(main())
