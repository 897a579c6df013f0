// Constructs the CPU backend refuses (reported with their lines, never run).
#include <cstdio>
__global__ void child(int* x) { x[0] = 1; }
__global__ void parent(int* x) {
    unsigned lane;
    asm("bfind.u32 %0, %1;" : "=r"(lane) : "r"(7u));  // PTX outside the subset cpu/ptx.py translates
    child<<<1, 1>>>(x);
}
int main() { int* d; cudaMalloc(&d, 4); parent<<<1, 1>>>(d); return 0; }
