/* A plain OpenCL host program, written against the Khronos headers and
 * linked with -lOpenCL only: it knows nothing of clsync. It runs the
 * workloads an OpenCL programmer's test suite would on the platform whose
 * name starts with argv[1] (any platform if none is given), checks each
 * against a sequential computation on the host, and prints one line per
 * workload: "PASS name", "FAIL name: why" or "SKIP name: why". The exit
 * status is the number of failures.
 *
 *   host [PLATFORM]            the workloads
 *   host [PLATFORM] --racy     one kernel with a data race (for checkers)
 *   host [PLATFORM] --events-only   the events workload alone (no kernel)
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static cl_context ctx;
static cl_command_queue q;
static cl_device_id dev;
static int failures;

#define CHECK(call)                                                          \
  do {                                                                       \
    cl_int e_ = (call);                                                      \
    if (e_ != CL_SUCCESS) {                                                  \
      fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #call, e_);    \
      return "OpenCL call failed";                                           \
    }                                                                        \
  } while (0)

static cl_kernel build(const char *src, const char *options, const char *name) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  if (err != CL_SUCCESS) return NULL;
  err = clBuildProgram(p, 1, &dev, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[8192] = "";
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    fprintf(stderr, "build of %s failed (%d):\n%s\n", name, err, log);
    clReleaseProgram(p);
    return NULL;
  }
  cl_kernel k = clCreateKernel(p, name, &err);
  clReleaseProgram(p); /* the kernel keeps it */
  return err == CL_SUCCESS ? k : NULL;
}

static cl_mem buffer(size_t bytes, void *init) {
  cl_int err;
  cl_mem m = clCreateBuffer(ctx, init ? CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR : CL_MEM_READ_WRITE,
                            bytes, init, &err);
  return err == CL_SUCCESS ? m : NULL;
}

/* ---- reduction ------------------------------------------------------- */
static const char *reduce_src =
    "kernel void reduce(global const uint* in, global uint* partial, local uint* s) {\n"
    "  size_t l = get_local_id(0);\n"
    "  s[l] = in[get_global_id(0)];\n"
    "  for (size_t h = get_local_size(0) / 2; h > 0; h /= 2) {\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (l < h) s[l] += s[l + h];\n"
    "  }\n"
    "  if (l == 0) partial[get_group_id(0)] = s[0];\n"
    "}\n";

static const char *reduction(void) {
  enum { N = 1 << 16, L = 256, G = N / L };
  static cl_uint in[N], partial[G];
  cl_uint want = 0, got = 0;
  for (int i = 0; i < N; i++) want += in[i] = (cl_uint)(i * 2654435761u >> 20);
  cl_kernel k = build(reduce_src, "", "reduce");
  if (!k) return "build failed";
  cl_mem a = buffer(sizeof in, in), b = buffer(sizeof partial, NULL);
  size_t g = N, l = L;
  CHECK(clSetKernelArg(k, 0, sizeof a, &a));
  CHECK(clSetKernelArg(k, 1, sizeof b, &b));
  CHECK(clSetKernelArg(k, 2, L * sizeof(cl_uint), NULL));
  CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof partial, partial, 0, NULL, NULL));
  for (int i = 0; i < G; i++) got += partial[i];
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseKernel(k);
  return got == want ? NULL : "wrong sum";
}

/* ---- scan: group scans, a scan of the group sums, the offsets added --- */
static const char *scan_src =
    "kernel void scan_block(global int* data, global int* sums, local int* t) {\n"
    "  size_t l = get_local_id(0), n = get_local_size(0);\n"
    "  t[l] = data[get_global_id(0)];\n"
    "  for (size_t s = 1; s < n; s *= 2) {\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    int v = l >= s ? t[l - s] : 0;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    t[l] += v;\n"
    "  }\n"
    "  data[get_global_id(0)] = t[l];\n"
    "  if (l == n - 1) sums[get_group_id(0)] = t[l];\n"
    "}\n"
    "kernel void add_offsets(global int* data, global const int* scanned_sums) {\n"
    "  size_t g = get_group_id(0);\n"
    "  if (g > 0) data[get_global_id(0)] += scanned_sums[g - 1];\n"
    "}\n";

