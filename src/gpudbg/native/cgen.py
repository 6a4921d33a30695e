"""Writes the generated C of the drop-in libraries from the export tables.

For each library, `csrc/gen_lib<name>.c` holds one stub per export with the
exact C ABI of its prototype (parameters spelled as ABI-equivalent stdint
types, pointers and by-value structs of the same size, alignment and
eightbyte classes), each one line calling the shared bridge `gd_call` with a
signature string that tells the bridge how to convert the arguments to
Python objects and the result back. `csrc/lib<name>.map` is the linker
version script (`libcudart.so.13` node for the runtime, unversioned for the
driver). libcuda's file also holds the cuGetProcAddress table that
csrc/procaddr.c searches. Run by gen_exports (dev time); the output is
committed, so the build needs only a C compiler.

Signature string: [ret kind][mode][one char per parameter]. Ret kinds: e
(error code), v, i (signed integer), u (unsigned), p (pointer), S (struct
by value, written through a hidden out pointer). Modes: '-' plain; for
nvcc's registration ABI 'F' (__cudaRegisterFatBinary), 'R' (other
registrations), 'U' (__cudaUnregisterFatBinary), 'H' (__cudaInitModule):
see csrc/bridge.c. Parameters: b B h H i I q Q (int8..uint64), p, f
(float), d (double), s (struct: pointer and size follow).
"""
from __future__ import annotations

from pathlib import Path

from gpudbg.native.tables import C_IMPLEMENTED, Export

CSRC = Path(__file__).resolve().parent / "csrc"

CTYPE = {"i8": "int8_t", "u8": "uint8_t", "i16": "int16_t", "u16": "uint16_t", "i32": "int32_t",
         "u32": "uint32_t", "i64": "int64_t", "u64": "uint64_t", "p": "void *", "f32": "float",
         "f64": "double", "v": "void", "e": "int"}
SIGCH = {"i8": "b", "u8": "B", "i16": "h", "u16": "H", "i32": "i", "u32": "I", "i64": "q", "u64": "Q",
         "p": "p", "f32": "f", "f64": "d"}
MODES = {"__cudaRegisterFatBinary": "F", "__cudaRegisterFatBinaryEnd": "R", "__cudaRegisterFunction": "R",
         "__cudaRegisterVar": "R", "__cudaRegisterManagedVar": "R", "__cudaRegisterTexture": "R",
         "__cudaRegisterSurface": "R", "__cudaUnregisterFatBinary": "U", "__cudaInitModule": "H"}


def struct_type(abi: str) -> tuple[str, str]:
    """(C type name, typedef) of an ABI-equivalent struct for class s<size>a<align>[:classes]."""
    spec, _, classes = abi[1:].partition(":")
    size, align = (int(x) for x in spec.split("a"))
    name = "gd_" + abi.replace(":", "_")
    if not classes:             # over 16 bytes: passed and returned in memory
        return name, f"typedef struct {{ _Alignas({align}) unsigned char b[{size}]; }} {name};"
    if size % 4 == 0 and align >= 4:
        fields = []
        for k, c in enumerate(classes):
            n = min(8, size - 8 * k) // 4
            fields.append(f"{'float' if c == 'F' else 'uint32_t'} w{k}[{n}];")
        return name, f"typedef struct {{ {' '.join(fields)} }} {name};"
    if "F" not in classes:
        return name, f"typedef struct {{ _Alignas({align}) unsigned char b[{size}]; }} {name};"
    raise ValueError(f"no ABI-equivalent struct for {abi}")


def ctype(abi: str) -> str:
    return struct_type(abi)[0] if abi.startswith("s") else CTYPE[abi]


