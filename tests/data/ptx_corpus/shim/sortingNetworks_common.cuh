#pragma once
#define UMAD(a, b, c) (__umul24((a), (b)) + (c))
inline __device__ void Comparator(uint &keyA, uint &valA, uint &keyB, uint &valB, uint dir) {
  uint t;
  if ((keyA > keyB) == dir) { t = keyA; keyA = keyB; keyB = t; t = valA; valA = valB; valB = t; }
}