static const char *scan(void) {
  enum { N = 4096, L = 256, G = N / L };
  static int data[N], want[N];
  for (int i = 0; i < N; i++) data[i] = (i * 7919) % 13 - 6;
  for (int i = 0, acc = 0; i < N; i++) want[i] = acc += data[i];
  cl_kernel k = build(scan_src, "", "scan_block");
  cl_int err;
  cl_program p;
  CHECK(clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof p, &p, NULL));
  cl_kernel add = clCreateKernel(p, "add_offsets", &err);
  CHECK(err);
  cl_mem d = buffer(sizeof data, data), sums = buffer(G * sizeof(int), NULL), dummy = buffer(sizeof(int), NULL);
  size_t g = N, l = L, g2 = G, l2 = G;
  CHECK(clSetKernelArg(k, 0, sizeof d, &d));
  CHECK(clSetKernelArg(k, 1, sizeof sums, &sums));
  CHECK(clSetKernelArg(k, 2, L * sizeof(int), NULL));
  CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
  /* The same kernel scans the group sums in one group (the arguments are
   * captured at enqueue: setting them again is allowed at once). */
  CHECK(clSetKernelArg(k, 0, sizeof sums, &sums));
  CHECK(clSetKernelArg(k, 1, sizeof dummy, &dummy));
  CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g2, &l2, 0, NULL, NULL));
  CHECK(clSetKernelArg(add, 0, sizeof d, &d));
  CHECK(clSetKernelArg(add, 1, sizeof sums, &sums));
  cl_event done;
  CHECK(clEnqueueNDRangeKernel(q, add, 1, NULL, &g, &l, 0, NULL, &done));
  CHECK(clEnqueueReadBuffer(q, d, CL_FALSE, 0, sizeof data, data, 1, &done, NULL));
  CHECK(clFinish(q));
  clReleaseEvent(done);
  clReleaseMemObject(d);
  clReleaseMemObject(sums);
  clReleaseMemObject(dummy);
  clReleaseKernel(add);
  clReleaseKernel(k);
  return memcmp(data, want, sizeof want) ? "wrong prefix sums" : NULL;
}

/* ---- tiled SGEMM ---------------------------------------------------- */
static const char *sgemm_src =
    "#define TILE 16\n"
    "kernel void sgemm(global const float* a, global const float* b, global float* c, int n) {\n"
    "  local float ta[TILE][TILE], tb[TILE][TILE];\n"
    "  size_t tx = get_local_id(0), ty = get_local_id(1);\n"
    "  size_t col = get_global_id(0), row = get_global_id(1);\n"
    "  float acc = 0.0f;\n"
    "  for (int t = 0; t < n / TILE; t++) {\n"
    "    ta[ty][tx] = a[row * n + t * TILE + tx];\n"
    "    tb[ty][tx] = b[(t * TILE + ty) * n + col];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (int k = 0; k < TILE; k++) acc += ta[ty][k] * tb[k][tx];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  c[row * n + col] = acc;\n"
    "}\n";

static const char *sgemm(void) {
  enum { N = 64 };
  static float a[N * N], b[N * N], c[N * N];
  for (int i = 0; i < N * N; i++) {
    a[i] = (float)((i * 37) % 11) - 5.0f;
    b[i] = (float)((i * 53) % 7) - 3.0f;
  }
  cl_kernel k = build(sgemm_src, "", "sgemm");
  if (!k) return "build failed";
  cl_mem ma = buffer(sizeof a, a), mb = buffer(sizeof b, b), mc = buffer(sizeof c, NULL);
  int n = N;
  size_t g[2] = {N, N}, l[2] = {16, 16};
  CHECK(clSetKernelArg(k, 0, sizeof ma, &ma));
  CHECK(clSetKernelArg(k, 1, sizeof mb, &mb));
  CHECK(clSetKernelArg(k, 2, sizeof mc, &mc));
  CHECK(clSetKernelArg(k, 3, sizeof n, &n));
  CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, g, l, 0, NULL, NULL));
  /* Mapped, not read: the result through clEnqueueMapBuffer. */
  cl_int err;
  float *out = clEnqueueMapBuffer(q, mc, CL_TRUE, CL_MAP_READ, 0, sizeof c, 0, NULL, NULL, &err);
  CHECK(err);
  const char *why = NULL;
  for (int r = 0; r < N && !why; r++)
    for (int col = 0; col < N; col++) {
      float want = 0; /* small integers: exact in float */
      for (int i = 0; i < N; i++) want += a[r * N + i] * b[i * N + col];
      if (out[r * N + col] != want) { why = "wrong product"; break; }
    }
  CHECK(clEnqueueUnmapMemObject(q, mc, out, 0, NULL, NULL));
  CHECK(clFinish(q));
  clReleaseMemObject(ma);
  clReleaseMemObject(mb);
  clReleaseMemObject(mc);
  clReleaseKernel(k);
  return why;
}

