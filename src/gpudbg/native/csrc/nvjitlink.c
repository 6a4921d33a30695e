/* nvjitlink.c: gpudbg's libnvJitLink.so.13, a library that says "no usable
 * nvJitLink here" to the clients that look for one.
 *
 * Why: numba-cuda and cuda.core link kernels with nvJitLink when it is
 * usable, and nvJitLink turns their PTX into SASS for a real GPU (useless to
 * a PTX simulator) or, by numba's default, expects NVVM's LTO-IR (which only
 * NVIDIA's nvJitLink can compile). Both decide "usable" by one test: does the
 * library that cuda-pathfinder finds export nvJitLinkVersion (cuda.bindings'
 * `_inspect_function_pointer("__nvJitLinkVersion")`, i.e. nvJitLink >= 12.3).
 * cuda-pathfinder first asks whether a library with soname libnvJitLink.so.13
 * is already loaded (dlopen RTLD_NOLOAD) and takes it, ahead of any wheel.
 * So gpudbg loads this library first: it has that soname and version node,
 * and no nvJitLinkVersion (nor any other nvJitLink function), so numba compiles
 * without LTO and cuda.core's Linker falls back to the driver linker
 * (cuLinkCreate/AddData/Complete), which gpudbg's libcuda.so.1 implements on
 * PTX -- whether or not NVIDIA's nvidia-nvjitlink wheel is installed.
 *
 * It does not: link anything (a program calling nvJitLink itself gets
 * cuda.bindings' FunctionNotFoundError, or the loader's undefined-symbol
 * error for a native program), or need Python.
 */
__attribute__((visibility("default")))
const char gpudbg_nvjitlink_note[] =
    "gpudbg's libnvJitLink.so.13: nvJitLink is withheld under gpudbg so that clients link PTX "
    "through the driver API (cuLink*), which gpudbg's libcuda.so.1 implements";
