// Stream capture and explicit graphs on the CPU backend (tests/evaluate/test_cpu_graphs.py).
// Prints one line per check; the test compares them with hand-computed values.
#include <cstdio>
#include <vector>

__global__ void add(float* x, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += v;
}
__global__ void scale(float* x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}
// a block-wide sum through shared memory and barriers (so the kernel runs as fibers)
__global__ void block_sum(const float* x, float* out, int n) {
  __shared__ float s[64];
  s[threadIdx.x] = threadIdx.x < n ? x[threadIdx.x] : 0.0f;
  __syncthreads();
  for (int k = 32; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = s[0];
}

static int host_calls = 0;
void CUDART_CB count_call(void* p) { host_calls += *(int*)p; }

int main() {
  const int n = 8;
  float h[n], *d, *sum;
  cudaMalloc(&d, n * sizeof(float));
  cudaMalloc(&sum, sizeof(float));
  cudaStream_t s, side;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  cudaEvent_t fork, join;
  cudaEventCreate(&fork);
  cudaEventCreate(&join);
  for (int i = 0; i < n; ++i) h[i] = (float)i;

  // 1. capture: copy in, add 1 then scale by 2 (scale forked onto a side stream and joined
  // back), copy out, a host function; replayed 3 times, the copy-in resets x each time.
  float out[n];
  int one = 1;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaStreamCaptureStatus st;
  cudaStreamIsCapturing(s, &st);
  cudaMemcpyAsync(d, h, sizeof h, cudaMemcpyHostToDevice, s);
  add<<<1, n, 0, s>>>(d, 1.0f, n);
  cudaEventRecord(fork, s);
  cudaStreamWaitEvent(side, fork, 0);
  scale<<<2, 4, 0, side>>>(d, 2.0f, n);
  cudaEventRecord(join, side);
  cudaStreamWaitEvent(s, join, 0);
  cudaMemcpyAsync(out, d, sizeof out, cudaMemcpyDeviceToHost, s);
  cudaLaunchHostFunc(s, count_call, &one);
  cudaGraph_t g;
  cudaError_t e = cudaStreamEndCapture(s, &g);
  size_t nodes = 0;
  cudaGraphGetNodes(g, nullptr, &nodes);
  printf("capture %s status=%d nodes=%zu ran=%d\n", cudaGetErrorName(e), (int)st, nodes, host_calls);
  cudaGraphExec_t x;
  cudaGraphInstantiate(&x, g, 0);
  for (int r = 0; r < 3; ++r) cudaGraphLaunch(x, s);
  cudaStreamSynchronize(s);
  printf("replayed");
  for (int i = 0; i < n; ++i) printf(" %g", out[i]);
  printf(" host=%d\n", host_calls);

  // 2. explicit graph: memset sum, kernel node with void** params, memcpy node back; then an
  // exec update of the kernel's parameter (n = 4) and a clone.
  cudaGraph_t eg;
  cudaGraphCreate(&eg, 0);
  cudaGraphNode_t set, k, cp;
  cudaMemsetParams mp = {};
  mp.dst = sum; mp.value = 0; mp.elementSize = 4; mp.width = 1; mp.height = 1;
  cudaGraphAddMemsetNode(&set, eg, nullptr, 0, &mp);
  int count = n;
  void* args[] = {&d, &sum, &count};
  cudaKernelNodeParams kp = {};
  kp.func = (void*)block_sum; kp.gridDim = dim3(1); kp.blockDim = dim3(64); kp.kernelParams = args;
  cudaGraphAddKernelNode(&k, eg, &set, 1, &kp);
  float total = -1;
  cudaGraphAddMemcpyNode1D(&cp, eg, &k, 1, &total, sum, sizeof(float), cudaMemcpyDeviceToHost);
  cudaGraphExec_t ex;
  cudaGraphInstantiate(&ex, eg, 0);
  count = 100;  // the node keeps the value it was given
  cudaGraphLaunch(ex, s);
  printf("explicit sum=%g", total);
  int four = 4;
  void* args4[] = {&d, &sum, &four};
  kp.kernelParams = args4;
  cudaGraphExecKernelNodeSetParams(ex, k, &kp);
  cudaGraphLaunch(ex, s);
  printf(" updated=%g", total);
  cudaKernelNodeParams back = {};
  cudaGraphKernelNodeGetParams(k, &back);
  printf(" graph-keeps=%d", *(int*)back.kernelParams[2]);
  size_t roots = 0;
  cudaGraphGetRootNodes(eg, nullptr, &roots);
  cudaGraph_t copy;
  cudaGraphClone(&copy, eg);
  cudaGraphExec_t cx;
  cudaGraphInstantiate(&cx, copy, 0);
  total = -1;
  cudaGraphLaunch(cx, s);
  printf(" clone=%g roots=%zu\n", total, roots);

  // 3. errors: a null exec; a synchronous cudaMemcpy while a blocking stream captures (the
  // capture is invalidated); synchronizing a capturing stream.
  printf("null-exec %s\n", cudaGetErrorName(cudaGraphLaunch(nullptr, s)));
  cudaStream_t blocking;
  cudaStreamCreate(&blocking);
  cudaStreamBeginCapture(blocking, cudaStreamCaptureModeGlobal);
  e = cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost);
  cudaStreamIsCapturing(blocking, &st);
  cudaGraph_t bad = (cudaGraph_t)1;
  cudaError_t end = cudaStreamEndCapture(blocking, &bad);
  printf("sync-memcpy %s status=%d end=%s graph=%s\n", cudaGetErrorName(e), (int)st, cudaGetErrorName(end), bad ? "set" : "null");
  cudaGetLastError();
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  e = cudaStreamSynchronize(s);
  end = cudaStreamEndCapture(s, &bad);
  printf("sync-stream %s end=%s\n", cudaGetErrorName(e), cudaGetErrorName(end));
  cudaGetLastError();
  // an unjoined fork
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaEventRecord(fork, s);
  cudaStreamWaitEvent(side, fork, 0);
  add<<<1, n, 0, side>>>(d, 1.0f, n);
  end = cudaStreamEndCapture(s, &bad);
  printf("unjoined %s\n", cudaGetErrorName(end));
  cudaGetLastError();
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
