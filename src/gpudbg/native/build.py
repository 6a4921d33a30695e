"""Builds the drop-in libraries libcuda.so.1, libcudart.so.13 and
libnvJitLink.so.13 (csrc/nvjitlink.c: no Python, it only makes clients use
the driver linker) with the system C compiler (`cc`, or `$CC`) into
gpudbg/native/lib/.

The one idea: the C is already generated and committed (csrc/), so a build is
two compiler runs of a few seconds, needing neither the CUDA toolkit nor
libpython (only the path of the libpython and python executable of the
interpreter running the build are recorded, for starting an embedded
interpreter in native host programs). setup.py's build hook calls `build()`;
`python -m gpudbg.native.build` does the same by hand; `library_dir()` is the
safety net that rebuilds when a source is newer than a library. Stdlib only:
setup.py loads this file by path, before gpudbg is importable.
It does not: generate the C (gen_exports does, at dev time).
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
CSRC = HERE / "csrc"
LIB = HERE / "lib"

#: soname -> (sources, version script, unversioned link name)
LIBRARIES = {
    "libcuda.so.1": (("gen_libcuda.c", "procaddr.c", "bridge.c"), "libcuda.map", "libcuda.so"),
    "libcudart.so.13": (("gen_libcudart.c", "bridge.c"), "libcudart.map", "libcudart.so"),
    "libnvJitLink.so.13": (("nvjitlink.c",), "libnvjitlink.map", "libnvJitLink.so"),
}


def libpython() -> str:
    """The shared libpython of the running interpreter ('' if it has none)."""
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    for name in (sysconfig.get_config_var("LDLIBRARY"), sysconfig.get_config_var("INSTSONAME")):
        if name and ".so" in name and (Path(libdir) / name).exists():
            return str(Path(libdir) / name)
    ver = f"{sys.version_info.major}.{sys.version_info.minor}"
    for cand in (Path(libdir) / f"libpython{ver}.so.1.0", Path(libdir) / f"libpython{ver}.so"):
        if cand.exists():
            return str(cand)
    return ""


def sources(soname: str) -> list[Path]:
    srcs, vscript, _ = LIBRARIES[soname]
    return [CSRC / s for s in srcs] + [CSRC / vscript, CSRC / "bridge.h"]


STAMP = "build-python.txt"


def is_stale(out_dir: Path = LIB, python: str | None = None) -> bool:
    """A library is missing or older than a source, or (when `python` is
    given) was built for another interpreter."""
    if python is not None:
        stamp = out_dir / STAMP
        if not stamp.exists() or stamp.read_text().strip() != python:
            return True
    for soname in LIBRARIES:
        lib = out_dir / soname
        if not lib.exists():
            return True
        t = lib.stat().st_mtime
        if any(s.stat().st_mtime > t for s in sources(soname)):
            return True
    return False


def _c_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def build(out_dir: Path | str = LIB, *, verbose: bool = False) -> Path:
    """Compile every library into out_dir (with the unversioned symlinks)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cc = shlex.split(os.environ.get("CC") or "cc")
    defs = [f"-DGD_LIBPYTHON={_c_string(libpython())}", f"-DGD_PYTHON_EXE={_c_string(sys.executable)}"]
    for soname, (srcs, vscript, link) in LIBRARIES.items():
        tmp = out_dir / f".{soname}.tmp"
        cmd = [*cc, "-shared", "-fPIC", "-O1", "-std=gnu11", "-fvisibility=hidden", "-w", *defs,
               f"-Wl,-soname,{soname}", "-Wl,-z,nodelete", f"-Wl,--version-script={CSRC / vscript}",
               "-o", str(tmp), *[str(CSRC / s) for s in srcs], "-ldl", "-lpthread"]
        if verbose:
            print(" ".join(shlex.quote(c) for c in cmd))
        subprocess.run(cmd, check=True)
        os.replace(tmp, out_dir / soname)
        link_path = out_dir / link
        if link_path.is_symlink() or link_path.exists():
            link_path.unlink()
        link_path.symlink_to(soname)
    (out_dir / STAMP).write_text(sys.executable + "\n")
    return out_dir


def library_dir(rebuild_if_stale: bool = True) -> Path:
    """The directory holding the drop-in libraries, rebuilt first if
    a source is newer than a library, one is missing, or they were built for
    another interpreter (they embed the building python's path)."""
    if rebuild_if_stale and is_stale(LIB, sys.executable):
        build(LIB)
    return LIB


def main(argv: list[str] | None = None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description="build " + ", ".join(LIBRARIES))
    ap.add_argument("--out", type=Path, default=LIB)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    out = build(args.out, verbose=args.verbose)
    for soname in LIBRARIES:
        print(out / soname)
    return 0


if __name__ == "__main__":
    sys.exit(main())