/* ---- histograms: OpenCL 1.x atomics and C11 atomics ------------------- */
static const char *hist1_src =
    "kernel void hist(global const uchar* in, global uint* bins, int per_item) {\n"
    "  local uint lb[256];\n"
    "  size_t l = get_local_id(0);\n"
    "  for (size_t i = l; i < 256; i += get_local_size(0)) lb[i] = 0;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (int i = 0; i < per_item; i++) atomic_inc(&lb[in[get_global_id(0) * per_item + i]]);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (size_t i = l; i < 256; i += get_local_size(0)) if (lb[i]) atomic_add(&bins[i], lb[i]);\n"
    "}\n";

static const char *hist2_src =
    "kernel void hist(global const uchar* in, global atomic_uint* bins, int per_item) {\n"
    "  for (int i = 0; i < per_item; i++)\n"
    "    atomic_fetch_add_explicit(&bins[in[get_global_id(0) * per_item + i]], 1u,\n"
    "                              memory_order_relaxed, memory_scope_device);\n"
    "}\n";

static const char *histogram(const char *src, const char *options) {
  enum { ITEMS = 2048, PER = 16, N = ITEMS * PER };
  static unsigned char in[N];
  cl_uint want[256] = {0}, got[256];
  for (int i = 0; i < N; i++) want[in[i] = (unsigned char)((i * 2654435761u) >> 13)]++;
  cl_kernel k = build(src, options, "hist");
  if (!k) return "build failed";
  cl_mem a = buffer(sizeof in, in), b = buffer(sizeof got, NULL);
  cl_uint zero = 0;
  CHECK(clEnqueueFillBuffer(q, b, &zero, sizeof zero, 0, sizeof got, 0, NULL, NULL));
  int per = PER;
  size_t g = ITEMS, l = 128;
  CHECK(clSetKernelArg(k, 0, sizeof a, &a));
  CHECK(clSetKernelArg(k, 1, sizeof b, &b));
  CHECK(clSetKernelArg(k, 2, sizeof per, &per));
  CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseKernel(k);
  return memcmp(got, want, sizeof want) ? "wrong counts" : NULL;
}

/* ---- message passing between two work-groups ---------------------------
 * Work-group 0 writes a message and raises a flag; work-group 1 waits for
 * the flag and copies the message out. C11 release/acquire at device scope
 * makes the message visible. The 1.x form (fences around 1.x atomics)
 * works on CPUs but is a data race by the specification (the 1.x fences
 * are atomic_work_item_fence at memory_scope_work_group), so a checker reports
 * it. */
static const char *mp_c11_src =
    "kernel void mp(global int* msg, global atomic_int* flag, global int* out) {\n"
    "  if (get_group_id(0) == 0) {\n"
    "    for (int i = 0; i < 64; i++) msg[i] = 3 * i + 1;\n"
    "    atomic_store_explicit(flag, 1, memory_order_release, memory_scope_device);\n"
    "  } else {\n"
    "    while (atomic_load_explicit(flag, memory_order_acquire, memory_scope_device) == 0) {}\n"
    "    for (int i = 0; i < 64; i++) out[i] = msg[i];\n"
    "  }\n"
    "}\n";

