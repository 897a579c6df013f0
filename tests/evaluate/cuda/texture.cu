// Texture objects over a 4x4 float array (texel (x, y) = x + 10 y), a 2-texel uchar array read as
// normalized floats, pitch2D memory and linear memory: each line is one fetch, printed with %g;
// then surface writes and reads with the three boundary modes on a 3x2 int array.
#include <cstdio>
#include <cstring>

__global__ void fetch2d(cudaTextureObject_t t, const float* xy, float* out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, xy[2 * i], xy[2 * i + 1]);
}
__global__ void fetch1d(cudaTextureObject_t t, int* out) { out[threadIdx.x] = tex1Dfetch<int>(t, threadIdx.x * 2 - 1); }

__global__ void surfaces(cudaSurfaceObject_t s, int* out) {
  int x = threadIdx.x, y = threadIdx.y;
  surf2Dwrite(x + 10 * y, s, x * 4, y);  // x in bytes
  __syncthreads();
  if (x == 0 && y == 0) {
    out[0] = surf2Dread<int>(s, 2 * 4, 1);
    out[1] = surf2Dread<int>(s, 5 * 4, 1, cudaBoundaryModeClamp);
    out[2] = surf2Dread<int>(s, -4, 0, cudaBoundaryModeZero);
    surf2Dwrite(99, s, 3 * 4, 0, cudaBoundaryModeZero);  // outside: dropped
    out[3] = surf2Dread<int>(s, 2 * 4, 0);
  }
}

static cudaTextureObject_t make(cudaResourceDesc res, cudaTextureFilterMode f, cudaTextureAddressMode a, bool norm, cudaTextureReadMode rm = cudaReadModeElementType) {
  cudaTextureDesc d;
  memset(&d, 0, sizeof d);
  d.filterMode = f;
  d.addressMode[0] = d.addressMode[1] = a;
  d.normalizedCoords = norm;
  d.readMode = rm;
  d.borderColor[0] = 99.f;
  cudaTextureObject_t t = 0;
  cudaError_t e = cudaCreateTextureObject(&t, &res, &d, nullptr);
  if (e != cudaSuccess) printf("create: %s\n", cudaGetErrorName(e));
  return t;
}

static void run(const char* label, cudaTextureObject_t t, const float* xy, int n) {
  float *dxy, *dout, out[8];
  cudaMalloc(&dxy, 2 * n * sizeof(float));
  cudaMalloc(&dout, n * sizeof(float));
  cudaMemcpy(dxy, xy, 2 * n * sizeof(float), cudaMemcpyHostToDevice);
  fetch2d<<<1, 32>>>(t, dxy, dout, n);
  cudaMemcpy(out, dout, n * sizeof(float), cudaMemcpyDeviceToHost);
  printf("%s:", label);
  for (int i = 0; i < n; ++i) printf(" %g", out[i]);
  printf("\n");
  cudaFree(dxy);
  cudaFree(dout);
}

