#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define checkCudaErrors(x) ((void)(x))
#define getLastCudaError(msg) ((void)(msg))