static const char *mp_1x_src =
    "kernel void mp_1x(global int* msg, volatile global int* flag, global int* out) {\n"
    "  if (get_group_id(0) == 0) {\n"
    "    for (int i = 0; i < 64; i++) msg[i] = 3 * i + 1;\n"
    "    write_mem_fence(CLK_GLOBAL_MEM_FENCE);\n"
    "    atomic_xchg(flag, 1);\n"
    "  } else {\n"
    "    while (atomic_or(flag, 0) == 0) {}\n"
    "    read_mem_fence(CLK_GLOBAL_MEM_FENCE);\n"
    "    for (int i = 0; i < 64; i++) out[i] = msg[i];\n"
    "  }\n"
    "}\n";

static const char *message_passing(const char *src, const char *options, const char *name) {
  int out[64];
  cl_kernel k = build(src, options, name);
  if (!k) return "build failed";
  cl_mem msg = buffer(sizeof out, NULL), flag = buffer(sizeof(int), NULL), o = buffer(sizeof out, NULL);
  int zero = 0;
  CHECK(clEnqueueWriteBuffer(q, flag, CL_TRUE, 0, sizeof zero, &zero, 0, NULL, NULL));
  size_t g = 2, l = 1;
  CHECK(clSetKernelArg(k, 0, sizeof msg, &msg));
  CHECK(clSetKernelArg(k, 1, sizeof flag, &flag));
  CHECK(clSetKernelArg(k, 2, sizeof o, &o));
  CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(q, o, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  clReleaseMemObject(msg);
  clReleaseMemObject(flag);
  clReleaseMemObject(o);
  clReleaseKernel(k);
  for (int i = 0; i < 64; i++)
    if (out[i] != 3 * i + 1) return "stale message";
  return NULL;
}

/* ---- sub-groups (cl_khr_subgroups / OpenCL C 3.0 with __opencl_c_subgroups) */
static const char *sg_src =
    "kernel void sg(global const int* in, global int* sum, global int* scan, global int* size,\n"
    "               global int* id) {\n"
    "  size_t g = get_global_id(0);\n"
    "  sum[g] = sub_group_reduce_add(in[g]);\n"
    "  scan[g] = sub_group_scan_inclusive_add(in[g]);\n"
    "  size[g] = (int)get_sub_group_size();\n"
    "  id[g] = (int)(get_group_id(0) * 1000 + get_sub_group_id() * 100 + get_sub_group_local_id());\n"
    "}\n";

static const char *subgroups(void) {
  char ext[4096] = "";
  clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL);
  if (!strstr(ext, "cl_khr_subgroups")) return "SKIP";
  enum { N = 512, L = 128 };
  static int in[N], sum[N], scn[N], size[N], id[N];
  for (int i = 0; i < N; i++) in[i] = (i * 31) % 17;
  cl_kernel k = build(sg_src, "-cl-std=CL3.0", "sg");
  if (!k) return "build failed";
  size_t local = L, sgmax;
  CHECK(clGetKernelSubGroupInfo(k, dev, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, sizeof local, &local,
                                sizeof sgmax, &sgmax, NULL));
  cl_mem m[5] = {buffer(sizeof in, in), buffer(sizeof sum, NULL), buffer(sizeof scn, NULL),
                 buffer(sizeof size, NULL), buffer(sizeof id, NULL)};
  for (int i = 0; i < 5; i++) CHECK(clSetKernelArg(k, i, sizeof m[i], &m[i]));
  size_t g = N, l = L;
  CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(q, m[1], CL_TRUE, 0, sizeof sum, sum, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(q, m[2], CL_TRUE, 0, sizeof scn, scn, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(q, m[3], CL_TRUE, 0, sizeof size, size, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(q, m[4], CL_TRUE, 0, sizeof id, id, 0, NULL, NULL));
  for (int i = 0; i < 5; i++) clReleaseMemObject(m[i]);
  clReleaseKernel(k);
  /* Sub-groups are runs of consecutive work-items: check each against its
   * own members. */
  for (int i = 0; i < N;) {
    int n = size[i], lane0 = id[i] % 100;
    if (n < 1 || (size_t)n > sgmax || lane0 != 0) return "bad sub-group layout";
    int total = 0;
    for (int j = 0; j < n; j++) total += in[i + j];
    for (int j = 0, acc = 0; j < n; j++) {
      acc += in[i + j];
      if (sum[i + j] != total) return "wrong sub_group_reduce_add";
      if (scn[i + j] != acc) return "wrong sub_group_scan_inclusive_add";
      if (id[i + j] != id[i] + j) return "bad sub-group local ids";
    }
    i += n;
  }
  return NULL;
}

/* ---- events and profiling ------------------------------------------- */
static const char *events(void) {
  cl_int err;
  cl_command_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  cl_command_queue pq = clCreateCommandQueueWithProperties(ctx, dev, props, &err);
  CHECK(err);
  cl_event user = clCreateUserEvent(ctx, &err);
  CHECK(err);
  int src[256], dst[256];
  for (int i = 0; i < 256; i++) src[i] = i * i;
  cl_mem a = buffer(sizeof src, NULL);
  cl_event w, r;
  /* The write waits for the user event: nothing happens until it is set. */
  CHECK(clEnqueueWriteBuffer(pq, a, CL_FALSE, 0, sizeof src, src, 1, &user, &w));
  CHECK(clEnqueueReadBuffer(pq, a, CL_FALSE, 0, sizeof dst, dst, 0, NULL, &r));
  cl_int status;
  CHECK(clGetEventInfo(w, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
  if (status == CL_COMPLETE) return "ran before its wait list";
  CHECK(clSetUserEventStatus(user, CL_COMPLETE));
  CHECK(clWaitForEvents(1, &r));
  cl_ulong start, end;
  CHECK(clGetEventProfilingInfo(r, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL));
  CHECK(clGetEventProfilingInfo(r, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
  const char *why = memcmp(src, dst, sizeof src) ? "wrong data" : end < start ? "time runs backwards" : NULL;
  clReleaseEvent(w);
  clReleaseEvent(r);
  clReleaseEvent(user);
  clReleaseMemObject(a);
  clReleaseCommandQueue(pq);
  return why;
}

/* ---- images and samplers ---------------------------------------------
 * A 2D RGBA8 image read through a sampler (clamped: the column past the
 * right edge repeats the edge) and written, inverted and shifted, to
 * another image; read back, and a filled image copied to a buffer. */
static const char *img_src =
    "constant sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;\n"
    "kernel void invert(read_only image2d_t in, write_only image2d_t out, sampler_t runtime) {\n"
    "  int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
    "  float4 a = read_imagef(in, s, p + (int2)(1, 0));\n"
    "  float4 b = read_imagef(in, runtime, p);\n"
    "  write_imagef(out, p, (float4)(1.0f) - a + 0.0f * b);\n"
    "}\n";

static const char *images(void) {
  cl_bool has = CL_FALSE;
  clGetDeviceInfo(dev, CL_DEVICE_IMAGE_SUPPORT, sizeof has, &has, NULL);
  if (!has) return "SKIP";
  enum { W = 16, H = 8 };
  static unsigned char in[H][W][4], out[H][W][4];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int c = 0; c < 4; c++) in[y][x][c] = (unsigned char)(x * 13 + y * 7 + c * 50);
  cl_image_format f = {CL_RGBA, CL_UNORM_INT8};
  cl_uint nf = 0;
  CHECK(clGetSupportedImageFormats(ctx, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0, NULL, &nf));
  if (nf == 0) return "no image formats";
  cl_image_desc d = {0};
  d.image_type = CL_MEM_OBJECT_IMAGE2D;
  d.image_width = W;
  d.image_height = H;
  cl_int err;
  cl_mem a = clCreateImage(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &f, &d, in, &err);
  CHECK(err);
  cl_mem b = clCreateImage(ctx, CL_MEM_WRITE_ONLY, &f, &d, NULL, &err);
  CHECK(err);
  cl_sampler_properties sp[] = {CL_SAMPLER_NORMALIZED_COORDS, CL_FALSE, CL_SAMPLER_ADDRESSING_MODE,
                                CL_ADDRESS_CLAMP_TO_EDGE, CL_SAMPLER_FILTER_MODE, CL_FILTER_NEAREST, 0};
  cl_sampler smp = clCreateSamplerWithProperties(ctx, sp, &err);
  CHECK(err);
  cl_kernel k = build(img_src, "", "invert");
  if (!k) return "build failed";
  CHECK(clSetKernelArg(k, 0, sizeof a, &a));
  CHECK(clSetKernelArg(k, 1, sizeof b, &b));
  CHECK(clSetKernelArg(k, 2, sizeof smp, &smp));
  size_t g[2] = {W, H}, origin[3] = {0, 0, 0}, region[3] = {W, H, 1};
  CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, g, NULL, 0, NULL, NULL));
  CHECK(clEnqueueReadImage(q, b, CL_TRUE, origin, region, 0, 0, out, 0, NULL, NULL));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int c = 0; c < 4; c++)
        if (out[y][x][c] != 255 - in[y][x + 1 < W ? x + 1 : W - 1][c]) return "wrong texels";
  /* A fill of a region, copied out to a buffer. (0.2 is 51 in eight bits,
   * within a rounding error: PoCL 3.1 truncates a fill color where the
   * specification rounds it to the nearest, and 0.25, 63.75, would be 63
   * there and 64 here.) */
  float color[4] = {1.0f, 0.0f, 0.2f, 1.0f};
  size_t fo[3] = {2, 1, 0}, fr[3] = {4, 3, 1};
  CHECK(clEnqueueFillImage(q, b, color, fo, fr, 0, NULL, NULL));
  cl_mem buf = buffer(4 * 4 * 3, NULL);
  CHECK(clEnqueueCopyImageToBuffer(q, b, buf, fo, fr, 0, 0, NULL, NULL));
  unsigned char filled[3][4][4];
  CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof filled, filled, 0, NULL, NULL));
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 4; x++)
      if (filled[y][x][0] != 255 || filled[y][x][1] != 0 || filled[y][x][2] != 51 || filled[y][x][3] != 255)
        return "wrong fill";
  clReleaseMemObject(buf);
  clReleaseSampler(smp);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseKernel(k);
  return NULL;
}

