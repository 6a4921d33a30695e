"""Makes tests/debug/debug_kernels.py importable from every debugger test
directory (pytest puts only each test file's own directory on sys.path)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