int main() {
  float img[16];
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) img[y * 4 + x] = x + 10.f * y;
  cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();
  cudaArray_t arr;
  cudaMallocArray(&arr, &fd, 4, 4);
  cudaMemcpy2DToArray(arr, 0, 0, img, 4 * sizeof(float), 4 * sizeof(float), 4, cudaMemcpyHostToDevice);
  cudaResourceDesc res;
  memset(&res, 0, sizeof res);
  res.resType = cudaResourceTypeArray;
  res.res.array.array = arr;

  const float point_xy[] = {1.5f, 2.5f, -3.f, 0.5f, 7.2f, 3.9f};
  run("point clamp", make(res, cudaFilterModePoint, cudaAddressModeClamp, false), point_xy, 3);
  const float linear_xy[] = {1.0f, 0.5f, 2.25f, 1.75f, 0.25f, 0.5f};
  run("linear clamp", make(res, cudaFilterModeLinear, cudaAddressModeClamp, false), linear_xy, 3);
  const float border_xy[] = {-0.5f, 1.5f, 3.5f, 3.5f};
  run("point border", make(res, cudaFilterModePoint, cudaAddressModeBorder, false), border_xy, 2);
  const float norm_xy[] = {1.125f, 0.375f, -0.125f, 0.125f};
  run("point wrap", make(res, cudaFilterModePoint, cudaAddressModeWrap, true), norm_xy, 2);
  run("point mirror", make(res, cudaFilterModePoint, cudaAddressModeMirror, true), norm_xy, 2);

  unsigned char bytes[2] = {51, 255};
  cudaChannelFormatDesc ud = cudaCreateChannelDesc<unsigned char>();
  cudaArray_t uarr;
  cudaMallocArray(&uarr, &ud, 2, 1);
  cudaMemcpyToArray(uarr, 0, 0, bytes, 2, cudaMemcpyHostToDevice);
  cudaResourceDesc ures = res;
  ures.res.array.array = uarr;
  const float u_xy[] = {0.5f, 0.5f, 1.5f, 0.5f, 1.0f, 0.5f};
  run("uchar normalized", make(ures, cudaFilterModeLinear, cudaAddressModeClamp, false, cudaReadModeNormalizedFloat), u_xy, 3);

  float* pitched;
  size_t pitch;
  cudaMallocPitch((void**)&pitched, &pitch, 4 * sizeof(float), 4);
  cudaMemcpy2D(pitched, pitch, img, 4 * sizeof(float), 4 * sizeof(float), 4, cudaMemcpyHostToDevice);
  cudaResourceDesc pres;
  memset(&pres, 0, sizeof pres);
  pres.resType = cudaResourceTypePitch2D;
  pres.res.pitch2D.devPtr = pitched;
  pres.res.pitch2D.desc = fd;
  pres.res.pitch2D.width = 4;
  pres.res.pitch2D.height = 4;
  pres.res.pitch2D.pitchInBytes = pitch;
  const float p_xy[] = {2.5f, 3.5f};
  run("pitch2D point", make(pres, cudaFilterModePoint, cudaAddressModeClamp, false), p_xy, 1);

  int vals[3] = {5, 6, 7}, *dv, *dout, out[3];
  cudaMalloc(&dv, sizeof vals);
  cudaMalloc(&dout, sizeof out);
  cudaMemcpy(dv, vals, sizeof vals, cudaMemcpyHostToDevice);
  cudaResourceDesc lres;
  memset(&lres, 0, sizeof lres);
  lres.resType = cudaResourceTypeLinear;
  lres.res.linear.devPtr = dv;
  lres.res.linear.desc = cudaCreateChannelDesc<int>();
  lres.res.linear.sizeInBytes = sizeof vals;
  cudaTextureObject_t lt = make(lres, cudaFilterModePoint, cudaAddressModeClamp, false);
  fetch1d<<<1, 3>>>(lt, dout);  // indices -1, 1, 3: clamped to 0 and 2
  cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost);
  printf("tex1Dfetch clamp: %d %d %d\n", out[0], out[1], out[2]);

  cudaChannelFormatDesc id = cudaCreateChannelDesc<int>();
  cudaArray_t sarr;
  cudaMallocArray(&sarr, &id, 3, 2, cudaArraySurfaceLoadStore);
  cudaResourceDesc sres;
  memset(&sres, 0, sizeof sres);
  sres.resType = cudaResourceTypeArray;
  sres.res.array.array = sarr;
  cudaSurfaceObject_t so = 0;
  cudaCreateSurfaceObject(&so, &sres);
  int *dsout, sout[4], back[6];
  cudaMalloc(&dsout, sizeof sout);
  surfaces<<<1, dim3(3, 2)>>>(so, dsout);
  cudaMemcpy(sout, dsout, sizeof sout, cudaMemcpyDeviceToHost);
  cudaMemcpy2DFromArray(back, 3 * sizeof(int), sarr, 0, 0, 3 * sizeof(int), 2, cudaMemcpyDeviceToHost);
  printf("surface: %d %d %d %d | %d %d %d %d %d %d\n", sout[0], sout[1], sout[2], sout[3], back[0], back[1], back[2], back[3], back[4], back[5]);
  cudaArray_t plain;
  cudaMallocArray(&plain, &id, 3, 2);
  sres.res.array.array = plain;
  printf("surface over an array without cudaArraySurfaceLoadStore: %s\n", cudaGetErrorName(cudaCreateSurfaceObject(&so, &sres)));

  cudaDestroyTextureObject(lt);
  fetch1d<<<1, 1>>>(lt, dout);  // a destroyed texture object: a device error
  cudaDeviceSynchronize();
  printf("unreachable\n");
  return 0;
}
