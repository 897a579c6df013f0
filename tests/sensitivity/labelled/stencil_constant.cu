// 2D 3x3 convolution with the filter in constant memory and an early-return guard.
#define R 1
__constant__ float d_filter[(2 * R + 1) * (2 * R + 1)];

__global__ void conv3x3(const float* in, float* out, int width, int height) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col >= width || row >= height) return;

    float sum = 0.0f;
    for (int dy = -R; dy <= R; ++dy) {
        for (int dx = -R; dx <= R; ++dx) {
            int r = min(max(row + dy, 0), height - 1);
            int c = min(max(col + dx, 0), width - 1);
            sum += in[r * width + c] * d_filter[(dy + R) * (2 * R + 1) + (dx + R)];
        }
    }
    out[row * width + col] = sum;
}

void launch_conv3x3(const float* in, float* out, int width, int height) {
    dim3 threads(16, 16);
    dim3 blocks((width + threads.x - 1) / threads.x, (height + threads.y - 1) / threads.y);
    conv3x3<<<blocks, threads>>>(in, out, width, height);
}