/* ---- images made from buffers -------------------------------------------
 * image1d_buffer_t: a kernel reads RGBA8 texels from an image over one
 * buffer and writes them, doubled with saturation, to an image over
 * another; the second buffer holds what was written, the first buffer's
 * later write is what the image reads, and the image names its buffer.
 * (PoCL 3.1 has no get_image_width for image1d_buffer_t: a kernel that
 * calls it fails to load there.) */
static const char *ib_src =
    "kernel void twice(read_only image1d_buffer_t in, write_only image1d_buffer_t out) {\n"
    "  int i = get_global_id(0);\n"
    "  write_imagef(out, i, read_imagef(in, i) * 2.0f);\n"
    "}\n";

static const char *image_buffers(void) {
  cl_bool has = CL_FALSE;
  clGetDeviceInfo(dev, CL_DEVICE_IMAGE_SUPPORT, sizeof has, &has, NULL);
  if (!has) return "SKIP";
  enum { N = 64 };
  static unsigned char in[N][4], out[N][4];
  for (int i = 0; i < N; i++)
    for (int c = 0; c < 4; c++) in[i][c] = (unsigned char)(i * 5 + c * 60);
  cl_mem a = buffer(sizeof in + 16, in), b = buffer(sizeof out, NULL);
  if (!a || !b) return "buffers";
  cl_image_format f = {CL_RGBA, CL_UNORM_INT8};
  cl_image_desc d = {0};
  d.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
  d.image_width = N;
  d.buffer = a;
  cl_int err;
  cl_mem ia = clCreateImage(ctx, CL_MEM_READ_ONLY, &f, &d, NULL, &err);
  CHECK(err);
  d.buffer = b;
  cl_mem ib = clCreateImage(ctx, 0, &f, &d, NULL, &err);
  CHECK(err);
  cl_mem named = NULL;
  CHECK(clGetImageInfo(ib, CL_IMAGE_BUFFER, sizeof named, &named, NULL));
  if (named != b) return "CL_IMAGE_BUFFER";
  size_t width = 0;
  CHECK(clGetImageInfo(ia, CL_IMAGE_WIDTH, sizeof width, &width, NULL));
  if (width != N) return "CL_IMAGE_WIDTH";
  cl_kernel k = build(ib_src, "-cl-std=CL1.2", "twice");
  if (!k) return "build failed";
  CHECK(clSetKernelArg(k, 0, sizeof ia, &ia));
  CHECK(clSetKernelArg(k, 1, sizeof ib, &ib));
  size_t g = N;
  for (int round = 0; round < 2; round++) {
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    for (int i = 0; i < N; i++)
      for (int c = 0; c < 4; c++) {
        int want = 2 * in[i][c];
        if (out[i][c] != (want > 255 ? 255 : want)) return round ? "wrong texels after a buffer write" : "wrong texels";
      }
    /* The buffer's write is the image's next read. */
    for (int i = 0; i < N; i++) in[i][1] = (unsigned char)(i);
    CHECK(clEnqueueWriteBuffer(q, a, CL_TRUE, 0, sizeof in, in, 0, NULL, NULL));
  }
  clReleaseMemObject(ia);
  clReleaseMemObject(ib);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseKernel(k);
  return NULL;
}

