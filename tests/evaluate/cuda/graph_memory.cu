// Graph memory nodes on the CPU backend (tests/evaluate/test_cpu_graphs.py): allocations that
// exist only between their alloc node and their free, explicit and stream-captured.
#include <cstdio>

__global__ void fill(int* p, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v + i;
}

int main(int argc, char** argv) {
  const int n = 256;
  int h[n];
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);

  // captured: cudaMallocAsync, a kernel, a copy back, cudaFreeAsync
  int* p = nullptr;
  int v = 5;
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMallocAsync(&p, n * sizeof(int), s);
  fill<<<2, 128, 0, s>>>(p, v, n);
  cudaMemcpyAsync(h, p, sizeof h, cudaMemcpyDeviceToHost, s);
  cudaFreeAsync(p, s);
  cudaStreamEndCapture(s, &g);
  size_t count = 0;
  cudaGraphGetNodes(g, nullptr, &count);
  cudaGraphExec_t x;
  cudaGraphInstantiate(&x, g, 0);
  cudaGraphDestroy(g);  // the executable keeps the allocation's address
  h[0] = h[255] = -1;
  cudaError_t e1 = cudaGraphLaunch(x, s);
  int first = h[255];
  cudaError_t e2 = cudaGraphLaunch(x, s);  // freed inside the graph: can run again
  printf("captured nodes=%zu %s %s %d %d\n", count, cudaGetErrorName(e1), cudaGetErrorName(e2), first, h[0]);

  // explicit: the graph allocates but does not free; freed by cudaFree outside, relaunched
  cudaGraph_t eg;
  cudaGraphCreate(&eg, 0);
  cudaMemAllocNodeParams ap = {};
  ap.bytesize = n * sizeof(int);
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location.type = cudaMemLocationTypeDevice;
  cudaGraphNode_t alloc, k;
  cudaGraphAddMemAllocNode(&alloc, eg, nullptr, 0, &ap);
  int* q = (int*)ap.dptr;
  int w = 100, nn = n;
  void* args[] = {&q, &w, &nn};
  cudaKernelNodeParams kp = {};
  kp.func = (void*)fill; kp.gridDim = dim3(2); kp.blockDim = dim3(128); kp.kernelParams = args;
  cudaGraphAddKernelNode(&k, eg, &alloc, 1, &kp);
  cudaGraphExec_t ex;
  cudaGraphInstantiate(&ex, eg, 0);
  cudaGraphLaunch(ex, s);
  cudaMemcpy(h, q, sizeof h, cudaMemcpyDeviceToHost);  // still allocated after the launch
  cudaError_t again = cudaGraphLaunch(ex, s);           // its allocation was never freed
  cudaGetLastError();
  cudaError_t freed = cudaFree(q);
  cudaError_t twice = cudaFree(q);
  cudaGetLastError();
  cudaError_t relaunch = cudaGraphLaunch(ex, s);
  printf("explicit %d %s %s %s %s\n", h[3], cudaGetErrorName(again), cudaGetErrorName(freed), cudaGetErrorName(twice), cudaGetErrorName(relaunch));
  cudaFree(q);
  if (argc > 1) fill<<<1, 1>>>(q, 0, 1);  // after its free: not device memory any more
  cudaDeviceSynchronize();
  return 0;
}