def stub(lib: str, idx: int, e: Export) -> str:
    params = ", ".join(f"{ctype(a)} a{k}" for k, a in enumerate(e.param_abi)) or "void"
    sig = []
    args = []
    for k, a in enumerate(e.param_abi):
        if a.startswith("s"):
            sig.append("s")
            args.append(f"&a{k}, sizeof a{k}")
        else:
            sig.append(SIGCH[a])
            args.append(f"a{k}")
    r = e.ret_abi
    kind = ("S" if r.startswith("s") else r[0] if r[0] in "evp" else r[0])
    s = f'"{kind}{MODES.get(e.name, "-")}{"".join(sig)}"'
    call_args = ", ".join([f"&L, {idx}", s, *args])
    rt = ctype(r)
    head = f"GD_API {rt} {e.name}({params})"
    if r == "v":
        return f"{head} {{ gd_call({call_args}); }}"
    if r.startswith("s"):
        return f"{head} {{ {rt} r; gd_call(&L, {idx}, {s}, &r, sizeof r{''.join(', ' + a for a in args)}); return r; }}"
    if r == "p":
        return f"{head} {{ return (void *)(uintptr_t)gd_call({call_args}); }}"
    return f"{head} {{ return ({rt})gd_call({call_args}); }}"


def generate(lib: str, header: str, table: list[Export],
             procs: list[tuple[str, int, str, str]]) -> tuple[str, str]:
    """(C source, version script) of library `lib` from its export table (and,
    for libcuda, the cuGetProcAddress rows)."""
    c_impl = set(C_IMPLEMENTED[lib])
    out = ["/* " + header.replace("*/", "* /").replace("\n", "\n * ") + " */",
           '#include "bridge.h"', ""]
    structs = sorted({a for e in table for a in (e.ret_abi, *e.param_abi) if a.startswith("s")})
    out += [struct_type(a)[1] for a in structs]
    out.append(f"#define GD_N {len(table)}")
    out.append("static const char *const N[GD_N] = {")
    out += [f'  "{e.name}",' for e in table]
    out.append("};")
    out.append("static void *C[GD_N];\nstatic unsigned M[GD_N];")
    out.append(f'static gd_lib L = {{"{lib}", GD_N, N, C, M}};')
    out.append("GD_HIDDEN gd_lib *const gd_this_lib = &L;")
    out.append("")
    for idx, e in enumerate(table):
        if e.name in c_impl:
            out.append(f"GD_API int {e.name}({', '.join(f'{ctype(a)} a{k}' for k, a in enumerate(e.param_abi))});")
        else:
            out.append(stub(lib, idx, e))
    if lib == "cuda":
        index = {e.name: i for i, e in enumerate(table)}
        out.append("")
        out.append("GD_HIDDEN void *const gd_fns[GD_N] = {")
        out += [f"  (void *){e.name}," for e in table]
        out.append("};")
        rows = sorted(procs, key=lambda r: (r[0], r[2] != "", r[1]))
        out.append(f"GD_HIDDEN const int gd_nprocs = {len(rows)};")
        out.append("GD_HIDDEN const gd_proc gd_procs[] = {")
        out += [f'  {{"{n}", {v}, {1 if k else 0}, {index[s]}}},' for n, v, k, s in rows]
        out.append("};")
    names = "\n".join(f"    {e.name};" for e in table)
    extra = "    gpudbg_native_missing;\n    gpudbg_native_start_python;\n"
    if lib == "cudart":
        vs = f"libcudart.so.13 {{\n  global:\n{names}\n{extra}  local: *;\n}};\n"
    else:
        vs = f"{{\n  global:\n{names}\n{extra}  local: *;\n}};\n"
    return "\n".join(out) + "\n", vs


def outputs(header: str, tables: dict[str, list[Export]],
            procs: list[tuple[str, int, str, str]]) -> dict[Path, str]:
    """Path -> text of every generated C file and version script."""
    out = {}
    for lib in ("cuda", "cudart"):
        c, vs = generate(lib, header, tables[lib], procs)
        out[CSRC / f"gen_lib{lib}.c"] = c
        out[CSRC / f"lib{lib}.map"] = vs
    return out