/* ---- shared virtual memory ----------------------------------------------
 * Fine-grain SVM with atomics: the host links lists in SVM memory (the
 * pointers are the host's) that the kernel walks; then host and kernel
 * pass a message through SVM with C11 atomics on both sides, release and
 * acquire at memory_scope_all_svm_devices, while the kernel runs. */
static const char *svm_src =
    "typedef struct node { int value; global struct node* next; } node;\n"
    "kernel void walk(global node* global* heads, global int* sums) {\n"
    "  int s = 0;\n"
    "  for (global node* n = heads[get_global_id(0)]; n; n = n->next) s += n->value;\n"
    "  sums[get_global_id(0)] = s;\n"
    "}\n"
    "kernel void echo(global atomic_int* flag, global int* data, global atomic_int* answer) {\n"
    "  while (atomic_load_explicit(flag, memory_order_acquire, memory_scope_all_svm_devices) == 0) {}\n"
    "  atomic_store_explicit(answer, data[0] + data[1], memory_order_release, memory_scope_all_svm_devices);\n"
    "}\n";

typedef struct node { int value; struct node *next; } node;

static const char *svm(void) {
  cl_device_svm_capabilities caps = 0;
  clGetDeviceInfo(dev, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL);
  if (!(caps & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) || !(caps & CL_DEVICE_SVM_ATOMICS)) return "SKIP";
  enum { LISTS = 8, LEN = 20 };
  cl_svm_mem_flags f = CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS;
  node *nodes = clSVMAlloc(ctx, f, LISTS * LEN * sizeof(node), 0);
  node **heads = clSVMAlloc(ctx, f, LISTS * sizeof(node *), 0);
  int *sums = clSVMAlloc(ctx, f, LISTS * sizeof(int), 0);
  if (!nodes || !heads || !sums) return "clSVMAlloc failed";
  int want[LISTS] = {0};
  for (int l = 0; l < LISTS; l++) {
    heads[l] = NULL;
    for (int i = 0; i < LEN; i++) {
      node *n = &nodes[l * LEN + i];
      n->value = l * 100 + i * i;
      n->next = heads[l];
      heads[l] = n;
      want[l] += n->value;
    }
  }
  cl_kernel walk = build(svm_src, "-cl-std=CL2.0", "walk");
  if (!walk) return "build failed";
  CHECK(clSetKernelArgSVMPointer(walk, 0, heads));
  CHECK(clSetKernelArgSVMPointer(walk, 1, sums));
  size_t g = LISTS;
  CHECK(clEnqueueNDRangeKernel(q, walk, 1, NULL, &g, NULL, 0, NULL, NULL));
  CHECK(clFinish(q));
  for (int l = 0; l < LISTS; l++)
    if (sums[l] != want[l]) return "wrong list sums";

  /* The message while the kernel runs. */
  atomic_int *flag = clSVMAlloc(ctx, f, 2 * sizeof(atomic_int), 0);
  int *data = clSVMAlloc(ctx, f, 2 * sizeof(int), 0);
  atomic_int *answer = flag + 1;
  atomic_init(flag, 0);
  atomic_init(answer, 0);
  cl_program p;
  CHECK(clGetKernelInfo(walk, CL_KERNEL_PROGRAM, sizeof p, &p, NULL));
  cl_int err;
  cl_kernel echo = clCreateKernel(p, "echo", &err);
  CHECK(err);
  CHECK(clSetKernelArgSVMPointer(echo, 0, flag));
  CHECK(clSetKernelArgSVMPointer(echo, 1, data));
  CHECK(clSetKernelArgSVMPointer(echo, 2, answer));
  size_t one = 1;
  CHECK(clEnqueueNDRangeKernel(q, echo, 1, NULL, &one, NULL, 0, NULL, NULL));
  CHECK(clFlush(q));
  data[0] = 40;
  data[1] = 2;
  atomic_store_explicit(flag, 1, memory_order_release);
  const char *why = "no answer within 20 s";
  time_t start = time(NULL);
  while (time(NULL) - start < 20) {
    int a = atomic_load_explicit(answer, memory_order_acquire);
    if (a != 0) {
      why = a == 42 ? NULL : "wrong answer";
      break;
    }
  }
  CHECK(clFinish(q));
  clReleaseKernel(echo);
  clReleaseKernel(walk);
  clSVMFree(ctx, nodes);
  clSVMFree(ctx, heads);
  clSVMFree(ctx, sums);
  clSVMFree(ctx, flag);
  clSVMFree(ctx, data);
  return why;
}

