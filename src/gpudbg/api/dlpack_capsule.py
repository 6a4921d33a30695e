"""The C destructor of gpudbg's DLPack capsules, built on first use.

Why C: a consumer that refuses a capsule (numpy refusing a CUDA tensor)
drops it with its own exception pending, and CPython then runs the
capsule's destructor. A destructor written in Python (a ctypes callback)
cannot run while an exception is pending: CPython replaces the consumer's
exception with a SystemError. So the destructor is what C producers
(CuPy, PyTorch) use: save the pending exception, call the struct's deleter
if the capsule was never consumed, restore the exception. The few lines
below are compiled with the system C compiler (`$CC` or `cc`, which gpudbg's
native libraries need anyway) into the user cache directory, keyed by the
source and the interpreter, and loaded with ctypes.PyDLL so the Python C
API resolves against the running interpreter. Without a compiler, the
Python destructor is used: lifetimes are still right, only a refusing
consumer's error then reads as a SystemError.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = r"""
#include <stdint.h>
typedef struct _object PyObject;
extern void PyErr_Fetch(PyObject **, PyObject **, PyObject **);
extern void PyErr_Restore(PyObject *, PyObject *, PyObject *);
extern int PyCapsule_IsValid(PyObject *, const char *);
extern void *PyCapsule_GetPointer(PyObject *, const char *);

typedef struct { int32_t device_type; int32_t device_id; } DLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct { void *data; DLDevice device; int32_t ndim; DLDataType dtype; int64_t *shape;
                 int64_t *strides; uint64_t byte_offset; } DLTensor;
typedef struct DLManagedTensor { DLTensor dl_tensor; void *manager_ctx;
                                 void (*deleter)(struct DLManagedTensor *); } DLManagedTensor;
typedef struct { uint32_t major; uint32_t minor; } DLPackVersion;
typedef struct DLManagedTensorVersioned { DLPackVersion version; void *manager_ctx;
                                          void (*deleter)(struct DLManagedTensorVersioned *);
                                          uint64_t flags; DLTensor dl_tensor; } DLManagedTensorVersioned;

__attribute__((visibility("default")))
void gpudbg_dlpack_capsule_destructor(PyObject *capsule) {
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    if (PyCapsule_IsValid(capsule, "dltensor")) {
        DLManagedTensor *m = (DLManagedTensor *)PyCapsule_GetPointer(capsule, "dltensor");
        if (m && m->deleter) m->deleter(m);
    } else if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        DLManagedTensorVersioned *m =
            (DLManagedTensorVersioned *)PyCapsule_GetPointer(capsule, "dltensor_versioned");
        if (m && m->deleter) m->deleter(m);
    }
    PyErr_Restore(type, value, traceback);
}
"""


def _library_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    key = hashlib.sha256((SOURCE + sys.executable + sys.version).encode()).hexdigest()[:16]
    return Path(base) / "gpudbg" / "native" / f"dlpack_capsule_{key}.so"


def _build(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    cc = shlex.split(os.environ.get("CC") or "cc")
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        src = Path(tmp) / "dlpack_capsule.c"
        src.write_text(SOURCE)
        out = Path(tmp) / path.name
        subprocess.run([*cc, "-shared", "-fPIC", "-O1", "-o", str(out), str(src)], check=True,
                       capture_output=True, timeout=120)
        os.replace(out, path)     # atomic: a concurrent process loads a whole library or builds its own


def c_destructor() -> int | None:
    """The address of gpudbg_dlpack_capsule_destructor, or None without a C compiler."""
    path = _library_path()
    try:
        if not path.exists():
            _build(path)
        lib = ctypes.PyDLL(str(path))
        return ctypes.cast(lib.gpudbg_dlpack_capsule_destructor, ctypes.c_void_p).value
    except (OSError, subprocess.SubprocessError, AttributeError):
        return None