/* ---- a racy kernel ---------------------------------------------------- */
static const char *racy_src =
    "kernel void racy(global int* counter) {\n"
    "  counter[0] += 1;\n"
    "}\n";

static const char *racy(void) {
  cl_kernel k = build(racy_src, "", "racy");
  if (!k) return "build failed";
  cl_mem c = buffer(sizeof(int), NULL);
  size_t g = 64, l = 64;
  CHECK(clSetKernelArg(k, 0, sizeof c, &c));
  CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
  CHECK(clFinish(q));
  clReleaseMemObject(c);
  clReleaseKernel(k);
  return NULL;
}

static void report(const char *name, const char *why) {
  if (!why) printf("PASS %s\n", name);
  else if (!strcmp(why, "SKIP")) printf("SKIP %s: not supported by the device\n", name);
  else {
    printf("FAIL %s: %s\n", name, why);
    failures++;
  }
  fflush(stdout);
}

int main(int argc, char **argv) {
  const char *want = argc > 1 && argv[1][0] != '-' ? argv[1] : "";
  int racy_only = argc > 1 && !strcmp(argv[argc - 1], "--racy");
  int events_only = argc > 1 && !strcmp(argv[argc - 1], "--events-only");
  cl_platform_id ps[16];
  cl_uint np = 0;
  if (clGetPlatformIDs(16, ps, &np) != CL_SUCCESS || np == 0) {
    printf("FAIL platform: no OpenCL platform\n");
    return 1;
  }
  cl_platform_id p = NULL;
  for (cl_uint i = 0; i < np && i < 16; i++) {
    char name[256] = "";
    clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
    if (!strncmp(name, want, strlen(want))) { p = ps[i]; break; }
  }
  if (!p) {
    printf("FAIL platform: none named %s\n", want);
    return 1;
  }
  cl_int err;
  if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) {
    printf("FAIL device: none\n");
    return 1;
  }
  cl_context_properties cp[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)p, 0};
  ctx = clCreateContext(cp, 1, &dev, NULL, NULL, &err);
  if (err != CL_SUCCESS) {
    printf("FAIL context: %d\n", err);
    return 1;
  }
  q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
  if (err != CL_SUCCESS) {
    printf("FAIL queue: %d\n", err);
    return 1;
  }
  if (racy_only) {
    report("racy", racy());
  } else if (events_only) {
    report("events", events());
  } else {
    report("reduction", reduction());
    report("scan", scan());
    report("sgemm", sgemm());
    report("histogram-1.x", histogram(hist1_src, ""));
    report("histogram-c11", histogram(hist2_src, "-cl-std=CL3.0"));
    report("message-passing-c11", message_passing(mp_c11_src, "-cl-std=CL3.0", "mp"));
    report("message-passing-1.x", message_passing(mp_1x_src, "", "mp_1x"));
    report("sub-groups", subgroups());
    report("events", events());
    report("images", images());
    report("image1d-buffer", image_buffers());
    report("svm", svm());
  }
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return failures;
}
